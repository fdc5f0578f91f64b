import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChatModel } from '../src/chat/chatModel';

test('tool events (reference id/name or toolCallId/toolName) build one tool entry with input and result', () => {
  const m = new ChatModel();
  m.applyEvent('t', { type: 'tool-start', id: 'c1', name: 'edit_file' });
  m.applyEvent('t', { type: 'tool-call', toolCallId: 'c1', toolName: 'edit_file', input: { path: 'a.py' } });
  m.applyEvent('t', {
    type: 'tool-result',
    id: 'c1',
    name: 'edit_file',
    output: { type: 'text', value: 'edited a.py' },
  });
  assert.equal(m.state.entries.length, 1);
  const t = m.state.entries[0];
  assert.ok(t.kind === 'tool' && t.status === 'done' && t.output === 'edited a.py' && /a\.py/.test(t.input));
});

test("a call read from the model's text is marked so, live and in a resumed transcript", () => {
  const m = new ChatModel();
  m.applyEvent('t', { type: 'tool-call', id: 'c1', name: 'bash', input: { command: 'ls' }, origin: 'text' });
  m.applyEvent('t', { type: 'tool-call', id: 'c2', name: 'bash', input: { command: 'ls' } });
  assert.deepEqual(
    m.state.entries.map(e => e.kind === 'tool' && e.fromText === true),
    [true, false],
  );
  const resumed = new ChatModel();
  const call = { type: 'tool-call', toolCallId: 'c3', toolName: 'bash', input: { command: 'ls' } };
  resumed.loadTranscript([
    {
      role: 'assistant',
      content: [
        { ...call, providerOptions: { shiro: { fromText: true } } },
        { ...call, toolCallId: 'c4' },
      ],
    },
  ]);
  assert.deepEqual(
    resumed.state.entries.map(e => e.kind === 'tool' && e.fromText === true),
    [true, false],
  );
});

test('text after a tool starts a new answer bubble; reasoning is its own collapsible entry', () => {
  const m = new ChatModel();
  m.applyEvent('t', { type: 'reasoning', text: 'think' });
  m.applyEvent('t', { type: 'text', text: 'a' });
  m.applyEvent('t', { type: 'tool-call', id: 'c', name: 'bash', input: 'ls' });
  m.applyEvent('t', { type: 'tool-output', id: 'c', chunk: 'x\n' });
  m.applyEvent('t', { type: 'tool-denied', name: 'bash' });
  m.applyEvent('t', { type: 'text', text: 'b' });
  m.applyEvent('t', { type: 'done' });
  assert.deepEqual(
    m.state.entries.map(e => e.kind),
    ['reasoning', 'assistant', 'tool', 'assistant'],
  );
  const tool = m.state.entries[2];
  assert.ok(tool.kind === 'tool' && tool.status === 'denied');
  assert.ok(m.state.entries.every(e => !(e.kind === 'assistant' || e.kind === 'reasoning') || !e.streaming));
});

test('errors and notices are shown; error objects become their message', () => {
  const m = new ChatModel();
  m.applyEvent('t', { type: 'notice', text: 'recursive or forced delete' });
  m.applyEvent('t', { type: 'error', error: { message: 'Error code: 401 - bad key' } });
  m.applyEvent('t', { type: 'compacted', before: 40, after: 12 });
  assert.deepEqual(
    m.state.entries.map(e => (e.kind === 'notice' ? [e.level, e.text] : [])),
    [
      ['info', 'recursive or forced delete'],
      ['error', 'Error code: 401 - bad key'],
      ['info', 'Context compacted: 40 → 12 messages.'],
    ],
  );
});

test('every change is reported so the webview can redraw just that entry', () => {
  const changed: string[] = [];
  const m = new ChatModel(e => changed.push(e.id));
  m.applyEvent('t', { type: 'text', text: 'a' });
  m.applyEvent('t', { type: 'text', text: 'b' });
  assert.deepEqual(changed, ['e0', 'e0']);
});

test('loading a transcript reports nothing entry by entry (the panel gets the whole state once)', () => {
  const changed: string[] = [];
  const m = new ChatModel(e => changed.push(e.id));
  const messages = Array.from({ length: 300 }, (_, i) => ({
    role: i % 2 ? ('assistant' as const) : ('user' as const),
    content: `m${i}`,
  }));
  m.loadTranscript(messages);
  assert.equal(m.state.entries.length, 300);
  assert.deepEqual(changed, []);
  m.addNotice('Resumed');
  assert.equal(changed.length, 1, 'later changes are reported again');
});

