// Runs tests/e2e_vscode/scenarios.mjs against a running code-server (started by scripts/e2e.sh).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Model, Workbench } from './workbench.mjs';
import { PENDING, scenarios } from './scenarios.mjs';

const tools = process.env.SHIRO_E2E_TOOLS;
const require = createRequire(path.join(tools, 'node_modules', 'noop.js'));
const { chromium } = require('playwright-core');

const artifacts = process.env.ART;
const list = v => new Set((v ?? '').split(',').map(s => s.trim()).filter(Boolean));
const enabled = list(process.env.SHIRO_E2E_ENABLE);
const only = list(process.env.SHIRO_E2E_ONLY);
const t0 = Date.now();
const log = (...a) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);

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
const external = [];
page.on('request', r => {
  const u = new URL(r.url());
  const local = ['127.0.0.1', 'localhost'].includes(u.hostname) || u.hostname.endsWith('.vscode-resource.vscode-cdn.net'); // served by the webview service worker
  if (['http:', 'https:', 'ws:', 'wss:'].includes(u.protocol) && !local) external.push(r.url());
});
page.on('pageerror', e => log('pageerror:', e.message.slice(0, 200)));

const wb = new Workbench(page, artifacts);
const model = new Model(process.env.MODEL_URL);
const results = { passed: 0, failed: 0, skipped: 0 };
try {
  await page.goto(process.env.CS_URL);
  await wb.ready();
  const profile = process.env.SHIRO_E2E_PROFILE || 'default';
  for (const s of scenarios) {
    if ((s.profile ?? 'default') !== profile) continue;   // another code-server set-up runs those
    if (only.size && !only.has(s.name)) continue;
    const pending = PENDING[s.name];
    if (pending && !enabled.has('all') && !enabled.has(s.name)) {
      log(`SKIP ${s.name}: ${pending}`);
      results.skipped++;
      continue;
    }
    if (s.needsModel && !model.available) {
      log(`FAIL ${s.name}: the scripted model (tests/fakes/fake_openai.py) did not start`);
      results.failed++;
      continue;
    }
    log(`RUN  ${s.name}`);
    try {
      await s.run({ wb, page, model, settings: process.env.SETTINGS, machineSettings: process.env.MACHINE_SETTINGS, workspace: process.env.WS });
      results.passed++;
      log(`PASS ${s.name}`);
    } catch (error) {
      results.failed++;
      log(`FAIL ${s.name}: ${error?.stack ?? error}`);
      await wb.shot(`FAILED-${s.name}`).catch(() => {});
      await page.keyboard.press('Escape').catch(() => {});
    }
  }
} catch (error) {
  results.failed++;
  log(`FAIL harness: ${error?.stack ?? error}`);
  await wb.shot('FAILED-harness').catch(() => {});
} finally {
  await context.close().catch(() => {});
  fs.rmSync(profile, { recursive: true, force: true });
}
if (external.length) log('requests that left 127.0.0.1:', external.slice(0, 10));
log(`screenshots in ${artifacts}`);
console.log(`e2e: ${results.passed} passed, ${results.failed} failed, ${results.skipped} skipped`);
process.exitCode = results.failed ? 1 : 0;
