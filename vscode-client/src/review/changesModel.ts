// What the review UI shows, as plain data (no vscode import): approval previews, the "Changed files"
// block, which user turns have a checkpoint, the hunks still to review, and tool-card diffs.
import { classifyDiffLines, countLines, countUnified, diffHunks, formatCounts } from './lineDiff';
import type { DiffLineKind, LineCounts } from './lineDiff';
import type {
  ApproveParams, ChangedFile, ChangeStatus, ChangesResult, CheckpointInfo, CheckpointRestoreResult, DiffHunk, FilePreview,
  RestoreMode,
} from '../shared/protocol';

/** The file tools whose approval carries a preview (and whose cards show a diff). */
export const FILE_TOOLS = new Set(['write_file', 'edit_file', 'multi_edit', 'apply_patch', 'move_file', 'delete_file']);

export interface PreviewFileView { path: string; from?: string; status: ChangeStatus; counts: string; binary: boolean }
export interface ApprovalPreviewView { files: PreviewFileView[]; total: string }

export function previewFiles(p: Pick<ApproveParams, 'preview' | 'previews'>): FilePreview[] {
  if (p.previews && p.previews.length) return p.previews;
  return p.preview ? [p.preview] : [];
}

export function previewStatus(f: FilePreview): ChangeStatus {
  if (f.from) return 'moved';
  if (f.before === null) return 'added';
  if (f.after === null) return 'deleted';
  return 'modified';
}

export function approvalPreview(p: Pick<ApproveParams, 'preview' | 'previews'>): ApprovalPreviewView | undefined {
  const files = previewFiles(p);
  if (!files.length) return undefined;
  let additions = 0;
  let deletions = 0;
  const views = files.map(f => {
    const c = f.binary ? { additions: 0, deletions: 0 } : countLines(f.before, f.after);
    additions += c.additions;
    deletions += c.deletions;
    return { path: f.path, from: f.from ?? undefined, status: previewStatus(f), counts: f.binary ? 'binary' : formatCounts(c), binary: Boolean(f.binary) };
  });
  return { files: views, total: formatCounts({ additions, deletions }) };
}

// --- the "Changed files" block ---

export interface ChangedFileView {
  path: string; from?: string; status: ChangeStatus; reviewed: boolean; binary: boolean;
  /** What this turn itself changed in the file (`+N −M`), as Copilot and Cline show per request. */
  counts: string;
  /** The turn's checkpoint vs the file now, when that differs from `counts` (a later turn, an undo or the
   *  user changed the file since). */
  since?: string;
  /** Why undo and restore leave this file as it is (no earlier bytes recorded, or the user saved it). */
  notCovered?: string;
}

export const NOT_COVERED_LABEL = 'not covered \u2014 left as it is';
export interface ChangesEntry {
  id: string; kind: 'changes'; taskId: string; checkpointId: string | null; files: ChangedFileView[]; total: string;
  pending: number;
}

/** The lines the turn itself added and deleted: fixed by the server at the turn's end; before that (or from a
 *  server that does not send them) the checkpoint vs now, which is the same thing until the file changes again. */
export function turnCounts(f: ChangedFile): LineCounts {
  return typeof f.turnAdditions === 'number' && typeof f.turnDeletions === 'number'
    ? { additions: f.turnAdditions, deletions: f.turnDeletions }
    : { additions: f.additions, deletions: f.deletions };
}

export function changesView(r: ChangesResult): Omit<ChangesEntry, 'id' | 'kind'> | undefined {
  if (!r.taskId || !r.files.length) return undefined;
  let additions = 0;
  let deletions = 0;
  const files = r.files.map((f: ChangedFile): ChangedFileView => {
    const own = turnCounts(f);
    additions += own.additions;
    deletions += own.deletions;
    const view: ChangedFileView = {
      path: f.path, from: f.from ?? undefined, status: f.status, reviewed: f.reviewed, binary: Boolean(f.binary),
      counts: f.binary ? 'binary' : formatCounts(own),
    };
    if (!f.binary && (own.additions !== f.additions || own.deletions !== f.deletions)) view.since = formatCounts(f);
    if (f.notCovered) view.notCovered = f.notCovered;
    return view;
  });
  return {
    taskId: r.taskId, checkpointId: r.checkpointId, files, total: formatCounts({ additions, deletions }),
    pending: files.filter(f => !f.reviewed).length,
  };
}

// --- checkpoints on user turns ---

export interface UserTurn { id: string; text: string; taskId?: string }

/**
 * Which user entry each checkpoint belongs to: by task id when the entry knows it (live turns), else by the
 * prompt text, newest checkpoint to the newest matching entry, keeping order (resumed transcripts).
 * Redo checkpoints (taken by a restore) belong to no turn.
 */
