import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  classifyDiffLines,
  countLines,
  countUnified,
  diffHunks,
  formatCounts,
  hunkRange,
  lensLine,
  lineCount,
} from '../src/shared/lineDiff';

const lines = (n: number, f = (i: number) => `line ${i}`): string =>
  Array.from({ length: n }, (_, i) => `${f(i + 1)}\n`).join('');

test('line counts follow unified diff: a last line without newline counts, "" has none', () => {
  assert.equal(lineCount(''), 0);
  assert.equal(lineCount('a'), 1);
  assert.equal(lineCount('a\n'), 1);
  assert.equal(lineCount('a\nb'), 2);
});

test('three separate edits give three hunks with 1-based positions on both sides', () => {
  const before = lines(30);
  const after = before
    .replace('line 2\n', 'line two\n')
    .replace('line 15\n', '')
    .replace('line 28\n', 'line 28\nextra a\nextra b\n');
  const hunks = diffHunks(before, after);
  assert.deepEqual(
    hunks.map(h => [h.index, h.oldStart, h.oldLines, h.newStart, h.newLines]),
    [
      [0, 2, 1, 2, 1], // replaced line 2
      [1, 15, 1, 14, 0], // deleted line 15: new side names the line before
      // inserted after old line 28 (new 27, one line was deleted above): old side names the line before
      [2, 28, 0, 28, 2],
    ],
  );
  assert.equal(hunks[1].header, '@@ -15,1 +14,0 @@');
  assert.deepEqual(countLines(before, after), { additions: 3, deletions: 2 });
});

test('a new file is all additions, a deleted one all deletions', () => {
  assert.deepEqual(countLines(null, 'a\nb\n'), { additions: 2, deletions: 0 });
  assert.deepEqual(countLines('a\nb\nc\n', null), { additions: 0, deletions: 3 });
  assert.deepEqual(
    diffHunks(null, 'a\n').map(h => [h.oldStart, h.oldLines, h.newStart, h.newLines]),
    [[0, 0, 1, 1]],
  );
  assert.deepEqual(diffHunks('same\n', 'same\n'), []);
});

test('the summary reads +N −M with a real minus sign', () => {
  assert.equal(formatCounts({ additions: 3, deletions: 1 }), '+3 \u22121');
});

test('a CodeLens sits on the first changed line, or just after the line a delete follows, inside the document', () => {
  assert.equal(lensLine({ newStart: 5, newLines: 2 }, 10), 4);
  assert.equal(lensLine({ newStart: 4, newLines: 0 }, 10), 4);
  assert.equal(lensLine({ newStart: 0, newLines: 0 }, 10), 0);
  assert.equal(lensLine({ newStart: 10, newLines: 0 }, 10), 9);
  assert.deepEqual(hunkRange({ newStart: 5, newLines: 2 }), { start: 4, end: 6 });
});

test('counts and colours of a unified diff in a tool result; prose is not a diff', () => {
  const diff = '--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-old\n+new\n+more\n keep';
  assert.deepEqual(countUnified(diff), { additions: 2, deletions: 1 });
  assert.equal(countUnified('Replaced 1 occurrence(s) in x.py'), undefined);
  assert.deepEqual(
    classifyDiffLines(diff).map(l => l.kind),
    ['meta', 'meta', 'hunk', 'del', 'add', 'add', 'context'],
  );
  assert.deepEqual(
    classifyDiffLines('- a list item\n+1').map(l => l.kind),
    ['text', 'text'],
  );
});
