import * as vscode from 'vscode';
import type { ContextMeter, SessionInfo } from '../shared/protocol';
import { meterView } from './meter';

/** The context meter in the status bar: the server's state until a reading arrives, then the last reading. */
export class MeterItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('shiro.contextMeter', vscode.StatusBarAlignment.Right, 100);
  last: ContextMeter | undefined;

  constructor(private readonly session: () => SessionInfo | undefined) {
    this.item.name = 'Shiro context';
    this.item.text = '$(sync~spin) Shiro';
    this.item.tooltip = 'Shiro: starting the language server…';
    this.item.command = 'shiro.meterClicked';
    this.item.show();
  }

  render(m: ContextMeter): void {
    this.last = m;
    const session = this.session();
    const view = meterView(m, session?.costUsd, session?.messageCount);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.background ? new vscode.ThemeColor(view.background) : undefined;
  }

  /** The session changed (its cost or message count): the last reading again. */
  refresh(): void {
    if (this.last) this.render(this.last);
  }

  serverRunning(): void {
    this.item.text = '$(pulse) Shiro';
    this.item.tooltip = 'Shiro: ready. Click to open the chat.';
    this.item.backgroundColor = undefined;
  }

  serverStopped(): void {
    this.item.text = '$(error) Shiro';
    this.item.tooltip = 'Shiro: the language server is not running. Click for the log.';
    this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
  }

  dispose(): void {
    this.item.dispose();
  }
}
