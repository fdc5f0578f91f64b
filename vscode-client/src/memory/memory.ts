// "Remember this": pick a kind, send workspace/executeCommand shiro.remember [{kind, text}], show the reply.
import * as vscode from 'vscode';
import { ExecuteCommandRequest } from 'vscode-languageclient/node';
import { Method, SERVER_REMEMBER_COMMAND } from '../shared/protocol';
import type { MemoryEntry, MemoryKind, NotesResult, RememberSelectionArgs } from '../shared/protocol';
import type { RememberResult } from '../shared/protocol.gen';
import {
  MEMORY_KINDS,
  NOTES_HEADING,
  conflicts,
  describePlan,
  planMemoryEdits,
  renderMemoryDocument,
} from './memoryEdit';
import type { MemoryOp } from './memoryEdit';
import type { ShiroServer } from '../server/server';
import { errorReason } from '../server/errors';

export function kindPickItems(): (vscode.QuickPickItem & { memoryKind: MemoryKind })[] {
  return MEMORY_KINDS.map(k => ({ label: k.kind, description: k.meaning, memoryKind: k.kind }));
}

/** The text to remember: the code action's argument, else the active editor's selection. */
export function selectionText(arg: RememberSelectionArgs | undefined, editor: vscode.TextEditor | undefined): string {
  if (arg && typeof arg.text === 'string' && arg.text.trim()) return arg.text.trim();
  if (editor && !editor.selection.isEmpty) return editor.document.getText(editor.selection).trim();
  return '';
}

export function replyText(reply: unknown): string {
  if (typeof reply === 'string') return reply;
  if (reply && typeof reply === 'object' && 'text' in reply) return String((reply as { text: unknown }).text);
  return 'Remembered.';
}

export async function rememberSelection(server: ShiroServer, arg?: RememberSelectionArgs): Promise<void> {
  const text = selectionText(arg, vscode.window.activeTextEditor);
  if (!text) {
    void vscode.window.showWarningMessage('Shiro: select the text to remember first.');
    return;
  }
  const pick = await vscode.window.showQuickPick(kindPickItems(), {
    title: 'Shiro: Remember this as…',
    placeHolder: 'What kind of note is it?',
  });
  if (!pick) return;
  try {
    const reply = await server.sendUntyped(ExecuteCommandRequest.method, {
      command: SERVER_REMEMBER_COMMAND,
      arguments: [{ kind: pick.memoryKind, text }],
    });
    void vscode.window.showInformationMessage(`Shiro: ${replyText(reply)}`);
  } catch (error) {
    void vscode.window.showErrorMessage(`Shiro could not remember that: ${errorReason(error)}`);
  }
}

/** The notes part of the memory document (shown, not edited there). */
export function notesSection(notes: NotesResult | undefined): string {
  const lines = [NOTES_HEADING, '', notes?.project?.trim() || '_none (.shiro/memory/project.md is empty)_'];
  if (notes?.task?.trim()) lines.push('', `# Task notes${notes.taskId ? ` (${notes.taskId})` : ''}`, '', notes.task);
  return lines.join('\n');
}

/**
 * The project memory as an editable document (a FileSystemProvider, so it can be saved): each
 * read asks the server; a save turns the edits into shiro/memory/* calls (memoryEdit.ts). A parse
 * error or a conflict refuses the save with the reason, so the edited text stays in the editor.
 */
export const MEMORY_SCHEME = 'shiro-memory';
export const MEMORY_URI = vscode.Uri.parse(`${MEMORY_SCHEME}:/Shiro project memory.md`);

export class MemoryFileSystem implements vscode.FileSystemProvider {
  private base: { entries: MemoryEntry[]; rest: string } = { entries: [], rest: '' };
  private bytes = new Uint8Array();
  private mtime = Date.now();
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;

  private reloadAfterSave = false;
  private readonly saved: vscode.Disposable;

  constructor(private readonly server: ShiroServer) {
    this.saved = vscode.workspace.onDidSaveTextDocument(doc => this.onSaved(doc));
  }

  /** VS Code has finished a save of the memory document: reload it from the server (new ids, server order). */
  private onSaved(doc: vscode.TextDocument): void {
    if (doc.uri.toString() !== MEMORY_URI.toString() || !this.reloadAfterSave) return;
    this.reloadAfterSave = false;
    this.refresh();
  }

  dispose(): void {
    this.saved.dispose();
    this.changed.dispose();
  }

