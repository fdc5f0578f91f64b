// The chat webview's document. Pure (no vscode import): the panel benchmark loads it in a plain browser.

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
