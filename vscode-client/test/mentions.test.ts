import { test } from 'node:test';
import assert from 'node:assert/strict';
import { activeToken, applyPick, rankCandidates } from '../src/shared/mentions';
import type { Candidate } from '../src/shared/mentions';

test('the token at the caret: @word after a space or the start, /word only as the first word', () => {
  assert.deepEqual(activeToken('look at @src/ca', 15), { trigger: '@', start: 8, end: 15, query: 'src/ca' });
  assert.deepEqual(activeToken('@', 1), { trigger: '@', start: 0, end: 1, query: '' });
  assert.deepEqual(activeToken('/comp', 5), { trigger: '/', start: 0, end: 5, query: 'comp' });
  assert.equal(activeToken('mail me@example.com', 19), undefined, 'an e-mail address is not a mention');
  assert.equal(activeToken('/compact now', 12), undefined, 'past the command word');
  assert.equal(activeToken('a / b', 3), undefined);
  assert.equal(activeToken('@src done', 9), undefined, 'the caret left the token');
});

const files: Candidate[] = [
  { kind: 'file', value: 'src/calc.py', label: 'calc.py' },
  { kind: 'file', value: 'tests/test_calc.py', label: 'test_calc.py' },
  { kind: 'file', value: 'docs/calculator-notes.md', label: 'calculator-notes.md' },
  { kind: 'folder', value: 'src/', label: 'src/' },
  { kind: 'selection', value: 'selection', label: 'Current selection' },
  { kind: 'problems', value: 'problems', label: 'Problems' },
];

test('ranking: exact name, then name prefix, then inside the name, then the path, then fuzzy', () => {
  assert.deepEqual(
    rankCandidates('calc.py', files)
      .map(c => c.value)
      .slice(0, 2),
    ['src/calc.py', 'tests/test_calc.py'],
  );
  assert.deepEqual(
    rankCandidates('calc', files)
      .map(c => c.value)
      .slice(0, 3),
    ['src/calc.py', 'docs/calculator-notes.md', 'tests/test_calc.py'],
  );
  assert.deepEqual(
    rankCandidates('tstclc', files).map(c => c.value),
    ['tests/test_calc.py'],
  );
  assert.deepEqual(rankCandidates('zzz', files), []);
  assert.equal(rankCandidates('prob', files)[0].kind, 'problems');
});

test('an empty query lists the special entries first, then short paths', () => {
  assert.deepEqual(
    rankCandidates('', files)
      .map(c => c.kind)
      .slice(0, 2)
      .sort(),
    ['problems', 'selection'],
  );
  assert.equal(rankCandidates('', files, 3).length, 3);
});

test('picking: a command completes the word; a mention leaves the text (it becomes a chip)', () => {
  const slash = activeToken('/comp', 5)!;
  assert.deepEqual(applyPick('/comp', slash, { kind: 'command', value: 'compact', label: '/compact' }), {
    text: '/compact ',
    caret: 9,
  });
  const text = 'explain @calc please';
  const at = activeToken(text, 13)!;
  assert.deepEqual(applyPick(text, at, files[0]), { text: 'explain please', caret: 8 });
});
