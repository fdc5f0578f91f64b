import * as vscode from 'vscode';
import { selectionLabel } from './attachments';
import type { ChatController } from './controller';
import type { Candidate, MentionKind } from '../shared/mentions';
import {
  TerminalCommands,
  copiedBy,
  noSelectionNotice,
  selectionChipLabel,
  selectionContext,
  terminalContext,
  terminalLabel,
  terminalSelection,
  withBufferOutput,
} from './terminalOutput';
import type { Attachment } from '../shared/webviewProtocol';

const SKIP =
  '**/{node_modules,.git,.venv,venv,dist,out,build,__pycache__,.mypy_cache,.pytest_cache,.tools,.artifacts}/**';

/** What `@` offers and attaches: the selection, the terminal, the problems, workspace files and folders. */
export class MentionSources {
  // `@terminal`: the active terminal's last command and output, through shell integration.
  private readonly terminalCommands = new TerminalCommands<vscode.Terminal, vscode.TerminalShellExecution>();

  constructor(private readonly ctl: ChatController) {}

  watchTerminals(): vscode.Disposable[] {
    const commands = this.terminalCommands;
    return [
      vscode.window.onDidStartTerminalShellExecution(e => {
        commands.started(e.execution);
        void (async () => {
          try {
            for await (const chunk of e.execution.read()) commands.data(e.execution, chunk);
          } catch {
            /* the terminal went away */
          }
          commands.drained(e.execution);
        })();
      }),
      vscode.window.onDidEndTerminalShellExecution(e =>
        commands.ended(e.terminal, e.execution, e.terminal.name, e.execution.commandLine.value, e.exitCode),
      ),
      vscode.window.onDidCloseTerminal(t => commands.closed(t)),
    ];
  }

  /**
   * What is selected in the active terminal, as an attachment (read through VS Code's copy command; the
   * clipboard is restored).
   */
  async terminalSelectionAttachment(): Promise<Attachment | undefined> {
    const terminal = vscode.window.activeTerminal;
    const [copied] = terminal
      ? await copiedBy(vscode.env.clipboard, [
          () => vscode.commands.executeCommand('workbench.action.terminal.copySelection'),
        ])
      : [undefined];
    const selected = terminal && terminalSelection(terminal.name, copied);
    if (!selected) {
      this.ctl.model.addNotice(noSelectionNotice(terminal?.name), 'warn');
      return undefined;
    }
    return { label: selectionChipLabel(selected), text: selectionContext(selected) };
  }

