import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChatController } from '../src/chat/controller';
import type { ReviewHooks } from '../src/chat/controller';
import type { ShiroServer } from '../src/server/server';
import type { ApproveParams } from '../src/shared/protocol';
import { CancellationTokenSource } from './vscode-stub';

const server = {
  isRunning: true,
  async sendRequest() {
    return {};
  },
} as unknown as ShiroServer;
const edit: ApproveParams = {
  taskId: 't1',
  toolName: 'edit_file',
  input: { path: 'a.py', oldString: 'x', newString: 'y' },
  suggestedPattern: 'a.py',
  repeated: false,
  preview: { path: 'a.py', before: 'x\n', after: 'y\n', additions: 1, deletions: 1 },
};

function recorder(): { hooks: ReviewHooks; calls: string[] } {
  const calls: string[] = [];
  const hooks: ReviewHooks = {
    async handle(m) {
      calls.push(`handle:${m.type}`);
    },
    async approvalShown(id, p) {
      calls.push(`shown:${id}:${p.preview?.path}`);
    },
    async approvalSettled(id) {
      calls.push(`settled:${id}`);
    },
    async refreshCheckpoints() {
      calls.push('checkpoints');
    },
    async transcriptLoaded() {
      calls.push('transcript');
    },
    turnShown(turn) {
      calls.push(`turn:${turn.taskId}`);
    },
  };
  return { hooks, calls };
}

test(
  'a file-tool approval opens its preview, shows +N −M on the ' + 'card, and closes the preview when answered',
  async () => {
    const ctl = new ChatController(server);
    const { hooks, calls } = recorder();
    ctl.review = hooks;
    const answer = ctl.requestApproval(edit, new CancellationTokenSource().token as never);
    const card = ctl.model.state.entries.at(-1)!;
    assert.ok(card.kind === 'approval');
    assert.equal(card.card.preview?.total, '+1 \u22121');
    assert.deepEqual(calls, [`shown:${card.id}:a.py`]);
    await ctl.handleMessage({ type: 'approve', id: card.id, decision: 'once', reason: 'ignored when allowing' });
    assert.deepEqual(await answer, { decision: 'once' });
    assert.deepEqual(calls.at(-1), `settled:${card.id}`);
  },
);

test('Deny carries the typed reason to the server and onto the card; a blank reason is none', async () => {
  const ctl = new ChatController(server);
  const first = ctl.requestApproval(edit, new CancellationTokenSource().token as never);
  const card = ctl.model.state.entries.at(-1)!;
  await ctl.handleMessage({ type: 'approve', id: card.id, decision: 'deny', reason: '  use pathlib instead  ' });
  assert.deepEqual(await first, { decision: 'deny', reason: 'use pathlib instead' });
  assert.ok(card.kind === 'approval' && card.reason === 'use pathlib instead');
  const second = ctl.requestApproval(edit, new CancellationTokenSource().token as never);
  const id = ctl.model.state.entries.at(-1)!.id;
  await ctl.handleMessage({ type: 'approve', id, decision: 'deny', reason: '   ' });
  assert.deepEqual(await second, { decision: 'deny' });
});

test('review messages from the webview go to the review side, not the chat', async () => {
  const ctl = new ChatController(server);
  const { hooks, calls } = recorder();
  ctl.review = hooks;
  await ctl.handleMessage({ type: 'undoChange', taskId: 't1', path: 'a.py' });
  await ctl.handleMessage({ type: 'restore', id: 'e0' });
  assert.deepEqual(calls, ['handle:undoChange', 'handle:restore']);
  assert.equal(ctl.model.state.entries.length, 0);
});

test('a finished turn refreshes the checkpoints, and its user entry knows its task id', async () => {
  const chatServer = {
    isRunning: true,
    async sendRequest(method: string) {
      return method === 'shiro/chat'
        ? {
            sessionId: 's',
            taskId: 't7',
            stopReason: 'done',
            usage: { inputTokens: 1, outputTokens: 1, costUsd: null },
          }
        : {};
    },
  } as unknown as ShiroServer;
  const ctl = new ChatController(chatServer);
  const { hooks, calls } = recorder();
  ctl.review = hooks;
  await ctl.submit('change a.py');
  const user = ctl.model.state.entries[0];
  assert.ok(user.kind === 'user' && user.taskId === 't7');
  assert.ok(calls.includes('checkpoints'));
});
