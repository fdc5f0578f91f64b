// Reviewable edits in VS Code: approval previews in the diff editor (read-only virtual "before"/"after"),
// the "Changed files" block (checkpoint vs now, Keep/Undo per file and all), Undo/Keep per hunk as CodeLenses
// on the real file, and "Restore checkpoint" (code, chat or both) with Redo. The server does the work
// (shiro/changes*, shiro/checkpoint/*); this module asks it and shows the answers.
import * as vscode from 'vscode';
import type { ChatModel } from '../chat/chatModel';
import {
  assignCheckpoints,
  changesView,
  diffResultHunks,
  HunkReview,
  previewFiles,
  RESTORE_LABELS,
  restoreText,
  undoneText,
} from './changesModel';
import type { UserTurn } from './changesModel';
import { errorReason } from '../server/errors';
import { hunkRange, lensLine } from '../shared/lineDiff';
import { Method, asResumeResult } from '../shared/protocol';
import type {
  ApproveParams,
  ChangesResult,
  CheckpointListResult,
  CheckpointRestoreResult,
  DiffHunk,
  FilePreview,
  ResumeResult,
  RestoreMode,
  SessionInfo,
  TurnInfo,
} from '../shared/protocol';
import type { ShiroServer } from '../server/server';
import type { ChangesEntry, RestoredEntry, ReviewMessage } from '../shared/webviewProtocol';

export const DIFF_SCHEME = 'shiro-diff';
export const UNDO_HUNK_COMMAND = 'shiro.undoHunk';
export const KEEP_HUNK_COMMAND = 'shiro.keepHunk';
/** Files of one turn that get hunk lenses without being opened (the block lists them all). */
const MAX_REVIEWED_FILES = 50;

/** Read-only documents for the diff editor's virtual sides (checkpoint content, proposed content). */
export class DiffDocuments implements vscode.TextDocumentContentProvider {
  private readonly docs = new Map<string, string>();
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;

  /** `shiro-diff:/<path>?<tag>`: the path keeps the file's language; the tag keeps versions apart. */
  uri(path: string, tag: string): vscode.Uri {
    return vscode.Uri.from({ scheme: DIFF_SCHEME, path: `/${path.replace(/^\/+/, '')}`, query: tag });
  }

  set(uri: vscode.Uri, text: string): vscode.Uri {
    this.docs.set(uri.toString(), text);
    this.emitter.fire(uri);
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(uri.toString()) ?? '';
  }

  dispose(): void {
    this.emitter.dispose();
  }
}

/** What the chat controller needs from the review side (and gives it). */
export interface ReviewHost {
  readonly model: ChatModel;
  readonly session: SessionInfo | undefined;
  loadResumed(r: ResumeResult): void;
}

interface OpenReview {
  taskId: string;
  path: string;
  hunks: DiffHunk[];
}

export class ReviewController implements vscode.CodeLensProvider, vscode.Disposable {
  readonly documents = new DiffDocuments();
  private readonly previews = new Map<string, { files: FilePreview[]; uris: vscode.Uri[] }>();
  private readonly reviews = new Map<string, OpenReview>(); // real file uri → its hunks under review
  private readonly hunkReview = new HunkReview();
  private readonly lensEmitter = new vscode.EventEmitter<void>();
  private readonly changedLines = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('diffEditor.insertedLineBackground'),
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.addedForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  readonly onDidChangeCodeLenses = this.lensEmitter.event;
  private seq = 0;

  constructor(
    private readonly server: ShiroServer,
    private readonly host: ReviewHost,
  ) {}

