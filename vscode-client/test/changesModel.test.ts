import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  approvalPreview,
  assignCheckpoints,
  changesView,
  diffResultHunks,
  HunkReview,
  isReviewMessage,
  restoreText,
  undoneText,
} from '../src/review/changesModel';
import { toolDiff } from '../webview/toolDiff';
import type { CheckpointInfo } from '../src/shared/protocol';

test('an approval preview lists each file with its status and +N −M, and a total', () => {
  const view = approvalPreview({
    previews: [
      { path: 'a.py', before: 'x\ny\n', after: 'x\nz\nw\n', additions: 2, deletions: 1 },
      { path: 'new.txt', before: null, after: 'hello\n', additions: 1 },
      { path: 'gone.txt', before: 'bye\n', after: null, deletions: 1 },
      { path: 'b.py', from: 'old/b.py', before: 'k\n', after: 'k\n' },
    ],
  })!;
  assert.deepEqual(
    view.files.map(f => [f.path, f.status, f.counts]),
    [
      ['a.py', 'modified', '+2 \u22121'],
      ['new.txt', 'added', '+1 \u22120'],
      ['gone.txt', 'deleted', '+0 \u22121'],
      ['b.py', 'moved', '+0 \u22120'],
    ],
  );
  assert.equal(view.total, '+3 \u22122');
  assert.equal(approvalPreview({}), undefined);
  assert.equal(approvalPreview({ preview: { path: 'x', before: 'a', after: 'b' } })!.files.length, 1);
});

test('the Changed files block: counts per file and in total, how many are still to review', () => {
  const v = changesView({
    taskId: 't1',
    checkpointId: 'c1',
    files: [
      { path: 'a.py', status: 'modified', additions: 2, deletions: 1, reviewed: false },
      { path: 'b.py', status: 'added', additions: 5, deletions: 0, reviewed: true },
    ],
  })!;
  assert.equal(v.total, '+7 \u22121');
  assert.equal(v.pending, 1);
  assert.deepEqual(
    v.files.map(f => f.counts),
    ['+2 \u22121', '+5 \u22120'],
  );
  assert.equal(changesView({ taskId: null, checkpointId: null, files: [] }), undefined);
});

const cp = (id: string, taskId: string, prompt: string, kind: 'turn' | 'redo' = 'turn'): CheckpointInfo => ({
  id,
  taskId,
  prompt,
  kind,
  createdAt: '',
  files: ['a'],
});

test('checkpoints go to user turns by task id, else by prompt text in order; redo checkpoints to none', () => {
  const users = [
    { id: 'u1', text: 'fix it' },
    { id: 'u2', text: 'again' },
    { id: 'u3', text: 'fix it' },
    { id: 'u4', text: 'live', taskId: 't9' },
  ];
  const map = assignCheckpoints(users, [
    cp('c9', 't9', 'live'),
    cp('r1', 'tx', 'fix it', 'redo'),
    cp('c3', 't3', 'fix it'),
    cp('c1', 't1', 'fix it'),
  ]);
  assert.deepEqual([...map.entries()].sort(), [
    ['u1', 'c1'],
    ['u3', 'c3'],
    ['u4', 'c9'],
  ]);
  assert.equal(map.has('u2'), false);
});

test('restore messages say what came back and what was left alone', () => {
  assert.equal(
    restoreText('code', { restored: ['a.py'], conflicts: [], redoId: 'r' }).text,
    'Restored checkpoint: 1 file put back (a.py).',
  );
  const warn = restoreText('both', { restored: [], conflicts: ['b.py'], redoId: 'r', messagesRemoved: 4 });
  assert.equal(warn.level, 'warn');
  assert.match(warn.text, /4 messages removed/);
  assert.match(warn.text, /Left alone \(you changed them since\): b\.py/);
  assert.match(restoreText('chat', { restored: [], conflicts: [], redoId: null }, true).text, /^Redone: chat/);
});

