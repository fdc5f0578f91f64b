import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PromptHistory } from '../webview/history';

test('Up walks to older prompts, Down back to newer and then the draft', () => {
  const h = new PromptHistory(['first', 'second', 'third']);
  assert.equal(h.up('my draft'), 'third');
  assert.equal(h.up('third'), 'second');
  assert.equal(h.up('second'), 'first');
  assert.equal(h.up('first'), undefined, 'stops at the oldest');
  assert.equal(h.down(), 'second');
  assert.equal(h.down(), 'third');
  assert.equal(h.down(), 'my draft', 'the unsent draft comes back');
  assert.equal(h.down(), undefined);
});

test('push appends, skips consecutive duplicates and resets the walk', () => {
  const h = new PromptHistory(['a']);
  h.up('');
  h.push('b');
  h.push('b');
  assert.deepEqual(h.entries, ['a', 'b']);
  assert.equal(h.up(''), 'b');
});

test('empty history: Up and Down do nothing', () => {
  const h = new PromptHistory();
  assert.equal(h.up('x'), undefined);
  assert.equal(h.down(), undefined);
});

test('the cap keeps the newest prompts', () => {
  const h = new PromptHistory(['1', '2', '3'], 2);
  assert.deepEqual(h.entries, ['2', '3']);
  h.push('4');
  assert.deepEqual(h.entries, ['3', '4']);
});

test('the host resending the history mid-walk keeps the walk where it is', () => {
  const h = new PromptHistory(['/help', '/frobnicate']);
  assert.equal(h.up(''), '/frobnicate');
  h.replace(['/help', '/frobnicate']);
  assert.equal(h.up('/frobnicate'), '/help', 'the second Up goes on from the prompt shown');
  h.replace(['other']);
  assert.equal(h.up(''), 'other', 'a different list starts the walk again');
});
