// "Remember this": pick a kind, send workspace/executeCommand shiro.remember [{kind, text}], show the reply.
import * as vscode from 'vscode';
import { ExecuteCommandRequest } from 'vscode-languageclient/node';
import { Method, SERVER_REMEMBER_COMMAND } from './protocol';
import type { MemoryEntry, MemoryKind, MemoryListResult, NotesResult, RememberSelectionArgs } from './protocol';
import type { ShiroServer } from './server';
import { errorReason } from './errors';

export const MEMORY_KINDS: { kind: MemoryKind; meaning: string }[] = [
  { kind: 'fact', meaning: 'how it is' },
  { kind: 'decision', meaning: 'what was chosen and why' },
  { kind: 'gotcha', meaning: 'a trap' },
  { kind: 'command', meaning: 'an invocation that works' },
];

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
  if (!text) { void vscode.window.showWarningMessage('Shiro: select the text to remember first.'); return; }
  const pick = await vscode.window.showQuickPick(kindPickItems(), {
    title: 'Shiro: Remember this as…', placeHolder: 'What kind of note is it?',
  });
  if (!pick) return;
  try {
    const reply = await server.sendRequest<unknown>(ExecuteCommandRequest.method,
      { command: SERVER_REMEMBER_COMMAND, arguments: [{ kind: pick.memoryKind, text }] });
    void vscode.window.showInformationMessage(`Shiro: ${replyText(reply)}`);
  } catch (error) {
    void vscode.window.showErrorMessage(`Shiro could not remember that: ${errorReason(error)}`);
  }
}

export function memoryDocument(mem: MemoryListResult, notes: NotesResult | undefined): string {
  const lines = ['# Shiro project memory', ''];
  if (!mem.entries.length) lines.push(mem.text || 'nothing remembered about this project yet');
  else for (const e of mem.entries) lines.push(`- **${e.kind}** ${e.text}${e.hits > 0 ? `  _(recalled ${e.hits}x)_` : ''}`);
  lines.push('', '# Project notes', '', notes?.project?.trim() || '_none (.shiro/memory/project.md is empty)_');
  if (notes?.task?.trim()) lines.push('', `# Task notes${notes.taskId ? ` (${notes.taskId})` : ''}`, '', notes.task);
  return lines.join('\n') + '\n';
}

/** A read-only document (no "save changes?" on close) that is refreshed each time it is shown. */
export const MEMORY_SCHEME = 'shiro-memory';
const MEMORY_URI = vscode.Uri.parse(`${MEMORY_SCHEME}:Shiro project memory.md`);

export class MemoryDocuments implements vscode.TextDocumentContentProvider {
  private content = '';
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(): string { return this.content; }

  update(content: string): vscode.Uri {
    this.content = content;
    this.changed.fire(MEMORY_URI);
    return MEMORY_URI;
  }
}

export async function showMemory(server: ShiroServer, documents: MemoryDocuments): Promise<void> {
  try {
    const mem = await server.sendRequest<MemoryListResult>(Method.memoryList, {});
    const notes = await server.sendRequest<NotesResult>(Method.notesRead, { scope: 'project' }).catch(() => undefined);
    const uri = documents.update(memoryDocument(mem, notes));
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
    await vscode.window.showTextDocument(doc, { preview: true });
  } catch (error) {
    void vscode.window.showErrorMessage(`Shiro could not read project memory: ${errorReason(error)}`);
  }
}

/** "Shiro: Edit project memory": pick an entry, then change its text or delete it (with confirmation). */
export async function editMemory(server: ShiroServer): Promise<void> {
  try {
    const { entries } = await server.sendRequest<MemoryListResult>(Method.memoryList, {});
    if (!entries.length) { void vscode.window.showInformationMessage('Shiro: nothing remembered about this project yet.'); return; }
    const editButton = { iconPath: new vscode.ThemeIcon('edit'), tooltip: 'Edit' };
    const deleteButton = { iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Delete…' };
    type Item = vscode.QuickPickItem & { entry: MemoryEntry };
    const items: Item[] = entries.map(e => ({ label: e.text, description: e.kind, entry: e, buttons: [editButton, deleteButton] }));
    const picked = await new Promise<{ entry: MemoryEntry; action: 'edit' | 'delete' } | undefined>(resolve => {
      const pick = vscode.window.createQuickPick<Item>();
      pick.title = 'Shiro: Edit project memory';
      pick.placeholder = 'Pick an entry to edit (or use its trash button to delete it)';
      pick.items = items;
      pick.matchOnDescription = true;
      pick.onDidTriggerItemButton(e => { resolve({ entry: e.item.entry, action: e.button === deleteButton ? 'delete' : 'edit' }); pick.hide(); });
      pick.onDidAccept(() => { const item = pick.selectedItems[0]; resolve(item ? { entry: item.entry, action: 'edit' } : undefined); pick.hide(); });
      pick.onDidHide(() => { resolve(undefined); pick.dispose(); });
      pick.show();
    });
    if (!picked) return;
    const { entry, action } = picked;
    // forget by id: exactly this entry ("use pytest" no longer takes "use pytest -q" with it)
    if (action === 'delete') {
      const ok = await vscode.window.showWarningMessage(`Delete this memory? "${entry.text}"`, { modal: true }, 'Delete');
      if (ok !== 'Delete') return;
      await server.sendRequest(Method.memoryForget, { id: entry.id });
      void vscode.window.showInformationMessage('Shiro: memory deleted.');
      return;
    }
    const text = await vscode.window.showInputBox({ title: `Shiro: Edit ${entry.kind}`, value: entry.text, ignoreFocusOut: true });
    if (text === undefined || !text.trim() || text.trim() === entry.text) return;
    await server.sendRequest(Method.memoryForget, { id: entry.id });
    const reply = await server.sendRequest<unknown>(ExecuteCommandRequest.method,
      { command: SERVER_REMEMBER_COMMAND, arguments: [{ kind: entry.kind, text: text.trim() }] });
    void vscode.window.showInformationMessage(`Shiro: ${replyText(reply)}`);
  } catch (error) {
    void vscode.window.showErrorMessage(`Shiro could not change project memory: ${errorReason(error)}`);
  }
}