  /** The active editor's selection (the whole file when nothing is selected); without an editor, a warning. */
  editorAttachment(): Attachment | undefined {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      void vscode.window.showWarningMessage('Shiro: open a file and select the code to add.');
      return undefined;
    }
    return this.attachmentOf(editor);
  }

  /** The current-file chip (shiro.attachActiveFile): the active editor's file on disk, if any. */
  activeFileLabel(): string | null {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme !== 'file' || !vscode.workspace.getWorkspaceFolder(editor.document.uri))
      return null;
    if (!vscode.workspace.getConfiguration('shiro').get<boolean>('attachActiveFile', true)) return null;
    return vscode.workspace.asRelativePath(editor.document.uri, false);
  }

  /** What the current-file chip sends, taken when the message is sent (the file, or its selection). */
  activeFileAttachment(): Attachment | undefined {
    const editor = vscode.window.activeTextEditor;
    return editor && this.activeFileLabel() !== null ? this.attachmentOf(editor) : undefined;
  }

  private attachmentOf(editor: vscode.TextEditor): Attachment {
    const sel = editor.selection;
    const whole = sel.isEmpty;
    const text = editor.document.getText(whole ? undefined : sel);
    const file = vscode.workspace.asRelativePath(editor.document.uri, false);
    const label = whole
      ? file
      : selectionLabel(
          file,
          sel.start.line + 1,
          sel.end.line + (sel.end.character === 0 && sel.end.line > sel.start.line ? 0 : 1),
        );
    // the server's secrets gate checks the source: a secrets file or a file outside the workspace is refused
    return { label, text, source: editor.document.uri.toString() };
  }

  async candidates(): Promise<Candidate[]> {
    const items: Candidate[] = [];
    const editor = vscode.window.activeTextEditor;
    if (editor && !editor.selection.isEmpty) {
      const file = vscode.workspace.asRelativePath(editor.document.uri, false);
      items.push({
        kind: 'selection',
        value: 'selection',
        label: 'Current selection',
        detail: selectionLabel(file, editor.selection.start.line + 1, editor.selection.end.line + 1),
      });
    }
    const terminal = vscode.window.activeTerminal;
    const lastCommand = this.terminalCommands.lastOf(terminal);
    if (lastCommand)
      items.push({
        kind: 'terminal',
        value: 'terminal',
        label: 'Terminal: last command',
        detail: terminalLabel(lastCommand),
      });
    // Whether the terminal has a selection is only known by copying it, and copying nothing makes VS Code
    // warn, so the row is offered whenever a terminal is active and the check happens when it is picked.
    if (terminal)
      items.push({
        kind: 'terminal',
        value: 'terminal-selection',
        label: 'Terminal: selection',
        detail: `what is selected in "${terminal.name}"`,
      });
    const problems = vscode.languages.getDiagnostics().reduce((n, [, d]) => n + d.length, 0);
    items.push({
      kind: 'problems',
      value: 'problems',
      label: 'Problems',
      detail: problems ? `${problems} in the workspace` : 'none right now',
    });
    const uris = await vscode.workspace.findFiles('**/*', SKIP, 5000);
    const folders = new Set<string>();
    for (const uri of uris) {
      const rel = vscode.workspace.asRelativePath(uri, false);
      items.push({ kind: 'file', value: rel, label: rel.split('/').pop() ?? rel, detail: rel });
      const parts = rel.split('/');
      for (let i = 1; i < parts.length; i++) folders.add(`${parts.slice(0, i).join('/')}/`);
    }
    for (const f of folders) items.push({ kind: 'folder', value: f, label: f, detail: 'folder' });
    return items;
  }

  async resolve(kind: MentionKind, value: string): Promise<Attachment | undefined> {
    if (kind === 'selection') {
      const editor = vscode.window.activeTextEditor;
      if (!editor || editor.selection.isEmpty) {
        this.ctl.model.addNotice('Nothing is selected in the editor.', 'warn');
        return undefined;
      }
      const file = vscode.workspace.asRelativePath(editor.document.uri, false);
      const sel = editor.selection;
      return {
        label: selectionLabel(file, sel.start.line + 1, sel.end.line + 1),
        text: editor.document.getText(sel),
        source: editor.document.uri.toString(),
      };
    }
    if (kind === 'terminal' && value === 'terminal-selection') return this.terminalSelectionAttachment();
    if (kind === 'terminal') return this.lastTerminalCommand();
    if (kind === 'problems') return problemsAttachment();
    // files and folders are attached by name: the model reads them with its own tools, which keep
    // secrets files out and every path inside the workspace
    return {
      label: value,
      text:
        kind === 'folder'
          ? `The user points at the workspace folder ${value} (list or read it with your tools).`
          : `The user points at the workspace file ${value} (read it with read_file).`,
    };
  }

  private async lastTerminalCommand(): Promise<Attachment | undefined> {
    let last = this.terminalCommands.lastOf(vscode.window.activeTerminal);
    if (!last) {
      this.ctl.model.addNotice('No finished command in the active terminal (it needs shell integration).', 'warn');
      return undefined;
    }
    if (!last.output) {
      // the stream can miss a command that printed and ended at once (see terminalOutput.ts): read the buffer
      const [command, output] = await copiedBy(vscode.env.clipboard, [
        () => vscode.commands.executeCommand('workbench.action.terminal.copyLastCommand'),
        () => vscode.commands.executeCommand('workbench.action.terminal.copyLastCommandOutput'),
      ]);
      last = withBufferOutput(last, command, output);
    }
    return { label: `Terminal ${terminalLabel(last)}`, text: terminalContext(last) };
  }
}

function problemsAttachment(): Attachment {
  const lines: string[] = [];
  for (const [uri, diagnostics] of vscode.languages.getDiagnostics()) {
    for (const d of diagnostics) {
      const { line, character } = d.range.start;
      const where = `${vscode.workspace.asRelativePath(uri, false)}:${line + 1}:${character + 1}`;
      const severity = vscode.DiagnosticSeverity[d.severity].toLowerCase();
      lines.push(`${where}: ${severity}: ${d.message}${d.source ? ` [${d.source}]` : ''}`);
    }
  }
  return {
    label: `Problems (${lines.length})`,
    text: lines.slice(0, 300).join('\n') || 'No problems are reported in the workspace.',
  };
}