test('a not-covered file is said in the Changed files block and in the restore message', () => {
  const v = changesView({
    taskId: 't1',
    checkpointId: 'c1',
    files: [
      { path: '.env', status: 'modified', additions: 0, deletions: 0, reviewed: false, notCovered: 'a secrets file' },
      { path: 'a.py', status: 'modified', additions: 1, deletions: 1, reviewed: false },
    ],
  })!;
  assert.deepEqual(
    v.files.map(f => f.notCovered),
    ['a secrets file', undefined],
  );
  const r = restoreText('code', { restored: ['a.py'], conflicts: [], redoId: 'r', notCovered: ['.env'] });
  assert.equal(r.level, 'warn');
  assert.match(r.text, /Not covered \u2014 left as it is: \.env\./);
  assert.doesNotMatch(r.text, /\(a\.py, \.env\)/);
});

test('kept hunks stay hidden across a refresh of the same diff; other files are unaffected', () => {
  const r = new HunkReview();
  const hunks = diffResultHunks({ before: 'a\nb\nc\nd\ne\n', after: 'A\nb\nc\nd\nE\n' });
  assert.equal(hunks.length, 2);
  r.keep('x.py', hunks[0]);
  assert.deepEqual(
    r.open('x.py', hunks).map(h => h.index),
    [1],
  );
  assert.deepEqual(
    r.open('y.py', hunks).map(h => h.index),
    [0, 1],
  );
  r.forget('x.py');
  assert.equal(r.open('x.py', hunks).length, 2);
  const server = [{ index: 0, oldStart: 9, oldLines: 1, newStart: 9, newLines: 1, header: '@@ -9,1 +9,1 @@' }];
  assert.deepEqual(diffResultHunks({ before: 'a', after: 'b', hunks: server }), server);
  assert.deepEqual(diffResultHunks({ before: 'a', after: 'b', binary: true }), []);
});

test('tool cards: a diff in the result is coloured; an edit without one shows what it asked for; others none', () => {
  const fromOutput = toolDiff('edit_file', {}, 'Replaced 1 occurrence(s)\n@@ -1,1 +1,1 @@\n-a\n+b')!;
  assert.equal(fromOutput.source, 'output');
  assert.equal(fromOutput.counts, '+1 \u22121');
  const fromInput = toolDiff(
    'edit_file',
    { path: 'x', oldString: 'foo()\nbar()', newString: 'foo()\nbaz()\nqux()' },
    'Replaced 1 occurrence(s)',
  )!;
  assert.equal(fromInput.source, 'input');
  assert.deepEqual(
    fromInput.lines.filter(l => l.kind !== 'hunk').map(l => l.text),
    ['-bar()', '+baz()', '+qux()'],
  );
  assert.equal(
    toolDiff(
      'multi_edit',
      {
        edits: [
          { oldString: 'a', newString: 'b' },
          { oldString: 'c\n', newString: '' },
        ],
      },
      'ok',
    )!.counts,
    '+1 \u22122',
  );
  assert.equal(toolDiff('read_file', { path: 'x' }, '@@ -1 +1 @@\n-a\n+b'), undefined);
  assert.equal(toolDiff('write_file', { path: 'x', content: 'y' }, 'Wrote 1 line'), undefined);
});

test('review messages are told apart from the chat messages', () => {
  assert.ok(isReviewMessage({ type: 'undoChange' }));
  assert.ok(isReviewMessage({ type: 'restore' }));
  assert.ok(!isReviewMessage({ type: 'approve' }));
  assert.ok(!isReviewMessage({ type: 'send' }));
});

test("the diff the server sent with a result wins, for any tool that changed files (bash's sed -i too)", () => {
  const diff = '--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-old\n+new';
  const view = toolDiff('bash', { command: "sed -i 's/old/new/' x.txt" }, '', diff)!;
  assert.equal(view.source, 'diff');
  assert.equal(view.counts, '+1 \u22121');
  assert.equal(toolDiff('bash', { command: 'ls' }, 'a\nb', undefined), undefined);
  const edits = toolDiff(
    'multi_edit',
    {
      edits: [
        { oldString: 'a', newString: 'b' },
        { oldString: 'c', newString: 'd' },
      ],
    },
    'ok',
  )!;
  assert.deepEqual(
    edits.lines.map(l => l.text),
    ['-a', '+b', '\u22ef', '-c', '+d'],
  );
});

