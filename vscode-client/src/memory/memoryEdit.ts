// The editable project-memory document: render the entries with their ids, parse an edited copy
// back, and turn the difference into shiro/memory/* operations (pure logic: no vscode, no server).
import type { MemoryEntry, MemoryKind } from '../shared/protocol';

/** The kinds of memory and what each means: the extension's one list (the values are the generated
 *  `MemoryKind`; tsc fails when the server's kinds change and this list does not follow). */
const KIND_MEANINGS: Readonly<Record<MemoryKind, string>> = {
  fact: 'how it is',
  decision: 'what was chosen and why',
  gotcha: 'a trap',
  command: 'an invocation that works',
};
export const MEMORY_KINDS: readonly { kind: MemoryKind; meaning: string }[] = (
  Object.entries(KIND_MEANINGS) as [MemoryKind, string][]
).map(([kind, meaning]) => ({ kind, meaning }));
export const KINDS: readonly MemoryKind[] = MEMORY_KINDS.map(k => k.kind);
export const MEMORY_HEADING = '# Shiro project memory';
export const NOTES_HEADING = '# Project notes';
const HELP =
  '<!-- Edit or delete lines and save (Ctrl+S). A new line "- **fact** text" adds a memory; kinds: ' +
  `${KINDS.join(', ')}. Keep each line's id comment: it says which memory the line is. -->`;

/** One memory line: `- **kind** text  _(recalled 3x)_ <!-- id:… -->` (the recall count and id are optional). */
const LINE = /^- \*\*([a-z]+)\*\* (.*?)(?: {2}_\(recalled \d+x\)_)?(?: ?<!-- id:(\S+) -->)?\s*$/;

export function entryLine(e: MemoryEntry): string {
  return `- **${e.kind}** ${e.text}${e.hits > 0 ? `  _(recalled ${e.hits}x)_` : ''} <!-- id:${e.id} -->`;
}

export function renderMemoryDocument(entries: readonly MemoryEntry[], notesSection: string): string {
  const lines = [MEMORY_HEADING, '', HELP, ''];
  if (!entries.length) lines.push('_nothing remembered about this project yet_');
  for (const e of entries) lines.push(entryLine(e));
  lines.push('', notesSection.trimEnd());
  return lines.join('\n') + '\n';
}

export interface ParsedEntry {
  kind: MemoryKind;
  text: string;
  id?: string;
  line: number;
}
export interface ParsedDocument {
  entries: ParsedEntry[];
  problems: string[];
  rest: string;
}

/** The memory section's entries (1-based line numbers) and everything from the notes heading on. */
export function parseMemoryDocument(text: string): ParsedDocument {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const notesAt = lines.findIndex(l => l.trim() === NOTES_HEADING || l.startsWith(`${NOTES_HEADING} `));
  const section = notesAt < 0 ? lines : lines.slice(0, notesAt);
  const entries: ParsedEntry[] = [];
  const problems: string[] = [];
  section.forEach((raw, index) => {
    const line = raw.trim();
    const n = index + 1;
    if (!line || line === MEMORY_HEADING || line.startsWith('<!--') || line.startsWith('_nothing remembered')) return;
    const m = LINE.exec(line);
    if (!m) {
      problems.push(`Line ${n} is not a memory line ("- **fact** text"): ${clip(line)}`);
      return;
    }
    const [, kind, body, id] = m;
    if (!(KINDS as readonly string[]).includes(kind)) {
      problems.push(`Line ${n}: "${kind}" is not a kind of memory (use ${KINDS.join(', ')}).`);
      return;
    }
    const clean = body.trim();
    if (!clean) {
      problems.push(`Line ${n} has no text; delete the whole line to forget that memory.`);
      return;
    }
    entries.push({ kind: kind as MemoryKind, text: clean, line: n, ...(id ? { id } : {}) });
  });
  return { entries, problems, rest: notesAt < 0 ? '' : lines.slice(notesAt).join('\n').trimEnd() };
}

export type MemoryOp =
  | { op: 'remember'; kind: MemoryKind; text: string }
  | { op: 'forget'; id: string; text: string }
  | { op: 'change'; id: string; old: MemoryEntry; kind: MemoryKind; text: string };

export interface MemoryPlan {
  ops: MemoryOp[];
  problems: string[];
}

/**
 * What saving `edited` means, against the entries the document was made from (`base`). Any problem
 * means nothing may be applied: the document stays as the user typed it and the words say why.
 */
export function planMemoryEdits(base: readonly MemoryEntry[], baseRest: string, edited: string): MemoryPlan {
  const parsed = parseMemoryDocument(edited);
  const problems = [...parsed.problems];
  if (parsed.rest.trimEnd() !== baseRest.trimEnd()) {
    problems.push(
      'The project notes below the memory are not edited here: change .shiro/memory/project.md ' +
        '(or use /notes), and undo your changes to that part of this document.',
    );
  }
  const byId = new Map(base.map(e => [e.id, e]));
  const seen = new Set<string>();
  const ops: MemoryOp[] = [];
  for (const p of parsed.entries) {
    if (p.id === undefined) {
      ops.push({ op: 'remember', kind: p.kind, text: p.text });
      continue;
    }
    const old = byId.get(p.id);
    if (!old) {
      problems.push(
        `Line ${p.line} names a memory this document did not come with (id ${p.id}); ` +
          'remove its id comment to add it as new.',
      );
      continue;
    }
    if (seen.has(p.id)) {
      problems.push(`Line ${p.line} repeats the id of another line (${p.id}); each memory appears once.`);
      continue;
    }
    seen.add(p.id);
    if (old.kind !== p.kind || old.text !== p.text)
      ops.push({ op: 'change', id: p.id, old, kind: p.kind, text: p.text });
  }
  for (const e of base) if (!seen.has(e.id)) ops.push({ op: 'forget', id: e.id, text: e.text });
  return { ops, problems };
}

/** Entries the plan changes or removes that the server no longer has as the document showed them. */
export function conflicts(plan: MemoryPlan, now: readonly MemoryEntry[]): string[] {
  const current = new Map(now.map(e => [e.id, e]));
  const out: string[] = [];
  for (const op of plan.ops) {
    if (op.op === 'remember') continue;
    const was = op.op === 'change' ? op.old.text : op.text;
    const found = current.get(op.id);
    if (!found) out.push(`"${clip(was)}" was removed elsewhere since this document was opened.`);
    else if (found.text !== was) out.push(`"${clip(was)}" was changed elsewhere (now "${clip(found.text)}").`);
  }
  return out;
}

export function describePlan(plan: MemoryPlan): string {
  const count = (op: MemoryOp['op']): number => plan.ops.filter(o => o.op === op).length;
  const parts = [
    [count('remember'), 'added'],
    [count('change'), 'changed'],
    [count('forget'), 'deleted'],
  ]
    .filter(([n]) => (n as number) > 0)
    .map(([n, what]) => `${n} ${what}`);
  return parts.length ? `project memory saved: ${parts.join(', ')}.` : 'project memory: nothing changed.';
}

const clip = (s: string, n = 60): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
