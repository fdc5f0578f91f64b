// The diff a tool card shows, computed in the panel from the call's input, output or diff. Pure (no DOM).
import { classifyDiffLines, countUnified, diffHunks, formatCounts } from '../src/shared/lineDiff';
import type { DiffLineKind } from '../src/shared/lineDiff';

/** The file tools whose approval carries a preview (and whose cards show a diff). */
const FILE_TOOLS = new Set(['write_file', 'edit_file', 'multi_edit', 'apply_patch', 'move_file', 'delete_file']);

export interface ToolDiffView {
  counts?: string;
  lines: { kind: DiffLineKind; text: string }[];
  source: 'diff' | 'output' | 'input';
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** A unified diff from old → new text, with `-`/`+` lines only (what an edit asked for). */
function editLines(oldText: string, newText: string): { kind: DiffLineKind; text: string }[] {
  const out: { kind: DiffLineKind; text: string }[] = [];
  const a = oldText.split('\n');
  const b = newText.split('\n');
  // both snippets end where a line goes on in the file: "b" -> "b\nc" adds one line, as it does to the file
  for (const h of diffHunks(`${oldText}\n`, `${newText}\n`)) {
    // line numbers of a snippet would mislead: a neutral separator between its changed regions
    if (out.length) out.push({ kind: 'hunk', text: '\u22ef' });
    const oldFrom = h.oldLines ? h.oldStart - 1 : h.oldStart;
    const newFrom = h.newLines ? h.newStart - 1 : h.newStart;
    for (let i = 0; i < h.oldLines; i++) out.push({ kind: 'del', text: `-${a[oldFrom + i] ?? ''}` });
    for (let i = 0; i < h.newLines; i++) out.push({ kind: 'add', text: `+${b[newFrom + i] ?? ''}` });
  }
  return out;
}

/**
 * The diff a file tool's card shows: the unified diff in its result when the server sent one, else the
 * change its input asked for (edit_file / multi_edit old → new, apply_patch's patch). Undefined otherwise.
 * `counted`: the server's `+N −M` for the call (its result's files, or its approval's preview while it
 * waits), shown instead of a count of the lines here, so the row says what the approval card says.
 */
export function toolDiff(
  name: string,
  input: unknown,
  output: string,
  diff?: string,
  counted?: string,
): ToolDiffView | undefined {
  const view = shownDiff(name, input, output, diff);
  return view && counted ? { ...view, counts: counted } : view;
}

function shownDiff(name: string, input: unknown, output: string, diff?: string): ToolDiffView | undefined {
  const fromDiff = diff ? countUnified(diff) : undefined;
  if (diff && fromDiff) return { counts: formatCounts(fromDiff), lines: classifyDiffLines(diff), source: 'diff' };
  if (!FILE_TOOLS.has(name)) return undefined;
  const fromOutput = countUnified(output);
  if (fromOutput) return { counts: formatCounts(fromOutput), lines: classifyDiffLines(output), source: 'output' };
  const args = (input && typeof input === 'object' ? input : {}) as Record<string, unknown>;
  if (name === 'apply_patch') {
    const patch = str(args.patch) ?? str(args.diff) ?? str(args.input);
    const c = patch ? countUnified(patch) : undefined;
    return patch && c ? { counts: formatCounts(c), lines: classifyDiffLines(patch), source: 'input' } : undefined;
  }
  const edits =
    name === 'edit_file'
      ? [args]
      : name === 'multi_edit' && Array.isArray(args.edits)
        ? (args.edits as Record<string, unknown>[])
        : [];
  const lines = edits.flatMap((e, i) => {
    const o = str(e.oldString);
    const n = str(e.newString);
    const part = o !== undefined && n !== undefined ? editLines(o, n) : [];
    return i > 0 && part.length ? [{ kind: 'hunk' as const, text: '\u22ef' }, ...part] : part;
  });
  if (!lines.length) return undefined;
  const additions = lines.filter(l => l.kind === 'add').length;
  const deletions = lines.filter(l => l.kind === 'del').length;
  return { counts: formatCounts({ additions, deletions }), lines, source: 'input' };
}
