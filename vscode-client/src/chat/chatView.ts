import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { ChatController } from './controller';
import { chatHtml } from './chatHtml';
import type { WebviewMessage } from '../shared/webviewProtocol';

export { chatHtml };

export const CHAT_VIEW_ID = 'shiro.chatView';

/** A CSP nonce from the OS's secure random source (Math.random is predictable). */
export function makeNonce(): string {
  return randomBytes(16).toString('hex');
}

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ChatController,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.html = chatHtml(
      view.webview.cspSource,
      makeNonce(),
      view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'chat.css')).toString(),
    );
    this.controller.attach(m => {
      void view.webview.postMessage(m);
    });
    view.webview.onDidReceiveMessage((m: WebviewMessage) => {
      void this.controller.handleMessage(m);
    });
    view.onDidDispose(() => {
      if (this.view === view) {
        this.view = undefined;
        this.controller.detach();
      }
    });
  }

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /** Show the panel; `focus` also moves the keyboard into it (the webview then focuses its prompt). */
  async reveal(focus = false): Promise<void> {
    if (this.view && !focus) this.view.show(true);
    else await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  }
}
