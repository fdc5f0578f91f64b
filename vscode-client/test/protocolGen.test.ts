import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { ShiroServer } from '../src/server/server';
import { AGENTS, Method } from '../src/shared/protocol';
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

// Compile-time (`npm run typecheck`): sendRequest takes each method's own params and gives its own result.
export async function requestsAreTypedPerMethod(srv: ShiroServer): Promise<number> {
  const listed = await srv.sendRequest(Method.sessionList, { query: 'quokka' });
  // @ts-expect-error: not a method of the contract
  await srv.sendRequest('shiro/no-such-method', {});
  // @ts-expect-error: shiro/session/rename needs the id and the title
  await srv.sendRequest(Method.sessionRename, { id: 'abc' });
  // @ts-expect-error: a notification the server sends, not a request
  await srv.sendRequest(Method.sessionChanged, {});
  return listed.sessions.length;
}

test('the method table and the agent variants come from the schema', () => {
  const schema = JSON.parse(fs.readFileSync('../docs/protocol.schema.json', 'utf8')) as {
    methods: Record<string, unknown>;
    $defs: { ChatParams: { properties: { agent: { anyOf: { enum?: string[] }[] } } } };
  };
  assert.deepEqual(Object.values(Method).sort(), Object.keys(schema.methods).sort());
  assert.equal(Method.sessionCompact, 'shiro/session/compact');
  assert.equal(Method.queueClear, 'shiro/queue/clear');
  const agents = schema.$defs.ChatParams.properties.agent.anyOf.find(a => a.enum)?.enum;
  assert.deepEqual([...AGENTS], agents);
});
