import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { ChatController } from './controller';
import type { WebviewMessage } from './webviewProtocol';

export const CHAT_VIEW_ID = 'shiro.chatView';

/** A CSP nonce from the OS's secure random source (Math.random is predictable). */
export function makeNonce(): string {
  return randomBytes(16).toString('hex');
}

/** Strict CSP: no inline script, only our nonce'd bundle; styles from our css; images from the webview's own origin. */
export function chatHtml(cspSource: string, nonce: string, scriptUri: string, styleUri: string): string {
  const csp = [
    "default-src 'none'",
    `style-src ${cspSource}`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${styleUri}">
<title>Shiro</title></head>
<body>
<div id="app">
  <section id="todos" class="todos" hidden></section>
  <main id="transcript" class="transcript" aria-live="polite"></main>
  <section id="queue" class="queue" hidden></section>
  <form id="composer" class="composer">
    <textarea id="prompt" rows="3" placeholder="Ask Shiro… (Enter to send, Shift+Enter for a new line, / for commands, Esc to stop)" aria-label="Prompt"></textarea>
    <div class="composer-actions">
      <span id="status" class="status"></span>
      <button type="button" id="stop" class="secondary" hidden title="Stop (Esc)">Stop</button>
      <button type="submit" id="send">Send</button>
    </div>
  </form>
</div>
<script nonce="${nonce}" src="${scriptUri}"></script>
</body></html>`;
}

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;

  constructor(private readonly extensionUri: vscode.Uri, private readonly controller: ChatController) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.html = chatHtml(
      view.webview.cspSource, makeNonce(),
      view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'chat.css')).toString(),
    );
    this.controller.attach(m => { void view.webview.postMessage(m); });
    view.webview.onDidReceiveMessage((m: WebviewMessage) => { void this.controller.handleMessage(m); });
    view.onDidDispose(() => { if (this.view === view) { this.view = undefined; this.controller.detach(); } });
  }

  get visible(): boolean { return this.view?.visible ?? false; }

  async reveal(): Promise<void> {
    if (this.view) this.view.show(true);
    else await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  }
}
