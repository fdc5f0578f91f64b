// A resumed transcript shows what the live panel showed: the same rows, built by the same builders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChatModel } from '../src/chat/chatModel';
import { approvalCard } from '../src/chat/approval';
import type { ChatEntry } from '../src/shared/webviewProtocol';
import type { ChangedFile, HistoryEvent, Message, TurnInfo } from '../src/shared/protocol';

const edit = (id: string, to: string) => ({
  type: 'tool-call',
  toolCallId: id,
  toolName: 'edit_file',
  input: { path: 'app.py', oldString: 'x', newString: to },
});
const result = (id: string, value: string, type = 'text') => ({
  type: 'tool-result',
  toolCallId: id,
  toolName: 'edit_file',
  output: { type, value },
});

/** Two turns: an allowed edit with its diff, then a denied one (with a reason), then a stopped answer. */
const transcript: Message[] = [
  { role: 'user', content: 'make it 2' },
  { role: 'assistant', content: [edit('c1', 'x = 2')] },
  { role: 'tool', content: [result('c1', 'edited app.py')] },
  { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
  { role: 'user', content: 'make it 3' },
  { role: 'assistant', content: [edit('c2', 'x = 3')] },
  { role: 'tool', content: [result('c2', 'User denied this tool call. Their reason: keep it', 'error-text')] },
  { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
  { role: 'user', content: 'explain' },
  { role: 'assistant', content: [{ type: 'text', text: 'half' }] },
];
const DIFF = '--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';
const turns: TurnInfo[] = [
  {
    taskId: 't1',
    at: 0,
    end: 4,
    stopReason: 'done',
    checkpointId: 'cp1',
    changes: {
      taskId: 't1',
      checkpointId: 'cp1',
      files: [{ path: 'app.py', status: 'modified', additions: 1, deletions: 1, reviewed: false }],
    },
  },
  { taskId: 't2', at: 4, end: 8, stopReason: 'done' },
  { taskId: 't3', at: 8, end: 10, stopReason: 'cancelled' },
];
/** The edit's row as the server counted it (the one count its card shows, live and resumed). */
const FILES: ChangedFile[] = [{ path: 'app.py', status: 'modified', additions: 1, deletions: 1, reviewed: false }];
const events: HistoryEvent[] = [
  {
    at: 2,
    taskId: 't1',
    event: { type: 'approval', id: 'c1', name: 'edit_file', decision: 'once', suggestedPattern: '*', expired: false },
  },
  {
    at: 2,
    taskId: 't1',
    event: { type: 'tool-result', id: 'c1', name: 'edit_file', output: '', diff: DIFF, files: FILES },
  },
  {
    at: 6,
    taskId: 't2',
    event: {
      type: 'approval',
      id: 'c2',
      name: 'edit_file',
      decision: 'deny',
      suggestedPattern: '*',
      reason: 'keep it',
      expired: false,
    },
  },
  {
    at: 6,
    taskId: 't2',
    event: {
      type: 'tool-denied',
      id: 'c2',
      name: 'edit_file',
      reason: 'User denied this tool call. Their reason: keep it',
    },
  },
];

/** What the panel draws of an entry (ids and live-only details aside). */
function shown(e: ChatEntry): unknown {
  switch (e.kind) {
    case 'user':
      return { kind: e.kind, text: e.text, taskId: e.taskId, checkpointId: e.checkpointId };
    case 'tool':
      return {
        kind: e.kind,
        status: e.status,
        diff: e.diff,
        counts: e.counts,
        approval: e.approval && {
          title: e.approval.card.title,
          decision: e.approval.decision,
          reason: e.approval.reason,
        },
      };
    case 'changes':
      return { kind: e.kind, taskId: e.taskId, total: e.total };
    case 'notice':
      return { kind: e.kind, level: e.level, text: e.text };
    case 'assistant':
      return { kind: e.kind, text: e.text };
    default:
      return { kind: e.kind };
  }
}

function live(): ChatModel {
  const m = new ChatModel();
  const user = (text: string, taskId: string, checkpointId?: string) => {
    const u = m.addUser(text);
    if (u.kind === 'user') {
      u.taskId = taskId;
      if (checkpointId) u.checkpointId = checkpointId;
    }
  };
  const ask = (id: string, decision: 'once' | 'deny', reason?: string) => {
    m.applyEvent('t', { type: 'tool-start', id, name: 'edit_file' });
    const card = approvalCard({
      taskId: 't',
      toolName: 'edit_file',
      input: {},
      repeated: false,
      suggestedPattern: '*',
    });
    const a = m.addApproval(card, 'edit_file');
    m.settleApproval(a.id, decision, false, reason);
  };
  user('make it 2', 't1', 'cp1');
  ask('c1', 'once');
  m.applyEvent('t1', { type: 'tool-call', id: 'c1', name: 'edit_file', input: edit('c1', 'x = 2').input });
  m.applyEvent('t1', {
    type: 'tool-result',
    id: 'c1',
    name: 'edit_file',
    output: 'edited app.py',
    diff: DIFF,
    files: FILES,
  });
  m.applyEvent('t1', { type: 'text', text: 'done' });
  m.push({ kind: 'changes', taskId: 't1', checkpointId: 'cp1', files: [], total: '+1 \u22121', pending: 1 });
  m.turnEnded('t1', 'done');
  user('make it 3', 't2');
  ask('c2', 'deny', 'keep it');
  m.applyEvent('t2', { type: 'tool-call', id: 'c2', name: 'edit_file', input: edit('c2', 'x = 3').input });
  m.applyEvent('t2', { type: 'tool-denied', id: 'c2', name: 'edit_file' });
  m.applyEvent('t2', { type: 'text', text: 'ok' });
  m.turnEnded('t2', 'done');
  user('explain', 't3');
  m.applyEvent('t3', { type: 'text', text: 'half' });
  m.turnEnded('t3', 'cancelled');
  return m;
}

test(
  'a resumed session shows each turn as the live panel did: ' +
    'approvals, denials, diffs, Changed files, stops, restore points',
  () => {
    const resumed = new ChatModel();
    resumed.loadTranscript(transcript, [], { turns, events }, turn => {
      if (turn.changes)
        resumed.push({
          kind: 'changes',
          taskId: turn.taskId,
          checkpointId: turn.checkpointId ?? null,
          files: [],
          total: '+1 \u22121',
          pending: 1,
        });
    });
    assert.deepEqual(resumed.state.entries.map(shown), live().state.entries.map(shown));
    const denied = resumed.state.entries.find(e => e.kind === 'tool' && e.toolCallId === 'c2');
    assert.ok(denied?.kind === 'tool' && denied.status === 'denied' && denied.approval?.decision === 'deny');
    assert.ok(resumed.state.entries.some(e => e.kind === 'notice' && e.text === 'Stopped.'));
  },
);

test('a session saved before turns were recorded still renders: a failed result is an error, not "done"', () => {
  const m = new ChatModel();
  m.loadTranscript(transcript);
  const rows = m.state.entries.filter(e => e.kind === 'tool');
  assert.deepEqual(
    rows.map(e => e.kind === 'tool' && e.status),
    ['done', 'error'],
  );
  assert.ok(!m.state.entries.some(e => e.kind === 'notice' && e.text === 'Stopped.'));
});

test('a recorded error ends its turn once; the turn end does not repeat it', () => {
  const m = new ChatModel();
  m.loadTranscript([{ role: 'user', content: 'again' }], [], {
    turns: [{ taskId: 't', at: 0, end: 1, stopReason: 'error', error: 'HTTP 500' }],
    events: [{ at: 1, taskId: 't', event: { type: 'error', error: 'HTTP 500' } }],
  });
  assert.deepEqual(
    m.state.entries.map(e => (e.kind === 'notice' ? `${e.level}:${e.text}` : e.kind)),
    ['user', 'error:HTTP 500'],
  );
});

test(
  'a resumed /compact shows its command and its divider, an undone one its undone divider and the undo ' +
    'notice, and the model summary is told from Shiro digest',
  () => {
    const m = new ChatModel();
    const said: Message[] = [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: [{ type: 'text', text: 'first' }] },
      { role: 'user', content: 'two' },
      { role: 'assistant', content: [{ type: 'text', text: 'second' }] },
    ];
    m.loadTranscript(said, [{ at: 4, summary: 'both', createdAt: '2', digestReason: 'it was empty' }], {
      undoneCompactions: [{ at: 2, summary: 'one', createdAt: '1', undoneAt: 2, restored: 2 }],
    });
    const rows = m.state.entries.map(e =>
      e.kind === 'compaction'
        ? `divider:${e.state}:${e.digestReason ?? 'model'}`
        : e.kind === 'user'
          ? `${e.command ? 'command' : 'user'}:${e.text}`
          : `${e.kind}:${e.kind === 'notice' || e.kind === 'assistant' ? e.text : ''}`,
    );
    assert.deepEqual(rows, [
      'user:one',
      'assistant:first',
      'command:/compact',
      'divider:undone:model',
      'notice:Undid the compaction: the model sees the 2 messages again instead of the summary.',
      'user:two',
      'assistant:second',
      'command:/compact',
      'divider:active:it was empty',
    ]);
  },
);

test('a resumed answered write card keeps its "Proposed change" line from the files its answer recorded', () => {
  const m = new ChatModel();
  const write = {
    type: 'tool-call',
    toolCallId: 'w1',
    toolName: 'write_file',
    input: { path: 'crates.txt', content: 'a\nb\n' },
  };
  m.loadTranscript(
    [
      { role: 'user', content: 'list them' },
      { role: 'assistant', content: [write] },
    ],
    [],
    {
      turns: [{ taskId: 't', at: 0, end: 2, stopReason: 'done' }],
      events: [
        {
          at: 2,
          taskId: 't',
          event: {
            type: 'approval',
            id: 'w1',
            name: 'write_file',
            decision: 'once',
            suggestedPattern: '*',
            expired: false,
            origin: 'model',
            files: [{ path: 'crates.txt', status: 'added', additions: 2, deletions: 0, reviewed: false }],
          },
        },
      ],
    },
  );
  const row = m.state.entries.find(e => e.kind === 'tool');
  assert.ok(row?.kind === 'tool');
  assert.deepEqual(row.approval?.card.preview, {
    files: [{ path: 'crates.txt', from: undefined, status: 'added', counts: '+2 \u22120', binary: false }],
    total: '+2 \u22120',
  });
});

test("a call Shiro made itself is marked as Shiro's, live and in a resumed transcript", () => {
  const m = new ChatModel();
  m.applyEvent('t', { type: 'tool-call', id: 'c1', name: 'bash', input: { command: 'make' }, origin: 'shiro' });
  const resumed = new ChatModel();
  resumed.loadTranscript([
    {
      role: 'assistant',
      content: [
        {
          type: 'tool-call',
          toolCallId: 'c1',
          toolName: 'bash',
          input: { command: 'make' },
          providerOptions: { shiro: { fromText: true, byShiro: true } },
        },
      ],
    },
  ]);
  for (const model of [m, resumed]) {
    const row = model.state.entries[0];
    assert.ok(row.kind === 'tool' && row.byShiro === true);
  }
});
