import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextTick, retryLabel, retryWait } from '../src/shared/retryCountdown';
import { ChatModel } from '../src/chat/chatModel';

test('the countdown counts whole seconds down to "now"', () => {
  const wait = retryWait({ attempt: 2, maxAttempts: 4, delaySeconds: 3 }, 10_000);
  assert.equal(retryLabel(wait, 10_000), 'Retrying in 3 s… (attempt 2 of 4)');
  assert.equal(retryLabel(wait, 10_001), 'Retrying in 3 s… (attempt 2 of 4)');
  assert.equal(retryLabel(wait, 11_000), 'Retrying in 2 s… (attempt 2 of 4)');
  assert.equal(retryLabel(wait, 12_500), 'Retrying in 1 s… (attempt 2 of 4)');
  assert.equal(retryLabel(wait, 13_000), 'Retrying now… (attempt 2 of 4)');
  assert.equal(retryLabel({ ...wait, settled: true }, 11_000), 'Retried (attempt 2 of 4)');
});

test('a sub-second wait still says 1 s, and the next tick lands on the change', () => {
  const wait = retryWait({ attempt: 3, maxAttempts: 4, delaySeconds: 0.25 }, 0);
  assert.equal(retryLabel(wait, 0), 'Retrying in 1 s… (attempt 3 of 4)');
  assert.equal(nextTick(wait, 0), 250);
  assert.equal(nextTick(retryWait({ delaySeconds: 3 }, 0), 1000), 1000);
  assert.equal(nextTick(retryWait({ delaySeconds: 3 }, 0), 1400), 600);
  assert.equal(nextTick(wait, 250), undefined);
});

test('retry events of a turn update one notice, and the answer settles it', () => {
  let now = 5_000;
  const model = new ChatModel(
    () => {},
    () => now,
  );
  model.applyEvent('t1', {
    type: 'retry',
    attempt: 2,
    maxAttempts: 4,
    delaySeconds: 3,
    reason: 'Rate limited by the provider (429); retry after 3 s.',
  });
  let notices = model.state.entries.filter(e => e.kind === 'notice');
  assert.equal(notices.length, 1);
  const first = notices[0];
  assert.ok(first.kind === 'notice' && first.wait);
  assert.equal(first.text, 'Rate limited by the provider (429); retry after 3 s.');
  assert.equal(retryLabel(first.wait, now), 'Retrying in 3 s… (attempt 2 of 4)');
  now = 8_000;
  model.applyEvent('t1', {
    type: 'retry',
    attempt: 3,
    maxAttempts: 4,
    delaySeconds: 1,
    reason: 'The model server failed (500)',
  });
  notices = model.state.entries.filter(e => e.kind === 'notice');
  assert.equal(notices.length, 1);
  assert.ok(first.kind === 'notice' && first.wait);
  assert.equal(retryLabel(first.wait, now), 'Retrying in 1 s… (attempt 3 of 4)');
  assert.equal(first.text, 'The model server failed (500)');
  model.applyEvent('t1', { type: 'text', text: 'ok' });
  assert.equal(first.wait.settled, true);
  assert.equal(retryLabel(first.wait, now), 'Retried (attempt 3 of 4)');
  model.applyEvent('t1', { type: 'done' });
  model.applyEvent('t2', { type: 'retry', attempt: 2, maxAttempts: 4, delaySeconds: 1, reason: 'again' });
  assert.equal(model.state.entries.filter(e => e.kind === 'notice').length, 2);
});
