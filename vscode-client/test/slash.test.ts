import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatSlashResult, parseSlash } from '../src/chat/slash';

const steps = (text: string) => {
  const a = parseSlash(text);
  assert.ok(a && a.kind === 'requests', `${text} should map to requests, got ${JSON.stringify(a)}`);
  return a.steps;
};

test('plain prompts and paths are not commands', () => {
  assert.equal(parseSlash('explain this function'), undefined);
  assert.equal(parseSlash('/usr/bin/python is missing'), undefined);
  assert.equal(parseSlash('what does /compact do?'), undefined);
});

test('each command maps to the contract request(s)', () => {
  assert.deepEqual(steps('/compact'), [{ method: 'shiro/session/compact', params: {} }]);
  assert.deepEqual(steps('/notes'), [
    { method: 'shiro/memory/list', params: {} },
    { method: 'shiro/notes/read', params: { scope: 'project' } },
  ]);
  assert.deepEqual(steps('/memory'), [{ method: 'shiro/memory/compact', params: {} }]);
  assert.deepEqual(steps('/todos'), [{ method: 'shiro/todos', params: {} }]);
  assert.deepEqual(steps('/sessions'), [{ method: 'shiro/session/list', params: { limit: 15 } }]);
  assert.deepEqual(steps('/resume 0193ab'), [{ method: 'shiro/session/resume', params: { id: '0193ab' } }]);
  assert.deepEqual(steps('/new'), [{ method: 'shiro/session/new', params: {} }]);
  assert.deepEqual(steps('/save'), [{ method: 'shiro/session/save', params: {} }]);
  assert.deepEqual(steps('/clear'), [{ method: 'shiro/session/clear', params: {} }]);
  assert.deepEqual(steps('/cost'), [
    { method: 'shiro/session/current', params: {} },
    { method: 'shiro/context', params: {} },
  ]);
});

test('/memory with a note appends to project notes, --task to a task', () => {
  assert.deepEqual(steps('/memory the build needs node 20'), [
    { method: 'shiro/notes/append', params: { scope: 'project', note: 'the build needs node 20' } },
  ]);
  assert.deepEqual(steps('/memory --task t-42 waiting on review\nsecond line'), [
    { method: 'shiro/notes/append', params: { scope: 'task', taskId: 't-42', note: 'waiting on review\nsecond line' } },
  ]);
  assert.deepEqual(parseSlash('/memory --task t-42'), {
    kind: 'error',
    command: 'memory',
    message: 'usage: /memory --task <task-id> <note>',
  });
});

test('bare /resume opens the picker; unknown commands and stray arguments are errors, never prompts', () => {
  assert.deepEqual(parseSlash('/resume'), { kind: 'pickSession', command: 'resume' });
  assert.deepEqual(parseSlash('/frobnicate'), {
    kind: 'error',
    command: 'frobnicate',
    message: 'unknown command /frobnicate - try /help',
  });
  assert.equal(parseSlash('/compact now please')?.kind, 'error');
  assert.equal(parseSlash('/help')?.kind, 'help');
  assert.equal(parseSlash('/COMPACT')?.kind, 'requests');
});

test('results are formatted for the chat', () => {
  assert.equal(
    formatSlashResult('compact', [{ before: 40, after: 3 }]),
    'Compacted the conversation: 40 messages → 3 messages.',
  );
  assert.equal(formatSlashResult('sessions', [{ sessions: [] }]), 'no saved sessions');
  assert.equal(
    formatSlashResult('save', [{ id: '0193ab2c-xx', saved: false, reason: 'empty session' }]),
    'Not saved: empty session',
  );
  assert.equal(
    formatSlashResult('new', [{ session: {}, previous: { id: 'a', title: 'fix tests', messageCount: 8 } }]),
    'Saved 8 messages: "fix tests" — resume it with Shiro: Resume session.',
  );
  const cost = formatSlashResult('cost', [
    { id: '0193ab2c-1', model: 'gpt-5', inputTokens: 1200, outputTokens: 300, costUsd: 0.0045 },
    { tokens: 5000, threshold: 100000, percent: 5, level: 'ok', estimated: true },
  ]);
  assert.match(cost, /billed: 1200 in \/ 300 out/);
  assert.match(cost, /spend: \$0\.0045/);
  assert.doesNotMatch(cost, /cached:/);
  const local = formatSlashResult('cost', [
    {
      id: '0193ab2c-1',
      model: 'qwen2.5-coder',
      inputTokens: 3300,
      outputTokens: 40,
      costUsd: null,
      cachedTokens: 2970,
    },
    { tokens: 3340, threshold: 6144, percent: 54, level: 'ok', estimated: false, local: true, cachedTokens: 3245 },
  ]);
  assert.match(local, /spend: local model/);
  assert.match(local, /cached: 2970 of 3300 prompt tokens this session \(90%\)/);
  assert.match(local, /cached: 3245 prompt tokens of the last request/);
});

test('/init goes to the server as a normal turn (it expands it into the AGENTS.md prompt)', () => {
  assert.equal(parseSlash('/init'), undefined);
  assert.equal(parseSlash('/init focus on the tests'), undefined);
});
