// Helpers that drive VS Code 1.100 (code-server) through playwright-core. Selectors verified in shared/vscode-e2e.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

export const EXTENSION_ID = 'shiro.shiro';

/** Headless Chromium (CHROMIUM, else Debian's) through the playwright-core in `tools` (SHIRO_E2E_TOOLS), on a fresh profile. */
export async function launchBrowser(tools) {
  const { chromium } = createRequire(path.join(tools, 'node_modules', 'noop.js'))('playwright-core');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'shiro-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1400, height: 900 },
    permissions: ['clipboard-read', 'clipboard-write'],
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = context.pages()[0] ?? await context.newPage();
  const close = async () => {
    await context.close().catch(() => {});
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return { page, close };
}

/** `text` as a pattern that also matches it with a word joiner (U+2060) between its characters. */
function joinable(text) {
  return [...text].map(c => c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\u2060?');
}

export class Workbench {
  constructor(page, artifacts) {
    this.page = page;
    this.artifacts = artifacts;
    this.shots = 0;
  }

  async ready() {
    await this.page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    await this.page.locator('#workbench\\.parts\\.statusbar').waitFor({ timeout: 60_000 });
  }

  async shot(name) {
    const file = path.join(this.artifacts, `${String(++this.shots).padStart(2, '0')}-${name}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }

  /** The context meter / server status item. */
  meter() {
    return this.page.locator('#workbench\\.parts\\.statusbar .statusbar-item', { hasText: 'Shiro' }).first();
  }

  async focusWorkbench() {
    // a harmless spot: the side bar's title (clicking the editor would move its cursor)
    await this.page.locator('.part.sidebar .composite.title').first().click({ timeout: 5_000 })
      .catch(() => this.page.locator('.monaco-workbench').click({ position: { x: 5, y: 5 } }).catch(() => {}));
  }

  /** The palette lists the commands known when it opens: one opened before the extension host has registered
   * the extension's commands never shows them (on a loaded machine that took over 30 s after the page was
   * up), so a palette that lacks the row is closed and opened again, until `timeout`. */
  async runCommand(title, timeout = 90_000) {
    const quick = this.page.locator('.quick-input-widget');
    const row = quick.locator('.monaco-list-row', { hasText: title }).first();
    const deadline = Date.now() + timeout;
    for (;;) {
      await this.page.keyboard.press('Escape');
      await this.focusWorkbench();
      await this.page.keyboard.press('F1');
      await quick.waitFor({ state: 'visible' });
      await this.page.keyboard.type(title);
      try {
        await row.waitFor({ timeout: 5_000 });
        break;
      } catch (error) {
        if (Date.now() >= deadline) throw error;
      }
    }
    await this.page.keyboard.press('Enter');
  }

  /** Selects the first line of `editor` and opens its code actions until `title` is offered, up to `timeout`.
   * Code actions come from the language server: asked before it has started, VS Code answers "No code actions
   * available" and does not ask again (the default profile's first scenario met that in CI). */
  async codeActionOnFirstLine(editor, title, timeout = 90_000) {
    const row = this.page.locator('.action-widget .monaco-list-row', { hasText: title }).first();
    const deadline = Date.now() + timeout;
    for (;;) {
      await this.page.keyboard.press('Escape');
      await this.focusEditorText(editor);
      await this.page.keyboard.press('Control+Home');
      await this.page.keyboard.press('Shift+End');
      await this.page.keyboard.press('Control+.');
      try {
        await row.waitFor({ timeout: 5_000 });
        return row;
      } catch (error) {
        if (Date.now() >= deadline) throw error;
      }
    }
  }

  /** A QuickPick row by its text. The Resume picker puts a word joiner (U+2060) between the characters of its labels (vscode-client/src/sessions/sessions.ts). */
  quickPickRow(text) {
    return this.page.locator('.quick-input-widget .monaco-list-row', { hasText: new RegExp(joinable(text)) }).first();
  }

  /** Matches a label that is exactly `text` (a QuickPick may put word joiners in it, as quickPickRow says). */
  exactName(text) {
    return new RegExp(`^${joinable(text)}$`);
  }

  toast(text) {
    return this.page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
  }

  async clearNotifications() {
    await this.runCommand('Notifications: Clear All Notifications').catch(() => {});
  }

  async openChat() {
    // clicking the container's icon while it is open would close it
    const open = this.page.locator('.activitybar .action-item.checked .action-label[aria-label^="Shiro"]');
    if (!(await open.count())) await this.page.locator('.activitybar .action-item .action-label[aria-label^="Shiro"]').click();
    await this.chat().locator('#prompt').waitFor({ timeout: 30_000 });
  }

  async hideChat() {
    await this.page.locator('.activitybar .action-item .action-label[aria-label^="Explorer"]').click();
  }

  /** The chat webview's document: two nested iframes laid over the workbench. */
  chat() {
    return this.page
      .frameLocator(`iframe.webview.ready[src*="extensionId=${EXTENSION_ID}"]`)
      .frameLocator('iframe#active-frame');
  }

  async send(text) {
    const prompt = this.chat().locator('#prompt');
    await prompt.click();
    await prompt.fill(text);
    await prompt.press('Enter');
  }

  async openFile(name) {
    await this.page.keyboard.press('Escape');
    await this.focusWorkbench();
    await this.page.keyboard.press('Control+P');
    await this.page.locator('.quick-input-widget').waitFor({ state: 'visible' });
    await this.page.keyboard.type(name);
    // Click the file's own row: Enter could race the filter and open whatever row was focused before, and a
    // recently opened diff of the file ("review.py (Shiro's changes: …)") is listed before the file search
    // answers, with the same name in its title. So is its tab: wait for the tab titled just the name.
    const exactly = this.exactName(name);
    await this.page.locator('.quick-input-widget .monaco-list-row')
      .filter({ has: this.page.locator('.label-name', { hasText: exactly }) }).first().click({ timeout: 15_000 });
    await this.page.locator('.tabs-container .tab.active')
      .filter({ has: this.page.locator('.label-name', { hasText: exactly }) }).first().waitFor({ timeout: 15_000 });
    const editor = this.page.locator('.editor-instance .monaco-editor').first();
    await editor.waitFor({ timeout: 15_000 });
    return editor;
  }

  /** Gives the editor the keyboard by clicking one of its text lines: a fixed point of the editor can
   * land on a CodeLens ("Shiro: Undo hunk"), which runs it and leaves the keys elsewhere. */
  async focusEditorText(editor) {
    await editor.locator('.view-lines .view-line').first().click({ position: { x: 2, y: 2 }, timeout: 15_000 });
  }

  editorText() {
    return this.page.locator('.editor-instance .monaco-editor .view-lines').first();
  }
}

export class Model {
  constructor(url) { this.url = url; }
  get available() { return Boolean(this.url); }

  async post(pathname, body) {
    const r = await fetch(`${this.url}${pathname}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}),
    });
    if (!r.ok) throw new Error(`fake model ${pathname}: HTTP ${r.status} ${await r.text()}`);
  }

  /** Append steps (tests/fakes/fake_openai.py JSON forms: {type:"step", items:[...], usage?, delay_per_event?}). */
  script(steps) { return this.post('/_control/script', steps); }
  release(gate) { return this.post('/_control/release', { gate }); }
  reset() { return this.post('/_control/reset', {}); }

  async requests() {
    const r = await fetch(`${this.url}/_control/requests`);
    return r.json();
  }

  /** The model turns asked for so far (the POSTs; a GET such as /v1/models is no turn). */
  async turnRequests() {
    return (await this.requests()).filter(r => r.method === 'POST' && /\/(chat\/completions|responses)$/.test(r.path));
  }

  /** The last model turn asked for. */
  async lastTurn() {
    return (await this.turnRequests()).at(-1);
  }
}

export const step = (items, extra = {}) => ({ type: 'step', items, ...extra });
export const text = (t, chunks = 1) => ({ type: 'text', text: t, chunks });
export const toolCall = (name, args, callId) => ({ type: 'tool_call', name, arguments: args, ...(callId ? { call_id: callId } : {}) });
export const usage = (input, output = 20) => ({ input_tokens: input, output_tokens: output });

export function writeSettings(file, patch) {
  const settings = JSON.parse(fs.readFileSync(file, 'utf8'));
  fs.writeFileSync(file, JSON.stringify({ ...settings, ...patch }, null, 2));
}
