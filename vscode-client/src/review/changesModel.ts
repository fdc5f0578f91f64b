// What the review UI shows, as plain data (no vscode import): approval previews, the "Changed files"
// block, which user turns have a checkpoint and the hunks still to review. (Tool-card diffs: webview/toolDiff.ts.)
import { countFiles, diffHunks, formatCounts } from '../shared/lineDiff';
import type { LineCounts } from '../shared/lineDiff';
import type {
  ApproveParams,
  ChangedFile,
  ChangeStatus,
  ChangesResult,
  CheckpointInfo,
  CheckpointRestoreResult,
  DiffHunk,
  FilePreview,
  RestoreMode,
} from '../shared/protocol';
import type { ApprovalPreviewView, ChangedFileView, ChangesEntry, ReviewMessage } from '../shared/webviewProtocol';

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
    // the server's count: the tool card's row counts the same change with the same diff
    const c = { additions: f.additions ?? 0, deletions: f.deletions ?? 0 };
    additions += c.additions;
    deletions += c.deletions;
    return {
      path: f.path,
      from: f.from ?? undefined,
      status: previewStatus(f),
      counts: f.binary ? 'binary' : formatCounts(c),
      binary: Boolean(f.binary),
    };
  });
  return { files: views, total: formatCounts({ additions, deletions }) };
}

/** An answered card of a resumed session: its "Proposed change" from the files the answer recorded (their
 *  counts, not their text). */
export function approvalPreviewOfRows(
  files: readonly ChangedFile[] | null | undefined,
): ApprovalPreviewView | undefined {
  if (!files?.length) return undefined;
  const views = files.map(f => ({
    path: f.path,
    from: f.from ?? undefined,
    status: f.status,
    counts: f.binary ? 'binary' : formatCounts({ additions: f.additions, deletions: f.deletions }),
    binary: Boolean(f.binary),
  }));
  const total = formatCounts(countFiles(files));
  return { files: views, total };
}

// --- the "Changed files" block ---

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
      path: f.path,
      from: f.from ?? undefined,
      status: f.status,
      reviewed: f.reviewed,
      binary: Boolean(f.binary),
      counts: f.binary ? 'binary' : formatCounts(own),
    };
    if (!f.binary && (own.additions !== f.additions || own.deletions !== f.deletions)) view.since = formatCounts(f);
    if (f.notCovered) view.notCovered = f.notCovered;
    return view;
  });
  return {
    taskId: r.taskId,
    checkpointId: r.checkpointId,
    files,
    total: formatCounts({ additions, deletions }),
    pending: files.filter(f => !f.reviewed).length,
  };
}

// --- checkpoints on user turns ---

export interface UserTurn {
  id: string;
  text: string;
  taskId?: string;
}

/**
 * Which user entry each checkpoint belongs to: by task id when the entry knows it (live turns), else by the
 * prompt text, newest checkpoint to the newest matching entry, keeping order (resumed transcripts).
 * Redo checkpoints (taken by a restore) belong to no turn.
 */
export function assignCheckpoints(
  users: readonly UserTurn[],
  checkpoints: readonly CheckpointInfo[],
): Map<string, string> {
  const out = new Map<string, string>();
  const turns = checkpoints.filter(c => (c.kind ?? 'turn') === 'turn');
  const byTask = new Map(users.filter(u => u.taskId).map(u => [u.taskId!, u]));
  const left: CheckpointInfo[] = [];
  for (const c of turns) {
    const u = byTask.get(c.taskId);
    if (u && !out.has(u.id)) out.set(u.id, c.id);
    else left.push(c);
  }
  let cursor = users.length - 1;
  for (const c of left) {
    // newest first
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

export const RESTORE_LABELS: Record<RestoreMode, string> = {
  code: 'Restore code',
  chat: 'Restore chat',
  both: 'Restore code and chat',
};

/** The chat's line after an Undo (or Undo all) in the Changed files block; none when nothing was undone. */
export function undoneText(paths: readonly string[]): string | undefined {
  if (!paths.length) return undefined;
  if (paths.length === 1) return `Undone: ${paths[0]} is back as it was before the turn.`;
  return `Undone: ${paths.length} files are back as they were before the turn (${paths.join(', ')}).`;
}

/** "1 file put back (a.py), 1 deleted again (new.txt)": each file by what the restore did to it. */
function filesDone(r: CheckpointRestoreResult, redo: boolean): string {
  const deleted = r.deleted ?? [];
  const created = r.created ?? [];
  const groups: [string, string[]][] = [
    ['put back', r.restored.filter(p => !deleted.includes(p) && !created.includes(p))],
    [redo ? 'deleted again' : 'deleted', deleted],
    ['created again', created],
  ];
  return groups
    .filter(([, paths]) => paths.length)
    .map(([done, paths], i) => {
      const noun = i ? '' : paths.length === 1 ? ' file' : ' files';
      return `${paths.length}${noun} ${done} (${paths.join(', ')})`;
    })
    .join(', ');
}

export function restoreText(
  mode: RestoreMode,
  r: CheckpointRestoreResult,
  redo = false,
): { text: string; level: 'info' | 'warn' } {
  const parts: string[] = [];
  const what = redo ? 'Redone' : 'Restored checkpoint';
  if (mode !== 'chat') {
    const done = filesDone(r, redo);
    parts.push(done ? `${what}: ${done}.` : `${what}: no files needed restoring.`);
  } else parts.push(`${what}: chat.`);
  if (mode !== 'code' && r.messagesRemoved)
    parts.push(`${r.messagesRemoved} message${r.messagesRemoved === 1 ? '' : 's'} removed from the session.`);
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
    if (!set) this.kept.set(path, (set = new Set()));
    set.add(hunk.header);
  }

  open(path: string, hunks: readonly DiffHunk[]): DiffHunk[] {
    const set = this.kept.get(path);
    return set ? hunks.filter(h => !set.has(h.header)) : [...hunks];
  }

  forget(path: string): void {
    this.kept.delete(path);
  }
}

/** The server's hunks when it sent them, else the same shape computed here. */
export function diffResultHunks(r: {
  before: string | null;
  after: string | null;
  hunks?: DiffHunk[];
  binary?: boolean;
}): DiffHunk[] {
  if (r.binary) return [];
  return r.hunks ?? diffHunks(r.before, r.after);
}

// --- webview → host messages of the review UI ---

const REVIEW_TYPES = new Set<string>([
  'openPreview',
  'openChange',
  'undoChange',
  'keepChange',
  'keepAll',
  'undoAll',
  'restore',
  'redo',
]);

export function isReviewMessage(m: { type: string }): m is ReviewMessage {
  return REVIEW_TYPES.has(m.type);
}