test('"Thinking…" ends when the answer or a tool starts, not when the turn ends', () => {
  const m = new ChatModel();
  m.applyEvent('t', { type: 'reasoning', text: 'hmm' });
  m.applyEvent('t', { type: 'text', text: 'answer' });
  const [reasoning, answer] = m.state.entries;
  assert.ok(reasoning.kind === 'reasoning' && !reasoning.streaming);
  assert.ok(answer.kind === 'assistant' && answer.streaming);
  m.applyEvent('t', { type: 'tool-start', id: 'c', name: 'bash' });
  assert.ok(answer.kind === 'assistant' && !answer.streaming);
});

test('an approval for the tool call just shown goes inside that tool row, and settles there', () => {
  const changed: string[] = [];
  const m = new ChatModel(e => changed.push(e.id));
  m.applyEvent('t', { type: 'tool-call', id: 'c1', name: 'write_file', input: { path: 'a.py' } });
  const card = { title: 'Allow write_file?', input: '{"path": "a.py"}', buttons: [] };
  const approval = m.addApproval(card, 'write_file');
  assert.equal(m.state.entries.length, 1, 'no separate card entry');
  const tool = m.state.entries[0];
  assert.ok(tool.kind === 'tool' && tool.approval?.id === approval.id);
  assert.ok(m.settleApproval(approval.id, 'once'));
  assert.ok(tool.kind === 'tool' && tool.approval?.decision === 'once');
  assert.equal(changed.at(-1), tool.id, 'the tool row is redrawn with the answer');
  assert.equal(m.settleApproval(approval.id, 'deny'), undefined, 'answered once');
  // a different tool (or no tool row) gets a card of its own
  const other = m.addApproval(card, 'bash');
  assert.equal(m.state.entries.at(-1)?.id, other.id);
});

test('a tool result that changed files keeps its diff for the card', () => {
  const m = new ChatModel();
  m.applyEvent('t', { type: 'tool-call', id: 'c1', name: 'bash', input: { command: 'rm x' } });
  m.applyEvent('t', {
    type: 'tool-result',
    id: 'c1',
    name: 'bash',
    output: { type: 'text', value: '' },
    diff: '@@ -1 +0,0 @@\n-x',
  });
  const t = m.state.entries[0];
  assert.ok(t.kind === 'tool' && t.diff === '@@ -1 +0,0 @@\n-x');
});

test("a resumed transcript shows Shiro's nudges as notes, not as the user's words", () => {
  const m = new ChatModel();
  m.loadTranscript([
    { role: 'user', content: 'Fix calc.py' },
    { role: 'assistant', content: [{ type: 'text', text: 'I will edit calc.py.' }] },
    {
      role: 'user',
      content: 'You said what you will do next but made no tool call. Do it now with a tool call.',
      shiroNote: 'nudge',
    },
    { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
  ]);
  assert.deepEqual(
    m.state.entries.map(e => e.kind),
    ['user', 'assistant', 'notice', 'assistant'],
  );
  const note = m.state.entries[2];
  assert.ok(
    note.kind === 'notice' && note.level === 'info' && note.text.startsWith('Shiro sent the model back: You said'),
  );
});

test("a tool card's count is the one the server sent with its files, live and in a resumed transcript", () => {
  const files = [
    { path: 'a.py', status: 'modified', additions: 2, deletions: 1, reviewed: false },
    { path: 'b.py', status: 'added', additions: 3, deletions: 0, reviewed: false },
  ];
  const m = new ChatModel();
  m.applyEvent('t', { type: 'tool-call', id: 'c1', name: 'apply_patch', input: {} });
  m.applyEvent('t', { type: 'tool-result', id: 'c1', name: 'apply_patch', output: 'ok', diff: '@@', files });
  const t = m.state.entries[0];
  assert.ok(t.kind === 'tool');
  assert.equal(t.counts, '+5 \u22121');
});

test('a prompt with images shows their thumbnails, live and in a resumed transcript', () => {
  const m = new ChatModel();
  const live = m.addUser('what is wrong here?', [{ name: 'shot.png', thumbnail: 'data:image/png;base64,AAA' }]);
  assert.ok(live.kind === 'user' && live.images?.[0]?.thumbnail === 'data:image/png;base64,AAA');
  const resumed = new ChatModel();
  const image = { type: 'image', imageId: 'abc', name: 'shot.png', mediaType: 'image/png' };
  resumed.loadTranscript(
    [
      { role: 'user', content: [{ type: 'text', text: 'what is wrong here?' }, image, { ...image, imageId: 'gone' }] },
      { role: 'assistant', content: 'A typo.' },
    ],
    [],
    { images: { abc: 'data:image/png;base64,BBB' } },
  );
  const [user, answer] = resumed.state.entries;
  assert.ok(user.kind === 'user' && user.text === 'what is wrong here?');
  assert.deepEqual(user.images, [
    { name: 'shot.png', thumbnail: 'data:image/png;base64,BBB' },
    { name: 'shot.png', thumbnail: undefined },
  ]);
  assert.ok(answer.kind === 'assistant' && answer.text === 'A typo.');
});