  /** Re-read on the next show (an open, unmodified document reloads; a modified one is kept). */
  refresh(): void {
    this.mtime = Math.max(Date.now(), this.mtime + 1);
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri: MEMORY_URI }]);
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => {});
  }

  /** The document as the server has it now; its mtime moves only when its text does (VS Code's conflict check). */
  private async load(): Promise<{ bytes: Uint8Array; entries: MemoryEntry[]; rest: string }> {
    const [mem, notes] = await Promise.all([
      this.server.sendRequest(Method.memoryList, {}),
      this.server.sendRequest(Method.notesRead, { scope: 'project' }).catch(() => undefined),
    ]);
    const rest = notesSection(notes);
    const bytes = new TextEncoder().encode(renderMemoryDocument(mem.entries, rest));
    if (bytes.length !== this.bytes.length || bytes.some((b, i) => b !== this.bytes[i])) {
      this.bytes = bytes;
      this.mtime = Math.max(Date.now(), this.mtime + 1);
    }
    return { bytes, entries: mem.entries, rest };
  }

  async stat(): Promise<vscode.FileStat> {
    await this.load();
    return { type: vscode.FileType.File, ctime: 0, mtime: this.mtime, size: this.bytes.length };
  }

  /** What the editor shows: the edits of the next save are planned against exactly these entries. */
  async readFile(): Promise<Uint8Array> {
    const { bytes, entries, rest } = await this.load();
    this.base = { entries, rest };
    return bytes;
  }

  async writeFile(_uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const plan = planMemoryEdits(this.base.entries, this.base.rest, new TextDecoder().decode(content));
    const now = (await this.server.sendRequest(Method.memoryList, {})).entries;
    const problems = [...plan.problems, ...conflicts(plan, now)];
    if (problems.length) {
      throw new Error(
        // a plain error: VS Code shows its message as it is ("Failed to save …: <message>")
        `Nothing was saved to Shiro's memory. ${problems.join(' ')} Your text is still in the editor; ` +
          'fix it and save again (or close without saving and reopen Shiro: Show project memory).',
      );
    }
    let done = 0;
    try {
      for (const op of plan.ops) {
        await applyMemoryOp(this.server, op);
        done++;
      }
    } catch (error) {
      throw new Error(
        `Shiro saved ${done} of ${plan.ops.length} memory changes, then failed: ${errorReason(error)}. ` +
          'Reopen Shiro: Show project memory to see what is stored now.',
        { cause: error },
      );
    } finally {
      this.reloadAfterSave = true; // see onSaved: the new lines get their ids in the editor
    }
    if (plan.ops.length) void vscode.window.showInformationMessage(`Shiro: ${describePlan(plan)}`);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }
  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions('Shiro memory has no folders.');
  }
  delete(): void {
    throw vscode.FileSystemError.NoPermissions('Delete memory lines inside the document instead.');
  }
  rename(): void {
    throw vscode.FileSystemError.NoPermissions('The memory document cannot be renamed.');
  }
}

/** One operation; an edit remembers the new text before it forgets the old one, so a failure loses nothing. */
async function applyMemoryOp(server: ShiroServer, op: MemoryOp): Promise<void> {
  const remember = (kind: MemoryKind, text: string): Promise<RememberResult> =>
    server.sendRequest(Method.memoryRemember, { kind, text });
  if (op.op === 'remember') {
    await remember(op.kind, op.text);
    return;
  }
  if (op.op === 'forget') {
    await server.sendRequest(Method.memoryForget, { id: op.id });
    return;
  }
  if (op.text === op.old.text) {
    // only the kind changed: the same text would be a duplicate
    await server.sendRequest(Method.memoryForget, { id: op.id });
    await remember(op.kind, op.text);
    return;
  }
  await remember(op.kind, op.text);
  await server.sendRequest(Method.memoryForget, { id: op.id });
}

export async function showMemory(files: MemoryFileSystem): Promise<void> {
  try {
    files.refresh();
    const doc = await vscode.workspace.openTextDocument(MEMORY_URI);
    await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
    await vscode.window.showTextDocument(doc, { preview: true });
  } catch (error) {
    void vscode.window.showErrorMessage(`Shiro could not read project memory: ${errorReason(error)}`);
  }
}

/** "Shiro: Edit project memory": pick an entry, then change its text or delete it (with confirmation). */
export async function editMemory(server: ShiroServer): Promise<void> {
  try {
    const { entries } = await server.sendRequest(Method.memoryList, {});
    if (!entries.length) {
      void vscode.window.showInformationMessage('Shiro: nothing remembered about this project yet.');
      return;
    }
    const editButton = { iconPath: new vscode.ThemeIcon('edit'), tooltip: 'Edit' };
    const deleteButton = { iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Delete…' };
    type Item = vscode.QuickPickItem & { entry: MemoryEntry };
    const items: Item[] = entries.map(e => ({
      label: e.text,
      description: e.kind,
      entry: e,
      buttons: [editButton, deleteButton],
    }));
    const picked = await new Promise<{ entry: MemoryEntry; action: 'edit' | 'delete' } | undefined>(resolve => {
      const pick = vscode.window.createQuickPick<Item>();
      pick.title = 'Shiro: Edit project memory';
      pick.placeholder = 'Pick an entry to edit (or use its trash button to delete it)';
      pick.items = items;
      pick.matchOnDescription = true;
      pick.onDidTriggerItemButton(e => {
        resolve({ entry: e.item.entry, action: e.button === deleteButton ? 'delete' : 'edit' });
        pick.hide();
      });
      pick.onDidAccept(() => {
        const item = pick.selectedItems[0];
        resolve(item ? { entry: item.entry, action: 'edit' } : undefined);
        pick.hide();
      });
      pick.onDidHide(() => {
        resolve(undefined);
        pick.dispose();
      });
      pick.show();
    });
    if (!picked) return;
    const { entry, action } = picked;
    // forget by id: exactly this entry ("use pytest" no longer takes "use pytest -q" with it)
    if (action === 'delete') {
      const ok = await vscode.window.showWarningMessage(
        `Delete this memory? "${entry.text}"`,
        { modal: true },
        'Delete',
      );
      if (ok !== 'Delete') return;
      await server.sendRequest(Method.memoryForget, { id: entry.id });
      void vscode.window.showInformationMessage('Shiro: memory deleted.');
      return;
    }
    const text = await vscode.window.showInputBox({
      title: `Shiro: Edit ${entry.kind}`,
      value: entry.text,
      ignoreFocusOut: true,
    });
    if (text === undefined || !text.trim() || text.trim() === entry.text) return;
    await server.sendRequest(Method.memoryForget, { id: entry.id });
    const reply = await server.sendUntyped(ExecuteCommandRequest.method, {
      command: SERVER_REMEMBER_COMMAND,
      arguments: [{ kind: entry.kind, text: text.trim() }],
    });
    void vscode.window.showInformationMessage(`Shiro: ${replyText(reply)}`);
  } catch (error) {
    void vscode.window.showErrorMessage(`Shiro could not change project memory: ${errorReason(error)}`);
  }
}