export function assignCheckpoints(users: readonly UserTurn[], checkpoints: readonly CheckpointInfo[]): Map<string, string> {
  const out = new Map<string, string>();
  const turns = checkpoints.filter(c => (c.kind ?? 'turn') === 'turn');
  const byTask = new Map(users.filter(u => u.taskId).map(u => [u.taskId!, u]));
  const left: CheckpointInfo[] = [];
  for (const c of turns) {
    const u = byTask.get(c.taskId);
    if (u && !out.has(u.id)) out.set(u.id, c.id); else left.push(c);
  }
  let cursor = users.length - 1;
  for (const c of left) {   // newest first
    for (let i = cursor; i >= 0; i--) {
      const u = users[i];
      if (out.has(u.id) || u.taskId || u.text.trim() !== c.prompt.trim()) continue;
      out.set(u.id, c.id);
      cursor = i - 1;
      break;
    }
  }
  return out;
}

export interface RestoredEntry {
  id: string; kind: 'restored'; text: string; mode: RestoreMode; redoId: string | null; redone: boolean; level: 'info' | 'warn';
}

export const RESTORE_LABELS: Record<RestoreMode, string> = {
  code: 'Restore code', chat: 'Restore chat', both: 'Restore code and chat',
};

export function restoreText(mode: RestoreMode, r: CheckpointRestoreResult, redo = false): { text: string; level: 'info' | 'warn' } {
  const parts: string[] = [];
  const what = redo ? 'Redone' : 'Restored checkpoint';
  if (mode !== 'chat') {
    parts.push(r.restored.length ? `${what}: ${r.restored.length} file${r.restored.length === 1 ? '' : 's'} put back (${r.restored.join(', ')}).`
      : `${what}: no files needed restoring.`);
  } else parts.push(`${what}: chat.`);
  if (mode !== 'code' && r.messagesRemoved) parts.push(`${r.messagesRemoved} message${r.messagesRemoved === 1 ? '' : 's'} removed from the session.`);
  if (r.conflicts.length) parts.push(`Left alone (you changed them since): ${r.conflicts.join(', ')}.`);
  const notCovered = r.notCovered ?? [];
  if (notCovered.length) parts.push(`Not covered \u2014 left as it is: ${notCovered.join(', ')}.`);
  return { text: parts.join(' '), level: r.conflicts.length || notCovered.length ? 'warn' : 'info' };
}

// --- hunks still to review in an open diff ---

/** Per file: the hunks the user kept (by header, which survives a refresh of the same diff). */
export class HunkReview {
  private readonly kept = new Map<string, Set<string>>();

  keep(path: string, hunk: DiffHunk): void {
    let set = this.kept.get(path);
    if (!set) this.kept.set(path, set = new Set());
    set.add(hunk.header);
  }

  open(path: string, hunks: readonly DiffHunk[]): DiffHunk[] {
    const set = this.kept.get(path);
    return set ? hunks.filter(h => !set.has(h.header)) : [...hunks];
  }

  forget(path: string): void { this.kept.delete(path); }
}

/** The server's hunks when it sent them, else the same shape computed here. */
export function diffResultHunks(r: { before: string | null; after: string | null; hunks?: DiffHunk[]; binary?: boolean }): DiffHunk[] {
  if (r.binary) return [];
  return r.hunks ?? diffHunks(r.before, r.after);
}

// --- tool cards ---

export interface ToolDiffView { counts?: string; lines: { kind: DiffLineKind; text: string }[]; source: 'diff' | 'output' | 'input' }

function str(v: unknown): string | undefined { return typeof v === 'string' ? v : undefined; }

/** A unified diff from old → new text, with `-`/`+` lines only (what an edit asked for). */
function editLines(oldText: string, newText: string): { kind: DiffLineKind; text: string }[] {
  const out: { kind: DiffLineKind; text: string }[] = [];
  const a = oldText.split('\n');
  const b = newText.split('\n');
  for (const h of diffHunks(oldText, newText)) {
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
 */
export function toolDiff(name: string, input: unknown, output: string, diff?: string): ToolDiffView | undefined {
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
  const edits = name === 'edit_file' ? [args] : name === 'multi_edit' && Array.isArray(args.edits) ? args.edits as Record<string, unknown>[] : [];
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

// --- webview → host messages of the review UI ---

export type ReviewMessage =
  | { type: 'openPreview'; id: string; index: number }
  | { type: 'openChange'; taskId: string; path: string }
  | { type: 'undoChange'; taskId: string; path: string }
  | { type: 'keepChange'; taskId: string; path: string }
  | { type: 'keepAll'; taskId: string }
  | { type: 'undoAll'; taskId: string }
  | { type: 'restore'; id: string }
  | { type: 'redo'; id: string };

const REVIEW_TYPES = new Set<string>(['openPreview', 'openChange', 'undoChange', 'keepChange', 'keepAll', 'undoAll', 'restore', 'redo']);

export function isReviewMessage(m: { type: string }): m is ReviewMessage {
  return REVIEW_TYPES.has(m.type);
}
