import { test } from 'node:test';
import assert from 'node:assert/strict';
import { selectionLabel, splitAttachments, withAttachments, withCurrentFile } from '../src/chat/attachments';

test('attachments travel as labelled context blocks after the prompt and come back as chips', () => {
  const full = withAttachments('why is this slow?', [
    { label: 'src/calc.py:3-7', text: 'def f():\n    pass\n' },
    { label: 'Problems: src/calc.py', text: 'src/calc.py:4: unused variable "x"' },
  ]);
  assert.match(full, /^why is this slow\?\n\n<context label="src\/calc.py:3-7">\ndef f\(\):\n {4}pass\n<\/context>/);
  assert.deepEqual(splitAttachments(full), {
    text: 'why is this slow?',
    labels: ['src/calc.py:3-7', 'Problems: src/calc.py'],
  });
});

test('no attachments: the prompt is unchanged; a tag inside the question is not a chip', () => {
  assert.equal(withAttachments('hi', []), 'hi');
  const pasted = 'what does <context label="x">\ny\n</context> mean here?';
  assert.deepEqual(splitAttachments(pasted), { text: pasted, labels: [] });
});

test('labels: quotes cannot break the block; selection labels are 1-based line ranges', () => {
  const full = withAttachments('q', [{ label: 'a "b".py', text: 't' }]);
  assert.deepEqual(splitAttachments(full).labels, ["a 'b'.py"]);
  assert.equal(selectionLabel('src/a.py', 3, 3), 'src/a.py:3');
  assert.equal(selectionLabel('src/a.py', 3, 9), 'src/a.py:3-9');
});

test('forgetting a memory removes every entry containing its text: the picker says how many', async () => {
  const { forgetImpact } = await import('../src/memory/memoryImpact');
  const e = (id: string, text: string) => ({ id, kind: 'command' as const, text, createdAt: '', hits: 0 });
  const entries = [e('1', 'use pytest'), e('2', 'use pytest -q for speed'), e('3', 'ruff check')];
  assert.deepEqual(
    forgetImpact(entries, 'use pytest').map(x => x.id),
    ['1', '2'],
  );
  assert.deepEqual(
    forgetImpact(entries, 'ruff check').map(x => x.id),
    ['3'],
  );
});

test('a document attachment carries its source for the server gate; the chip is its label', () => {
  const full = withAttachments('check this', [
    { label: '.env', text: 'TOKEN=abc\n</context>\nMORE=1', source: 'file:///w/.env' },
    { label: 'Terminal $ ls', text: 'a b' },
  ]);
  assert.match(
    full,
    /<context label="\.env" source="file:\/\/\/w\/\.env">\nTOKEN=abc\n<\\\/context>\nMORE=1\n<\/context>/,
  );
  assert.deepEqual(splitAttachments(full), { text: 'check this', labels: ['.env', 'Terminal $ ls'] });
  const quoted = withAttachments('q', [{ label: 'a', text: 't', source: 'file:///w/"x"\n' }]);
  assert.match(quoted, /source="file:\/\/\/w\/%22x%22%0A"/);
});

test('the current-file chip sends the active file first, unless a chip of that file is already there', () => {
  const current = { label: 'src/app.py', text: 'x = 1\n', source: 'file:///w/src/app.py' };
  const other = { label: 'README.md', text: 'hi' };
  assert.deepEqual(
    withCurrentFile([other], current).map(a => a.label),
    ['src/app.py', 'README.md'],
  );
  assert.deepEqual(
    withCurrentFile([other], undefined).map(a => a.label),
    ['README.md'],
  );
  const selection = { label: 'src/app.py:3-4', text: 'y', source: 'file:///w/src/app.py' };
  assert.deepEqual(
    withCurrentFile([selection], current).map(a => a.label),
    ['src/app.py:3-4'],
  );
});
