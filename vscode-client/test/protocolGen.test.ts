import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { EngineEvent, WireEvent } from '../src/shared/protocol';

// Compile-time: whatever the server sends is something the chat model can read.
const accepts: (event: WireEvent) => EngineEvent = event => event;

test('the generated wire types match docs/protocol.schema.json', () => {
  assert.equal(typeof accepts, 'function');
  try {
    execFileSync(process.execPath, ['scripts/gen-protocol.mjs', '--check'], { stdio: 'pipe' });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? error);
    assert.fail(`src/shared/protocol.gen.ts is stale (run \`make protocol\`): ${stderr}`);
  }
});