test(
  'the Changed files block shows what this turn changed, and the ' + 'checkpoint vs now when a later change moved it',
  () => {
    const v = changesView({
      taskId: 't1',
      checkpointId: 'c1',
      files: [
        // the turn changed 3 lines; a later turn added one more line to the same region
        {
          path: 'review.py',
          status: 'modified',
          additions: 3,
          deletions: 2,
          reviewed: false,
          turnAdditions: 3,
          turnDeletions: 3,
        },
        // nothing changed it since: one count only
        {
          path: 'b.py',
          status: 'modified',
          additions: 1,
          deletions: 1,
          reviewed: false,
          turnAdditions: 1,
          turnDeletions: 1,
        },
        // the turn is still running (no own counts yet): the checkpoint vs now is what it did so far
        {
          path: 'c.py',
          status: 'added',
          additions: 4,
          deletions: 0,
          reviewed: false,
          turnAdditions: null,
          turnDeletions: null,
        },
        {
          path: 'logo.png',
          status: 'modified',
          additions: 0,
          deletions: 0,
          reviewed: false,
          binary: true,
          turnAdditions: 0,
          turnDeletions: 0,
        },
      ],
    })!;
    assert.deepEqual(
      v.files.map(f => [f.path, f.counts, f.since]),
      [
        ['review.py', '+3 \u22123', '+3 \u22122'],
        ['b.py', '+1 \u22121', undefined],
        ['c.py', '+4 \u22120', undefined],
        ['logo.png', 'binary', undefined],
      ],
    );
    assert.equal(v.total, '+8 \u22124', 'the header adds up what the turn changed');
  },
);

test("an approval preview shows the server's count, the one the tool card's row shows for the same change", () => {
  // a diff of its own here would say +1 −2 (another alignment of the repeated lines); the server counts +2 −3
  const view = approvalPreview({
    preview: {
      path: 'a.txt',
      before: 'a\n\nb\na\nb\n\nb\n\n',
      after: 'a\n\nb\nb\nb\na\n\n',
      additions: 2,
      deletions: 3,
    },
  })!;
  assert.equal(view.files[0].counts, '+2 \u22123');
  assert.equal(view.total, '+2 \u22123');
});

test('an edit that adds a line after the one it names counts +1 −0, as the file does (not +2 −1)', () => {
  const view = toolDiff('edit_file', { path: 'x', oldString: 'line 3', newString: 'line 3\nline 3b' }, '')!;
  assert.equal(view.counts, '+1 \u22120');
  assert.deepEqual(
    view.lines.map(l => l.text),
    ['+line 3b'],
  );
});

test("a tool row shows the count the server sent (the approval's while it waits, the result's after)", () => {
  const edit = { path: 'x', oldString: 'a', newString: 'b' };
  assert.equal(toolDiff('edit_file', edit, '', undefined, '+1 \u22120')!.counts, '+1 \u22120');
  const cut = '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n... [diff cut, 900 more chars]\n';
  const view = toolDiff('edit_file', edit, 'ok', cut, '+40 \u221240')!;
  assert.equal(view.source, 'diff');
  assert.equal(view.counts, '+40 \u221240');
});

test('restore and redo say per file what they did: put back, deleted (again), created again', () => {
  const restored = { restored: ['a.py', 'new.txt', 'old.txt'], conflicts: [], redoId: 'r' };
  assert.equal(
    restoreText('code', { ...restored, deleted: ['new.txt'], created: ['old.txt'] }).text,
    'Restored checkpoint: 1 file put back (a.py), 1 deleted (new.txt), 1 created again (old.txt).',
  );
  assert.equal(
    restoreText('code', { ...restored, redoId: 'r2', deleted: ['old.txt'], created: ['new.txt'] }, true).text,
    'Redone: 1 file put back (a.py), 1 deleted again (old.txt), 1 created again (new.txt).',
  );
  assert.equal(
    restoreText('code', { restored: ['new.txt'], conflicts: [], redoId: 'r', deleted: ['new.txt'] }, true).text,
    'Redone: 1 file deleted again (new.txt).',
  );
  assert.equal(
    restoreText('code', { restored: ['a.py', 'b.py'], conflicts: [], redoId: 'r' }).text,
    'Restored checkpoint: 2 files put back (a.py, b.py).',
  );
});

test('an undo in the Changed files block is a line in the chat: which files went back', () => {
  assert.equal(undoneText(['a.py']), 'Undone: a.py is back as it was before the turn.');
  assert.equal(undoneText(['a.py', 'b.py']), 'Undone: 2 files are back as they were before the turn (a.py, b.py).');
  assert.equal(undoneText([]), undefined);
});
