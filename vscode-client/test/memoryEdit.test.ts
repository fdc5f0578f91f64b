import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  conflicts,
  describePlan,
  entryLine,
  parseMemoryDocument,
  planMemoryEdits,
  renderMemoryDocument,
} from '../src/memory/memoryEdit';
import type { MemoryEntry } from '../src/shared/protocol';

const entry = (id: string, kind: MemoryEntry['kind'], text: string, hits = 0): MemoryEntry => ({
  id,
  kind,
  text,
  hits,
  createdAt: '2026-11-30T12:00:00Z',
});
const BASE = [
  entry('m1', 'command', 'use pytest -q', 3),
  entry('m2', 'gotcha', 'the parser caches by path'),
  entry('m3', 'fact', 'docs live in docs/'),
];
const NOTES = '# Project notes\n\nship on Fridays';
const doc = renderMemoryDocument(BASE, NOTES);
const edit = (from: string, to: string): string => {
  assert.ok(doc.includes(from), from);
  return doc.replace(from, to);
};

test('the document lists each memory with its kind, recall count and id, then the notes', () => {
  assert.match(doc, /^# Shiro project memory\n/);
  assert.ok(doc.includes('- **command** use pytest -q  _(recalled 3x)_ <!-- id:m1 -->'));
  assert.ok(doc.includes('- **gotcha** the parser caches by path <!-- id:m2 -->'));
  assert.ok(doc.trimEnd().endsWith('ship on Fridays'));
  assert.deepEqual(
    parseMemoryDocument(doc).entries.map(e => [e.id, e.kind, e.text]),
    [
      ['m1', 'command', 'use pytest -q'],
      ['m2', 'gotcha', 'the parser caches by path'],
      ['m3', 'fact', 'docs live in docs/'],
    ],
  );
  assert.deepEqual(planMemoryEdits(BASE, NOTES, doc), { ops: [], problems: [] });
});

test('saving unchanged text changes nothing; an edit, a deletion and a new line become operations', () => {
  let edited = edit('use pytest -q', 'use pytest -q -x');
  edited = edited.replace(`${entryLine(BASE[1])}\n`, '');
  edited = edited.replace(entryLine(BASE[2]), `${entryLine(BASE[2])}\n- **decision** keep the CLI thin`);
  const plan = planMemoryEdits(BASE, NOTES, edited);
  assert.deepEqual(plan.problems, []);
  assert.deepEqual(plan.ops, [
    { op: 'change', id: 'm1', old: BASE[0], kind: 'command', text: 'use pytest -q -x' },
    { op: 'remember', kind: 'decision', text: 'keep the CLI thin' },
    { op: 'forget', id: 'm2', text: 'the parser caches by path' },
  ]);
  assert.equal(describePlan(plan), 'project memory saved: 1 added, 1 changed, 1 deleted.');
});

test('a kind can be changed on its own', () => {
  const plan = planMemoryEdits(BASE, NOTES, edit('- **fact** docs live', '- **decision** docs live'));
  assert.deepEqual(plan.ops, [{ op: 'change', id: 'm3', old: BASE[2], kind: 'decision', text: 'docs live in docs/' }]);
});

test('lines that do not parse are reported by line number and nothing is applied', () => {
  const plan = planMemoryEdits(BASE, NOTES, edit('- **fact** docs live in docs/', '* docs live in docs/'));
  assert.equal(plan.problems.length, 1);
  assert.match(plan.problems[0], /^Line \d+ is not a memory line/);
  const kind = planMemoryEdits(BASE, NOTES, edit('**gotcha**', '**trap**'));
  assert.match(kind.problems[0], /"trap" is not a kind of memory \(use fact, decision, gotcha, command\)/);
  const empty = planMemoryEdits(
    BASE,
    NOTES,
    edit('- **fact** docs live in docs/ <!-- id:m3 -->', '- **fact**  <!-- id:m3 -->'),
  );
  assert.match(empty.problems[0], /no text; delete the whole line/);
});

test('an unknown or repeated id, or edited notes, are problems in words', () => {
  const unknown = planMemoryEdits(BASE, NOTES, edit('id:m3', 'id:m9'));
  assert.ok(unknown.problems.some(p => /did not come with \(id m9\)/.test(p)));
  const twice = planMemoryEdits(BASE, NOTES, edit(entryLine(BASE[2]), `${entryLine(BASE[2])}\n${entryLine(BASE[2])}`));
  assert.ok(twice.problems.some(p => /repeats the id/.test(p)));
  const notes = planMemoryEdits(BASE, NOTES, edit('ship on Fridays', 'ship on Mondays'));
  assert.ok(notes.problems.some(p => /project notes below the memory are not edited here/.test(p)));
});

test('a memory changed or removed elsewhere since the document was opened is a conflict', () => {
  const plan = planMemoryEdits(
    BASE,
    NOTES,
    edit('use pytest -q', 'use pytest -q -x').replace(`${entryLine(BASE[1])}\n`, ''),
  );
  assert.deepEqual(conflicts(plan, BASE), []);
  const now = [entry('m1', 'command', 'use pytest -q --ff'), BASE[2]];
  const found = conflicts(plan, now);
  assert.equal(found.length, 2);
  assert.match(found[0], /"use pytest -q" was changed elsewhere \(now "use pytest -q --ff"\)/);
  assert.match(found[1], /"the parser caches by path" was removed elsewhere/);
});

test('an empty memory renders a placeholder that parses as no entries', () => {
  const empty = renderMemoryDocument([], NOTES);
  assert.match(empty, /nothing remembered/);
  assert.deepEqual(planMemoryEdits([], NOTES, empty), { ops: [], problems: [] });
  const added = planMemoryEdits(
    [],
    NOTES,
    empty.replace('_nothing remembered about this project yet_', '- **fact** it is a monorepo'),
  );
  assert.deepEqual(added.ops, [{ op: 'remember', kind: 'fact', text: 'it is a monorepo' }]);
});
