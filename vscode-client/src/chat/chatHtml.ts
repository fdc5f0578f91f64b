// The chat webview's document. Pure (no vscode import): the panel benchmark loads it in a plain browser.

const PROMPT_PLACEHOLDER =
  'Ask Shiro… (Enter to send, Shift+Enter for a new line, / for commands, @ to add context, Esc to stop)';

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
  <header id="bar" class="bar">
    <button type="button" id="model" class="bar-button" title="Model (click to change)">model</button>
    <button type="button" id="agent" class="bar-button" title="Agent variant (click to change)">agent</button>
  </header>
  <section id="welcome" class="welcome" hidden aria-label="Set up Shiro">
    <div class="welcome-title">Set up Shiro</div>
    <p>Shiro talks to any OpenAI-compatible endpoint: OpenAI, OpenRouter, or a local server
      (Ollama, LM Studio, llama.cpp, vLLM; a local one needs no key).</p>
    <label for="setup-base-url">Base URL</label>
    <input id="setup-base-url" type="text" placeholder="empty: OpenAI; local: http://127.0.0.1:11434/v1"
      spellcheck="false">
    <label for="setup-model">Model</label>
    <input id="setup-model" type="text" placeholder="e.g. gpt-5, qwen3:8b" spellcheck="false">
    <div class="welcome-buttons">
      <button type="button" id="setup-key" class="secondary">Set API key…</button>
      <button type="button" id="setup-detect" class="secondary"
        title="Look for Ollama, LM Studio, llama.cpp and vLLM on this machine">Find a local server…</button>
      <button type="button" id="setup-test">Save and test</button>
    </div>
    <div id="setup-result" class="setup-result" role="status"></div>
  </section>
  <section id="todos" class="todos" hidden></section>
  <main id="transcript" class="transcript" aria-live="polite"></main>
  <button type="button" id="latest" class="jump-latest" hidden
    title="Scroll to the latest message">\u2193 Jump to latest</button>
  <section id="queue" class="queue" hidden></section>
  <section id="command-inputs" class="command-inputs" hidden aria-label="Command inputs"></section>
  <form id="composer" class="composer">
    <div id="chips" class="chips" hidden></div>
    <div id="suggest" class="suggest" role="listbox" aria-label="Suggestions" hidden></div>
    <textarea id="prompt" rows="3" aria-label="Prompt"
      placeholder="${PROMPT_PLACEHOLDER}"></textarea>
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