  register(): vscode.Disposable[] {
    return [
      vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, this.documents),
      vscode.languages.registerCodeLensProvider({ scheme: 'file' }, this),
      vscode.commands.registerCommand(UNDO_HUNK_COMMAND, (uri: string, index: number) => this.undoHunk(uri, index)),
      vscode.commands.registerCommand(KEEP_HUNK_COMMAND, (uri: string, index: number) => this.keepHunk(uri, index)),
      vscode.workspace.onDidSaveTextDocument(doc => {
        void this.refreshReview(doc.uri);
      }),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorate()),
      vscode.workspace.onDidChangeTextDocument(e => {
        if (this.reviews.has(e.document.uri.toString())) this.decorate();
      }),
      this.onDidChangeCodeLenses(() => this.decorate()),
      this.changedLines,
      this,
    ];
  }

  private root(): vscode.Uri | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri;
  }

  private fileUri(path: string): vscode.Uri | undefined {
    const root = this.root();
    return root ? vscode.Uri.joinPath(root, ...path.split('/')) : undefined;
  }

  // --- approvals ---

  /** A file tool asks: show what it would do in the diff editor, before the user decides. */
  async approvalShown(entryId: string, params: ApproveParams): Promise<void> {
    const files = previewFiles(params);
    if (!files.length) return;
    const tag = `approval-${++this.seq}`;
    const uris = files.map((f, i) =>
      this.documents.set(this.documents.uri(f.path, `${tag}-${i}-after`), f.after ?? ''),
    );
    files.forEach((f, i) =>
      this.documents.set(this.documents.uri(f.from ?? f.path, `${tag}-${i}-before`), f.before ?? ''),
    );
    this.previews.set(entryId, { files, uris });
    await this.openPreview(entryId, 0);
  }

  async openPreview(entryId: string, index: number): Promise<void> {
    const p = this.previews.get(entryId);
    const f = p?.files[index];
    if (!p || !f) {
      void vscode.window.showInformationMessage('Shiro: that proposed change is no longer available.');
      return;
    }
    const right = p.uris[index];
    const left = this.documents.uri(f.from ?? f.path, right.query.replace(/-after$/, '-before'));
    const what = f.from ? `${f.from} → ${f.path}` : f.path;
    const kind = f.before === null ? 'new file' : f.after === null ? 'deleted' : 'proposed';
    await vscode.commands.executeCommand('vscode.diff', left, right, `${what} (Shiro: ${kind})`, {
      preview: true,
      preserveFocus: true,
    });
  }

  /** The card was answered: its proposed-change tabs close (the real file now shows the outcome). */
  async approvalSettled(entryId: string): Promise<void> {
    const p = this.previews.get(entryId);
    if (!p) return;
    this.previews.delete(entryId);
    const mine = new Set(p.uris.map(u => u.toString()));
    const tabs = vscode.window.tabGroups.all
      .flatMap(g => g.tabs)
      .filter(t => t.input instanceof vscode.TabInputTextDiff && mine.has(t.input.modified.toString()));
    if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
  }

  // --- the "Changed files" block ---

  private changesEntry(taskId: string): ChangesEntry | undefined {
    return this.host.model.state.entries.find((e): e is ChangesEntry => e.kind === 'changes' && e.taskId === taskId);
  }

  /** shiro/changes/changed: this turn's block, and the blocks of earlier turns that changed the same files
   *  (their "now" counts moved; their own counts stay what those turns did). */
  onNotified(r: ChangesResult): void {
    this.onChanged(r);
    const paths = new Set(r.files.map(f => f.path));
    const earlier = this.host.model.state.entries.filter(
      (e): e is ChangesEntry => e.kind === 'changes' && e.taskId !== r.taskId && e.files.some(f => paths.has(f.path)),
    );
    for (const e of earlier) void this.refreshChanges(e.taskId);
  }

  /** A refresh (or the notification): one block per turn, updated in place. */
  onChanged(r: ChangesResult): void {
    const view = changesView(r);
    if (!view) return;
    const entry = this.changesEntry(view.taskId);
    if (entry) {
      Object.assign(entry, view);
      this.host.model.touch(entry);
    } else this.host.model.push({ kind: 'changes', ...view });
    void this.syncReviews(view.taskId, r);
    void this.refreshCheckpoints();
  }

  /** Every file the turn changed and nobody reviewed yet gets its hunk lenses (in whatever editor shows it). */
  private async syncReviews(taskId: string, r: ChangesResult): Promise<void> {
    for (const f of r.files.slice(0, MAX_REVIEWED_FILES)) {
      const file = this.fileUri(f.path);
      if (!file) continue;
      const key = file.toString();
      if (f.reviewed || f.status === 'deleted' || f.binary || f.notCovered) {
        if (this.reviews.get(key)?.taskId === taskId) {
          this.reviews.delete(key);
          this.lensEmitter.fire();
        }
        continue;
      }
      const known = this.reviews.get(key);
      if (known && known.taskId === taskId) continue; // refreshed by the undo/keep/save that changed it
      try {
        const diff = await this.server.sendRequest(Method.changesDiff, { path: f.path, taskId });
        if (diff.after !== null) this.setReview(file, { taskId, path: f.path, hunks: diffResultHunks(diff) });
      } catch {
        /* the block still offers the file-level actions */
      }
    }
  }

  private async refreshChanges(taskId: string): Promise<void> {
    try {
      this.onChanged(await this.server.sendRequest(Method.changes, { taskId }));
    } catch {
      /* shown on the next change */
    }
  }

  async handle(m: ReviewMessage): Promise<void> {
    try {
      switch (m.type) {
        case 'openPreview':
          await this.openPreview(m.id, m.index);
          break;
        case 'openChange':
          await this.openChange(m.taskId, m.path);
          break;
        case 'undoChange':
          await this.undoFiles(m.taskId, [m.path]);
          break;
        case 'keepChange':
          await this.keep(m.taskId, m.path);
          break;
        case 'keepAll':
          await this.keep(m.taskId);
          break;
        case 'undoAll': {
          const entry = this.changesEntry(m.taskId);
          await this.undoFiles(
            m.taskId,
            entry ? entry.files.filter(f => !f.reviewed && !f.notCovered).map(f => f.path) : [],
          );
          break;
        }
        case 'restore':
          await this.restore(m.id);
          break;
        case 'redo':
          await this.redo(m.id);
          break;
      }
    } catch (error) {
      void vscode.window.showErrorMessage(`Shiro: ${errorReason(error)}`);
    }
  }

  /** The diff editor: the checkpoint's content (read-only) vs the real file, with a CodeLens per hunk. */
  async openChange(taskId: string, path: string): Promise<void> {
    const diff = await this.server.sendRequest(Method.changesDiff, { path, taskId });
    const left = this.documents.set(this.documents.uri(path, `checkpoint-${taskId}`), diff.before ?? '');
    const file = this.fileUri(path);
    const right =
      diff.after === null || !file
        ? this.documents.set(this.documents.uri(path, `now-${taskId}`), diff.after ?? '')
        : file;
    if (file && diff.after !== null) this.setReview(file, { taskId, path, hunks: diffResultHunks(diff) });
    await vscode.commands.executeCommand('vscode.diff', left, right, `${path} (Shiro's changes: checkpoint ↔ now)`, {
      preview: false,
    });
  }

  private setReview(file: vscode.Uri, review: OpenReview): void {
    this.reviews.set(file.toString(), review);
    this.lensEmitter.fire();
  }

  /** Highlight the lines of the hunks still to review in the editors that show them. */
  private decorate(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const review = this.reviews.get(editor.document.uri.toString());
      const ranges =
        !review || editor.document.isDirty
          ? []
          : this.hunkReview
              .open(review.path, review.hunks)
              .filter(h => h.newLines > 0)
              .map(h => {
                const r = hunkRange(h);
                return new vscode.Range(r.start, 0, Math.max(r.start, r.end - 1), 0);
              });
      editor.setDecorations(this.changedLines, ranges);
    }
  }

  /** After an undo/keep/save: the hunks of that file's open review, from the server again. */
  private async refreshReview(file: vscode.Uri): Promise<void> {
    const review = this.reviews.get(file.toString());
    if (!review) return;
    try {
      const diff = await this.server.sendRequest(Method.changesDiff, {
        path: review.path,
        taskId: review.taskId,
      });
      this.setReview(file, { ...review, hunks: diff.after === null ? [] : diffResultHunks(diff) });
    } catch {
      this.reviews.delete(file.toString());
      this.lensEmitter.fire();
    }
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const review = this.reviews.get(document.uri.toString());
    if (!review || document.isDirty) return []; // an unsaved buffer: the server's hunks do not describe it
    const uri = document.uri.toString();
    return this.hunkReview.open(review.path, review.hunks).flatMap(h => {
      const range = new vscode.Range(lensLine(h, document.lineCount), 0, lensLine(h, document.lineCount), 0);
      const what =
        h.newLines && h.oldLines
          ? `${h.oldLines}→${h.newLines} lines`
          : h.newLines
            ? `+${h.newLines}`
            : `\u2212${h.oldLines}`;
      return [
        new vscode.CodeLens(range, {
          title: `Shiro: Undo hunk (${what})`,
          command: UNDO_HUNK_COMMAND,
          arguments: [uri, h.index],
        }),
        new vscode.CodeLens(range, { title: 'Keep', command: KEEP_HUNK_COMMAND, arguments: [uri, h.index] }),
      ];
    });
  }

  async undoHunk(uri: string, index: number): Promise<void> {
    const review = this.reviews.get(uri);
    if (!review) return;
    try {
      const r = await this.server.sendRequest(Method.changesUndo, {
        path: review.path,
        taskId: review.taskId,
        hunks: [index],
      });
      if (!r.undone)
        void vscode.window.showWarningMessage(
          `Shiro: ${review.path} was not changed: ${r.conflict ?? 'nothing to undo'}`,
        );
    } catch (error) {
      void vscode.window.showErrorMessage(`Shiro: could not undo that hunk: ${errorReason(error)}`);
    }
    await this.refreshReview(vscode.Uri.parse(uri));
    await this.refreshChanges(review.taskId);
  }

  async keepHunk(uri: string, index: number): Promise<void> {
    const review = this.reviews.get(uri);
    const hunk = review?.hunks.find(h => h.index === index);
    if (!review || !hunk) return;
    this.hunkReview.keep(review.path, hunk);
    this.lensEmitter.fire();
    if (!this.hunkReview.open(review.path, review.hunks).length) await this.keep(review.taskId, review.path);
  }

  private async keep(taskId: string, path?: string): Promise<void> {
    await this.server.sendRequest(Method.changesKeep, path ? { taskId, path } : { taskId });
    for (const [uri, review] of this.reviews) {
      if (review.taskId === taskId && (!path || review.path === path)) {
        this.reviews.delete(uri);
        this.hunkReview.forget(review.path);
      }
    }
    this.lensEmitter.fire();
    await this.refreshChanges(taskId);
  }

  private async undoFiles(taskId: string, paths: string[]): Promise<void> {
    const conflicts: string[] = [];
    const undone: string[] = [];
    for (const path of paths) {
      const r = await this.server.sendRequest(Method.changesUndo, { path, taskId });
      if (r.undone) undone.push(path);
      else conflicts.push(`${path}: ${r.conflict ?? 'not undone'}`);
      const file = this.fileUri(path);
      if (file) await this.refreshReview(file);
    }
    const said = undoneText(undone);
    if (said) this.host.model.addNotice(said);
    if (conflicts.length) {
      this.host.model.addNotice(`Left alone (changed since the turn): ${conflicts.join('; ')}`, 'warn');
    }
    await this.refreshChanges(taskId);
  }

  // --- checkpoints ---

  /** Mark the user turns that have a checkpoint (after a turn, a change, a resume or a restore). */
  async refreshCheckpoints(): Promise<void> {
    let list: CheckpointListResult;
    try {
      list = await this.server.sendRequest(Method.checkpointList, {});
    } catch {
      return;
    }
    const users = this.host.model.state.entries.filter(
      (e): e is Extract<typeof e, { kind: 'user' }> => e.kind === 'user',
    );
    const turns: UserTurn[] = users.map(u => ({ id: u.id, text: u.text, taskId: u.taskId }));
    const map = assignCheckpoints(turns, list.checkpoints);
    for (const u of users) {
      const id = map.get(u.id);
      if (u.checkpointId !== id) {
        u.checkpointId = id;
        this.host.model.touch(u);
      }
    }
  }

  /** A resumed turn's Changed files block, where the turn ended (drawn as the live block is). */
  turnShown(turn: TurnInfo): void {
    const view = turn.changes ? changesView(turn.changes) : undefined;
    if (view) this.host.model.push({ kind: 'changes', ...view });
  }

  /** A resumed (or reloaded) transcript: mark its checkpoints, show the latest turn's changes still to review. */
  async transcriptLoaded(): Promise<void> {
    await this.refreshCheckpoints();
    try {
      const r = await this.server.sendRequest(Method.changes, {});
      if (r.files.some(f => !f.reviewed)) this.onChanged(r);
    } catch {
      /* a server without checkpoints */
    }
  }

  private async reloadChat(): Promise<void> {
    const id = this.host.session?.id;
    const r = await this.server.sendRequest(Method.sessionResume, id ? { id } : { latest: true });
    this.host.loadResumed(asResumeResult(r));
  }

  async restore(entryId: string): Promise<void> {
    const user = this.host.model.state.entries.find(e => e.id === entryId);
    if (user?.kind !== 'user' || !user.checkpointId) return;
    const modes: { label: string; description: string; mode: RestoreMode }[] = [
      {
        label: RESTORE_LABELS.code,
        description: 'files back as they were before this message; the chat stays',
        mode: 'code',
      },
      {
        label: RESTORE_LABELS.chat,
        description: 'drop this message and everything after it; files stay',
        mode: 'chat',
      },
      { label: RESTORE_LABELS.both, description: 'files and chat back to before this message', mode: 'both' },
    ];
    const pick = await vscode.window.showQuickPick(modes, {
      title: `Shiro: Restore checkpoint before "${user.text.slice(0, 60)}"`,
      placeHolder: 'What should go back? (Redo undoes it)',
    });
    if (!pick) return;
    const r = await this.server.sendRequest(Method.checkpointRestore, {
      id: user.checkpointId,
      mode: pick.mode,
    });
    await this.restored(pick.mode, r, false);
  }

  private async restored(mode: RestoreMode, r: CheckpointRestoreResult, redo: boolean): Promise<RestoredEntry> {
    if (mode !== 'code') await this.reloadChat();
    const { text, level } = restoreText(mode, r, redo);
    const entry = this.host.model.push({
      kind: 'restored',
      text,
      level,
      mode,
      redoId: redo ? null : r.redoId,
      redone: false,
    }) as RestoredEntry;
    if (level === 'warn') void vscode.window.showWarningMessage(`Shiro: ${text}`);
    for (const path of r.restored) {
      const f = this.fileUri(path);
      if (f) await this.refreshReview(f);
    }
    await this.refreshCheckpoints();
    return entry;
  }

  async redo(entryId: string): Promise<void> {
    const entry = this.host.model.state.entries.find(
      (e): e is RestoredEntry => e.id === entryId && e.kind === 'restored',
    );
    if (!entry?.redoId || entry.redone) return;
    const r = await this.server.sendRequest(Method.checkpointRestore, {
      id: entry.redoId,
      mode: entry.mode,
    });
    entry.redone = true;
    this.host.model.touch(entry);
    await this.restored(entry.mode, r, true);
  }

  dispose(): void {
    this.lensEmitter.dispose();
    this.documents.dispose();
  }
}
