import { test } from 'node:test';
import assert from 'node:assert/strict';
import { queueView } from '../webview/queue';

test('an empty queue is hidden', () => {
  assert.equal(queueView([]).visible, false);
});

test('queued messages are numbered, clipped and flattened', () => {
  const v = queueView([
    { taskId: 't1', text: 'fix\nthe   tests' },
    { taskId: 't2', text: 'x'.repeat(200) },
  ]);
  assert.equal(v.visible, true);
  assert.equal(v.title, '2 messages queued');
  assert.equal(v.items[0].label, '1. fix the tests');
  assert.equal(v.items[1].label.length, 3 + 80);
  assert.ok(v.items[1].label.endsWith('…'));
  assert.equal(queueView([{ taskId: 't', text: 'a' }]).title, '1 message queued');
});
