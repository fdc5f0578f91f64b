import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import type { ChangesEntry } from '../src/shared/webviewProtocol';

const dom = new JSDOM('<!DOCTYPE html><body></body>');
(globalThis as { document?: Document }).document = dom.window.document;

test('a not-covered file says so in the Changed files block and offers no Undo', async () => {
  const { renderChanges } = await import('../webview/changes');
  const entry: ChangesEntry = {
    id: 'e1',
    kind: 'changes',
    taskId: 't1',
    checkpointId: 'c1',
    total: '+1 \u22121',
    pending: 2,
    files: [
      {
        path: '.env',
        status: 'modified',
        reviewed: false,
        binary: false,
        counts: '+0 \u22120',
        notCovered: 'a secrets file',
      },
      { path: 'a.py', status: 'modified', reviewed: false, binary: false, counts: '+1 \u22121' },
    ],
  };
  const rows = Array.from(renderChanges(entry, () => undefined).querySelectorAll('li.file-row'));
  const [env, py] = rows;
  assert.equal(env.querySelector('.not-covered')?.textContent, 'not covered \u2014 left as it is');
  assert.match(env.querySelector('.not-covered')?.getAttribute('title') ?? '', /a secrets file/);
  assert.equal(env.querySelector('.undo-file'), null);
  assert.ok(env.querySelector('.keep-file'));
  assert.equal(py.querySelector('.not-covered'), null);
  assert.ok(py.querySelector('.undo-file'));
});
