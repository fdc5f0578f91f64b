import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TranscriptWindow } from '../webview/transcriptWindow';
import type { ChatEntry } from '../src/shared/webviewProtocol';

const entries = (n: number): ChatEntry[] =>
  Array.from({ length: n }, (_, i) => ({ id: `e${i}`, kind: 'user', text: `m${i}` }));

test('a long transcript draws only its newest page; older pages come oldest-first, one page at a time', () => {
  const w = new TranscriptWindow(50);
  const drawn = w.reset(entries(2400));
  assert.equal(drawn.length, 50);
  assert.equal(drawn[0].id, 'e2350');
  assert.equal(w.hidden, 2350);
  const page = w.earlier();
  assert.deepEqual([page[0].id, page.at(-1)!.id], ['e2300', 'e2349']);
  assert.equal(w.hidden, 2300);
  while (w.earlier().length) {
    /* scroll to the top */
  }
  assert.equal(w.hidden, 0);
  assert.deepEqual(w.earlier(), []);
});

test('a short transcript draws everything', () => {
  const w = new TranscriptWindow(50);
  assert.equal(w.reset(entries(7)).length, 7);
  assert.equal(w.hidden, 0);
});

test('new entries append, drawn ones update, changes above the window wait until scrolled to', () => {
  const w = new TranscriptWindow(2);
  w.reset(entries(5));
  assert.equal(w.upsert({ id: 'e9', kind: 'user', text: 'new' }).kind, 'append');
  assert.equal(w.upsert({ id: 'e4', kind: 'user', text: 'edited' }).kind, 'update');
  assert.equal(w.upsert({ id: 'e0', kind: 'user', text: 'old, edited' }).kind, 'offscreen');
  assert.equal(w.length, 6);
  assert.deepEqual(
    w.earlier().map(e => e.id),
    ['e1', 'e2'],
  );
  assert.deepEqual(
    w.earlier().map(e => (e.kind === 'user' ? e.text : '')),
    ['old, edited'],
  );
});
