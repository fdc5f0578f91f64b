import { test } from 'node:test';
import assert from 'node:assert/strict';
import { approvalCard, grantLabel, toDecision } from '../src/chat/approval';
import { ChatController } from '../src/chat/controller';
import type { ShiroServer } from '../src/server/server';
import { CancellationTokenSource } from './vscode-stub';
import type { ApproveParams } from '../src/shared/protocol';

const params: ApproveParams = {
  taskId: 't1',
  toolName: 'bash',
  input: { command: 'rm -rf build' },
  suggestedPattern: 'rm *',
  repeated: true,
  matchedPattern: 'rm *',
};

test('the card names the tool, shows the input and offers Allow once / Always / Deny', () => {
  const card = approvalCard(params);
  assert.equal(card.title, 'Allow bash?');
  assert.match(card.input, /"command": "rm -rf build"/);
  assert.deepEqual(
    card.buttons.map(b => [b.label, b.decision]),
    [
      ['Allow once', 'once'],
      ['Allow bash commands that start with "rm" for this session', 'always'],
      ['Deny', 'deny'],
    ],
  );
  assert.equal(card.matched, 'matched bash: "rm *"');
  assert.match(card.warning ?? '', /repeated/);
});

test("the server's warning (unsandboxed bash, secrets files) is on the card, with the repeat note", () => {
  const warning = 'bash runs unsandboxed: the command has your full access to every file you can read or change';
  const card = approvalCard({ ...params, warning });
  assert.match(card.warning ?? '', /^bash runs unsandboxed: the command has your full access/);
  assert.match(card.warning ?? '', /repeated identical call/);
  assert.equal(approvalCard({ ...params, repeated: false, warning: null }).warning, undefined);
});

test("a call read from the model's text says so, and its Always covers text calls only", () => {
  const card = approvalCard({ ...params, repeated: false, origin: 'text' });
  assert.equal(card.title, "Allow bash (read from the model's text)?");
  assert.match(card.warning ?? '', /^Read from the model's text: .* did not make a native tool call/);
  assert.equal(
    card.buttons[1].label,
    'Allow bash commands that start with "rm" for this session (calls written as text only)',
  );
  const native = approvalCard({ ...params, repeated: false, origin: 'native' });
  assert.equal(native.title, 'Allow bash?');
  assert.equal(native.warning, undefined);
});

test("a command Shiro runs itself is labelled as Shiro's, not as the model's", () => {
  const card = approvalCard({
    ...params,
    input: { command: 'python3 stock_report.py' },
    repeated: false,
    origin: 'shiro',
  });
  assert.equal(card.title, 'Allow bash (Shiro runs it for your request)?');
  assert.match(card.warning ?? '', /^Shiro runs this command itself, not the model: your message names it/);
  assert.doesNotMatch(card.warning ?? '', /model's text|wrote this call/);
  assert.match(card.input, /"command": "python3 stock_report\.py"/);
});

test('only an exact known decision allows; anything else denies (fail closed)', () => {
  assert.equal(toDecision('once'), 'once');
  assert.equal(toDecision('always'), 'always');
  assert.equal(toDecision('deny'), 'deny');
  for (const bad of ['ONCE', 'yes', '', undefined, null, 1, { decision: 'once' }])
    assert.equal(toDecision(bad), 'deny');
});

const fakeServer = {} as ShiroServer;

test('clicking a card button answers shiro/approve with that decision and settles the card', async () => {
  const ctl = new ChatController(fakeServer);
  const answer = ctl.requestApproval(params, new CancellationTokenSource().token as never);
  const card = ctl.model.state.entries.find(e => e.kind === 'approval');
  assert.ok(card);
  await ctl.handleMessage({ type: 'approve', id: card.id, decision: 'always' });
  assert.deepEqual(await answer, { decision: 'always' });
  assert.equal(card.kind === 'approval' && card.decision, 'always');
  await ctl.handleMessage({ type: 'approve', id: card.id, decision: 'once' }); // a second click changes nothing
  assert.equal(card.kind === 'approval' && card.decision, 'always');
});

test('a forged decision from the webview denies', async () => {
  const ctl = new ChatController(fakeServer);
  const answer = ctl.requestApproval(params, new CancellationTokenSource().token as never);
  const id = ctl.model.state.entries[0].id;
  await ctl.handleMessage({ type: 'approve', id, decision: 'sure' as never });
  assert.deepEqual(await answer, { decision: 'deny' });
});

test('the server withdrawing the request (timeout) denies and marks the card expired', async () => {
  const ctl = new ChatController(fakeServer);
  const cts = new CancellationTokenSource();
  const answer = ctl.requestApproval(params, cts.token as never);
  cts.cancel();
  assert.deepEqual(await answer, { decision: 'deny' });
  const card = ctl.model.state.entries[0];
  assert.ok(card.kind === 'approval' && card.expired);
});

test('Stop denies pending approvals', async () => {
  const ctl = new ChatController(fakeServer);
  const answer = ctl.requestApproval(params, new CancellationTokenSource().token as never);
  await ctl.handleMessage({ type: 'cancel' });
  assert.deepEqual(await answer, { decision: 'deny' });
});

test('a grant reads as plain words that say it lasts for this session', () => {
  assert.equal(grantLabel({ toolName: 'multi_edit', pattern: '*' }), 'Allow multi_edit for this session');
  assert.equal(
    grantLabel({ toolName: 'bash', pattern: 'git *', origin: 'native' }),
    'Allow bash commands that start with "git" for this session',
  );
  assert.equal(
    grantLabel({ toolName: 'read_file', pattern: 'src/**' }),
    'Allow read_file calls matching "src/**" for this session',
  );
  assert.equal(
    grantLabel({ toolName: 'web_fetch', pattern: 'docs.python.org' }),
    'Allow web pages from docs.python.org for this session',
  );
  assert.equal(
    grantLabel({ toolName: 'write_file', pattern: '*', origin: 'text' }),
    'Allow write_file for this session (calls written as text only)',
  );
});
