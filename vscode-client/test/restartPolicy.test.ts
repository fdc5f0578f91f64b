import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RestartPolicy } from '../src/server/restartPolicy';

test('a crashed server is restarted 4 times within 3 minutes, then left stopped', () => {
  const policy = new RestartPolicy(4, 180_000);
  assert.deepEqual(
    [0, 1000, 2000, 3000].map(t => policy.crashed(t)),
    [1, 2, 3, 4],
  );
  assert.equal(policy.crashed(4000), undefined);
});

test('crashes older than the window are forgotten', () => {
  const policy = new RestartPolicy(4, 180_000);
  for (const t of [0, 1000, 2000, 3000]) policy.crashed(t);
  assert.equal(policy.crashed(200_000), 1);
});
