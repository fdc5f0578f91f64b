// Line diffs for the review UI: `+N −M` summaries and the hunks a CodeLens sits above. Pure (no vscode).
// The server's `shiro/changes/diff` sends its own hunks (the indices `shiro/changes/undo` takes); these
// functions compute the same shape locally for approval previews and as a fallback.
import { diffLines } from 'diff';
import type { DiffHunk } from './protocol';

export interface LineCounts {
  additions: number;
  deletions: number;
}

/** Split like a unified diff does: a missing final newline still counts as a line; "" has no lines. */
export function lineCount(text: string): number {
  if (!text) return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/**
 * Contiguous changed regions of `before` → `after`, no context lines. Lines are 1-based; for a pure
 * insert `oldStart` is the line before it (0 = at the top), for a pure delete `newStart` likewise.
 */
export function diffHunks(before: string | null, after: string | null): DiffHunk[] {
  const changes = diffLines(before ?? '', after ?? '');
  const hunks: DiffHunk[] = [];
  let oldLine = 0;
  let newLine = 0;
  let open: DiffHunk | undefined;
  const close = (): void => {
    if (!open) return;
    if (open.oldLines === 0) open.oldStart -= 1;
    if (open.newLines === 0) open.newStart -= 1;
    open.header = hunkHeader(open);
    hunks.push(open);
    open = undefined;
  };
  for (const change of changes) {
    const n = change.count ?? lineCount(change.value);
    if (!change.added && !change.removed) {
      close();
      oldLine += n;
      newLine += n;
      continue;
    }
    open ??= {
      index: hunks.length,
      oldStart: oldLine + 1,
      oldLines: 0,
      newStart: newLine + 1,
      newLines: 0,
      header: '',
    };
    if (change.removed) {
      open.oldLines += n;
      oldLine += n;
    } else {
      open.newLines += n;
      newLine += n;
    }
  }
  close();
  return hunks;
}

export function hunkHeader(h: Pick<DiffHunk, 'oldStart' | 'oldLines' | 'newStart' | 'newLines'>): string {
  return `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`;
}

export function countHunks(hunks: readonly Pick<DiffHunk, 'oldLines' | 'newLines'>[]): LineCounts {
  return hunks.reduce((c, h) => ({ additions: c.additions + h.newLines, deletions: c.deletions + h.oldLines }), {
    additions: 0,
    deletions: 0,
  });
}

export function countLines(before: string | null, after: string | null): LineCounts {
  return countHunks(diffHunks(before, after));
}

/** The lines a tool call changed in all its files, as the server counted them (its tool card's `files`). */
export function countFiles(files: readonly Partial<LineCounts>[]): LineCounts {
  return files.reduce<LineCounts>(
    (c, f) => ({ additions: c.additions + (f.additions ?? 0), deletions: c.deletions + (f.deletions ?? 0) }),
    { additions: 0, deletions: 0 },
  );
}

/** `+3 −1` (a real minus sign, as the peers show it). */
export function formatCounts(c: LineCounts): string {
  return `+${c.additions} \u2212${c.deletions}`;
}

/** 0-based line of the (after-side) document a hunk's CodeLens sits on. */
export function lensLine(h: Pick<DiffHunk, 'newStart' | 'newLines'>, documentLines: number): number {
  const line = h.newLines > 0 ? h.newStart - 1 : h.newStart;
  return Math.max(0, Math.min(line, Math.max(0, documentLines - 1)));
}

/** The 0-based after-side lines a hunk covers ([start, end), empty for a pure delete). */
export function hunkRange(h: Pick<DiffHunk, 'newStart' | 'newLines'>): { start: number; end: number } {
  const start = h.newLines > 0 ? h.newStart - 1 : h.newStart;
  return { start, end: start + h.newLines };
}

/** Counts from a unified diff's text (a tool result that carries one): lines starting with + / -, not headers. */
export function countUnified(text: string): LineCounts | undefined {
  const lines = text.split('\n');
  if (!lines.some(l => l.startsWith('@@'))) return undefined;
  let additions = 0;
  let deletions = 0;
  for (const l of lines) {
    if (l.startsWith('+++') || l.startsWith('---')) continue;
    if (l.startsWith('+')) additions++;
    else if (l.startsWith('-')) deletions++;
  }
  return { additions, deletions };
}

export type DiffLineKind = 'add' | 'del' | 'hunk' | 'meta' | 'context' | 'text';

/** Classify each line of a text that may hold a unified diff (for colouring it in a tool card). */
export function classifyDiffLines(text: string): { kind: DiffLineKind; text: string }[] {
  let inDiff = false;
  return text.split('\n').map(line => {
    if (line.startsWith('@@')) {
      inDiff = true;
      return { kind: 'hunk', text: line };
    }
    if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff '))
      return { kind: 'meta', text: line };
    if (inDiff && line.startsWith('+')) return { kind: 'add', text: line };
    if (inDiff && line.startsWith('-')) return { kind: 'del', text: line };
    if (inDiff && line.startsWith(' ')) return { kind: 'context', text: line };
    return { kind: 'text', text: line };
  });
}
