// The chat panel in a real browser (headless Chromium through playwright-core): the extension's own
// webview bundle, stylesheet and document (src/chat/chatHtml.ts, same CSP) with the host replaced by a stub
// that answers `ready` with the state the extension host would send. Prints one JSON object.
//
//   node bench/panel.mjs TOOLS_NODE_MODULES CHROMIUM
//
// resume: a `state` message with N entries → the frame after it is drawn (the panel was open and empty)
// typing: keydown → the next frame, with N entries shown
// reopen: a fresh webview document (what VS Code makes when a hidden view is shown again) → its
//         transcript drawn from the host's state
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const [modules, chromiumPath] = process.argv.slice(2);
const client = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'vscode-client');
const { chromium } = createRequire(path.join(modules, 'noop.js'))('playwright-core');
const esbuild = createRequire(path.join(client, 'noop.js'))('esbuild');

const ORIGIN = 'http://panel.bench';
const bundle = (entry, format) => esbuild.buildSync({
  entryPoints: [path.join(client, entry)], bundle: true, write: false, format, platform: 'browser', target: 'es2022',
}).outputFiles[0].text;
const webviewJs = bundle('webview/main.ts', 'iife');
const { chatHtml } = await import(`data:text/javascript;base64,${Buffer.from(bundle('src/chat/chatHtml.ts', 'esm')).toString('base64')}`);
const css = fs.readFileSync(path.join(client, 'media', 'chat.css'), 'utf8');
const NONCE = '0123456789abcdef0123456789abcdef';
const html = chatHtml(ORIGIN, NONCE, `${ORIGIN}/webview.js`, `${ORIGIN}/chat.css`);

// a stand-in for VS Code's webview host + the extension: `ready` is answered with the state for ?n=N
function hostStub() {
  const n = Number(new URLSearchParams(location.search).get('n') ?? 0);
  const answer = i => 'Here is the change.\n\n```python\ndef f' + i + '(x):\n    return x * ' + i + '\n```\n\n' +
    'It **doubles** the input; see [src/calc.py](src/calc.py).\n\n| a | b |\n|---|---|\n| 1 | 2 |';
  const entries = [];
  for (let i = 0; entries.length < n; i++) {
    entries.push({ id: `u${i}`, kind: 'user', text: `question ${i}: why does test_${i} fail?` });
    if (i % 4 === 1) {
      entries.push({ id: `t${i}`, kind: 'tool', toolCallId: `c${i}`, name: 'read_file', input: `{"path": "src/m${i}.py"}`,
        output: `line 1\nline 2\n`.repeat(20), status: 'done' });
    }
    entries.push({ id: `a${i}`, kind: 'assistant', text: answer(i), streaming: false });
  }
  entries.length = n;
  const state = { entries, busy: false, queue: [], todos: undefined, sessionTitle: 'bench' };
  const draw = m => {
    window.dispatchEvent(new MessageEvent('message', { data: structuredClone(m) }));
    void document.getElementById('transcript').scrollHeight;  // layout, as the frame would
    return new Promise(resolve => requestAnimationFrame(() => setTimeout(() => resolve(performance.now()))));
  };
  window.__bench = { draw, state: extra => ({ type: 'state', state: { ...state, entries: extra ?? entries }, history: [] }) };
  window.acquireVsCodeApi = () => ({
    postMessage: m => {
      if (m.type === 'ready') setTimeout(() => draw(window.__bench.state()).then(t => { window.__shownAt = t; }));
    },
    getState: () => undefined,
    setState: () => {},
  });
}

const browser = await chromium.launch({
  executablePath: chromiumPath, headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
const page = await browser.newPage({ viewport: { width: 400, height: 900 } });
await page.route(`${ORIGIN}/**`, route => {
  const url = new URL(route.request().url());
  if (url.pathname === '/webview.js') return route.fulfill({ contentType: 'text/javascript', body: webviewJs });
  if (url.pathname === '/chat.css') return route.fulfill({ contentType: 'text/css', body: css });
  return route.fulfill({ contentType: 'text/html', body: html });
});
await page.addInitScript(hostStub);

const median = xs => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = xs => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))];

async function open(n) {
  await page.goto(`${ORIGIN}/index.html?n=${n}`);
  await page.waitForFunction(() => window.__shownAt !== undefined, null, { timeout: 600_000 });
  return page.evaluate(() => window.__shownAt);
}

async function resume(n) {
  await open(0);
  return page.evaluate(async n => {
    const big = [];
    for (let i = 0; big.length < n; i++) {
      big.push({ id: `u${i}`, kind: 'user', text: `question ${i}` });
      big.push({ id: `a${i}`, kind: 'assistant', streaming: false,
        text: 'Answer with `code` and a block:\n\n```ts\nconst x' + i + ' = ' + i + ';\n```\n' });
    }
    big.length = n;
    const t0 = performance.now();
    const t1 = await window.__bench.draw(window.__bench.state(big));
    return t1 - t0;
  }, n);
}

async function typing(n) {
  await open(n);
  await page.evaluate(() => {
    window.__lat = [];
    document.addEventListener('keydown', () => {
      const t0 = performance.now();
      requestAnimationFrame(() => setTimeout(() => window.__lat.push(performance.now() - t0)));
    }, true);
  });
  await page.locator('#prompt').click();
  await page.keyboard.type('the quick brown fox jumps over the lazy dog again', { delay: 25 });
  await page.waitForTimeout(100);
  return p95(await page.evaluate(() => window.__lat));
}

const out = { resume: {}, typing: {}, reopen: {}, dom: {} };
for (const n of [100, 2400]) {
  const r = []; for (let i = 0; i < 5; i++) r.push(await resume(n));
  out.resume[n] = median(r);
  const o = []; for (let i = 0; i < 5; i++) o.push(await open(n));
  out.reopen[n] = median(o);
  out.dom[n] = await page.evaluate(() => document.getElementsByTagName('*').length);
}
for (const n of [0, 2400]) out.typing[n] = await typing(n);
await browser.close();
console.log(JSON.stringify(out));
