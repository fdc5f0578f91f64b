// "Shiro: Resume session" in a real VS Code window (started by scripts/vscode-window.sh, with the sessions already
// saved by bench/bench_resume.py): the pick → the resumed transcript painted in the chat webview. Prints one JSON
// object: per session its message count, the runs (ms) and their median.
//
//   node bench/resume.mjs SESSIONS_JSON RUNS     (SESSIONS_JSON: [{name, title, last, messages}])
//
// A run: "Shiro: New session" (an empty panel), the Resume picker, then a click on the session's row. The clock
// starts at that click's pointerdown in the workbench and stops in the webview one frame after its transcript
// first holds the last entry's text. Date.now() on both sides: the two documents run in different processes.
import { launchBrowser, Workbench } from '../tests/e2e_vscode/workbench.mjs';

const [sessionsJson, runsArg] = process.argv.slice(2);
const sessions = JSON.parse(sessionsJson);
const runs = Number(runsArg);
const median = xs => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const browser = await launchBrowser(process.env.SHIRO_E2E_TOOLS);
const page = browser.page;
const wb = new Workbench(page, process.env.ART);

async function emptyPanel() {
  await wb.runCommand('Shiro: New session');
  const transcript = wb.chat().locator('#transcript');
  for (const s of sessions) await transcript.locator('.entry', { hasText: s.last }).waitFor({ state: 'detached', timeout: 60_000 });
}

async function resume(session) {
  await emptyPanel();
  await wb.runCommand('Shiro: Resume session');
  const row = wb.quickPickRow(session.title);
  await row.waitFor({ timeout: 60_000 });
  const transcript = wb.chat().locator('#transcript');
  await transcript.evaluate((node, last) => {
    window.__painted = new Promise(resolve => {
      const observer = new MutationObserver(() => {
        if (!node.textContent.includes(last)) return;
        observer.disconnect();
        requestAnimationFrame(() => setTimeout(() => resolve(Date.now())));
      });
      observer.observe(node, { childList: true, subtree: true, characterData: true });
    });
  }, session.last);
  await page.evaluate(() => {
    window.__pickedAt = new Promise(resolve => document.addEventListener('pointerdown', () => resolve(Date.now()), { capture: true, once: true }));
  });
  await row.click();
  const painted = await transcript.evaluate(() => window.__painted);
  const picked = await page.evaluate(() => window.__pickedAt);
  // the command has finished (its notice follows the transcript) before the next run starts
  await wb.chat().locator('.entry.notice', { hasText: 'Resumed' }).last().waitFor({ timeout: 60_000 });
  return painted - picked;
}

const out = {};
try {
  await page.goto(process.env.CS_URL);
  await wb.ready();
  await wb.openChat();
  for (const s of sessions) await resume(s); // warm-up: the server's first start, caches, the JIT
  for (const s of sessions) out[s.name] = { messages: s.messages, runs: [] };
  for (let i = 0; i < runs; i++) {
    // alternate which goes first, so a slow moment of the machine does not fall on one side only
    for (const s of i % 2 ? [...sessions].reverse() : sessions) out[s.name].runs.push(await resume(s));
  }
  for (const s of sessions) {
    out[s.name].median = median(out[s.name].runs);
    await resume(s);
    await wb.shot(`resumed-${s.name}`);
  }
} catch (error) {
  await wb.shot('FAILED-resume-bench').catch(() => {});
  console.error(error?.stack ?? error);
  process.exitCode = 1;
} finally {
  await browser.close();
}
if (!process.exitCode) console.log(JSON.stringify(out));
