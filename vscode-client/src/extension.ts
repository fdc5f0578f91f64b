import * as vscode from 'vscode';
import { ChatViewProvider, CHAT_VIEW_ID } from './chatView';
import { ReviewController } from './changes';
import { showDiagnostics } from './diagnose';
import { redact } from './diagnostics';
import { ChatController } from './controller';
import { errorReason } from './errors';
import { showGrants } from './grants';
import { showMcpServers } from './mcp';
import { MEMORY_SCHEME, MemoryFileSystem, editMemory, rememberSelection, showMemory } from './memory';
import { meterView } from './meter';
import { AGENTS, CLIENT_REMEMBER_COMMAND, Method } from './protocol';
import type { Agent, CompactionProgress, ModelsDetectResult, ModelsResult, SessionCompactResult } from './protocol';
import { selectionLabel } from './attachments';
import type { Attachment } from './attachments';
import type { Candidate } from './mentions';
import { detectParams, detectionReport, endpointReport, localModelItems, modelItems, needsSetup, shownModel } from './setup';
import type {
  ApproveParams, ChangesResult, ContextMeter, EventNotification, ResumeResult, SessionInfo, TodosPayload, NewSessionResult,
  RememberSelectionArgs,
} from './protocol';
import { API_KEY_SECRET, ShiroServer } from './server';
import {
  TerminalCommands, copiedBy, noSelectionNotice, selectionChipLabel, selectionContext, terminalContext, terminalLabel,
  terminalSelection, withBufferOutput,
} from './terminalOutput';
import { listParams, savedPreviousMessage, SessionSearch, sessionPickItems, titleProblem, unmatchableLabel } from './sessions';
import { ROOT_PICK_TITLE, chooseRoot } from './workspaceRoot';
import { foldersPending, knownFolders } from './workspaceFolders';

let server: ShiroServer | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const meter = vscode.window.createStatusBarItem('shiro.contextMeter', vscode.StatusBarAlignment.Right, 100);
  meter.name = 'Shiro context';
  meter.text = '$(sync~spin) Shiro';
  meter.tooltip = 'Shiro: starting the language server…';
  meter.command = 'shiro.meterClicked';
  meter.show();
  let lastMeter: ContextMeter | undefined;

  let controller: ChatController | undefined;
  let review: ReviewController | undefined;
  const renderMeter = (m: ContextMeter): void => {
    lastMeter = m;
    const view = meterView(m, controller?.session?.costUsd, controller?.session?.messageCount);
    meter.text = view.text;
    meter.tooltip = view.tooltip;
    meter.backgroundColor = view.background ? new vscode.ThemeColor(view.background) : undefined;
  };

  server = new ShiroServer(context, client => [
    client.onNotification(Method.event, (n: EventNotification) => controller?.onEvent(n)),
    client.onNotification(Method.todosChanged, (t: TodosPayload) => controller?.setTodos(t)),
    client.onNotification(Method.contextChanged, (m: ContextMeter) => renderMeter(m)),
    client.onNotification(Method.sessionCompacting, (p: CompactionProgress) => controller?.compactionProgress(p)),
    client.onNotification(Method.sessionChanged, (s: SessionInfo) => {
      controller?.setSession(s);
      if (lastMeter) renderMeter(lastMeter);
    }),
    client.onNotification(Method.changesChanged, (r: ChangesResult) => review?.onNotified(r)),
    client.onRequest(Method.approve, (p: ApproveParams, token: vscode.CancellationToken) =>
      controller!.requestApproval(p, token)),
  ]);
  const srv = server;
  controller = new ChatController(srv);
  const ctl = controller;
  review = new ReviewController(srv, ctl);
  ctl.review = review;
  const chatView = new ChatViewProvider(context.extensionUri, ctl);
  ctl.onReveal = () => { void chatView.reveal(); };
  ctl.isVisible = () => chatView.visible;
  ctl.onPickSession = () => resumeSession();
  ctl.rootSource = bound => sessionRoot(bound);
  ctl.onResume = async id => {
    try { await resumeById(id); } catch (error) { ctl.model.addNotice(`Could not resume: ${errorReason(error)}`, 'error'); }
  };
  ctl.infoSource = async () => {
    const cfg = vscode.workspace.getConfiguration('shiro');
    const baseUrl = srv.baseUrl() ?? '';
    const model = cfg.get<string>('model') ?? '';
    const hasKey = Boolean(await context.secrets.get(API_KEY_SECRET));
    return {
      model: shownModel(model, ctl.session?.model), agent: ctl.agent,
      setup: { show: needsSetup({ hasKey, envKey: Boolean(process.env.OPENAI_API_KEY), baseUrl }), baseUrl, model, hasKey },
    };
  };
  ctl.onAction = async m => {
    if (m.type === 'pickModel') await pickModel();
    else if (m.type === 'pickAgent') await pickAgent();
    else if (m.type === 'setApiKey') await vscode.commands.executeCommand('shiro.setApiKey');
    else if (m.type === 'detectLocal') await detectLocal();
    else await saveAndTest(m.baseUrl, m.model);
  };

  // `@terminal`: the active terminal's last command and output, through shell integration.
  const terminalCommands = new TerminalCommands<vscode.Terminal, vscode.TerminalShellExecution>();
  context.subscriptions.push(
    vscode.window.onDidStartTerminalShellExecution(e => {
      terminalCommands.started(e.execution);
      void (async () => {
        try { for await (const chunk of e.execution.read()) terminalCommands.data(e.execution, chunk); } catch { /* the terminal went away */ }
        terminalCommands.drained(e.execution);
      })();
    }),
    vscode.window.onDidEndTerminalShellExecution(e =>
      terminalCommands.ended(e.terminal, e.execution, e.terminal.name, e.execution.commandLine.value, e.exitCode)),
    vscode.window.onDidCloseTerminal(t => terminalCommands.closed(t)),
  );

  /** What is selected in the active terminal, as an attachment (read through VS Code's copy command; the clipboard is restored). */
  async function terminalSelectionAttachment(): Promise<Attachment | undefined> {
    const terminal = vscode.window.activeTerminal;
    const [copied] = terminal ? await copiedBy(vscode.env.clipboard, [() => vscode.commands.executeCommand('workbench.action.terminal.copySelection')]) : [undefined];
    const selected = terminal && terminalSelection(terminal.name, copied);
    if (!selected) { ctl.model.addNotice(noSelectionNotice(terminal?.name), 'warn'); return undefined; }
    return { label: selectionChipLabel(selected), text: selectionContext(selected) };
  }

  const SKIP = '**/{node_modules,.git,.venv,venv,dist,out,build,__pycache__,.mypy_cache,.pytest_cache,.tools,.artifacts}/**';
  ctl.mentionCandidates = async () => {
    const items: Candidate[] = [];
    const editor = vscode.window.activeTextEditor;
    if (editor && !editor.selection.isEmpty) {
      const file = vscode.workspace.asRelativePath(editor.document.uri, false);
      items.push({ kind: 'selection', value: 'selection', label: 'Current selection', detail: selectionLabel(file, editor.selection.start.line + 1, editor.selection.end.line + 1) });
    }
    const terminal = vscode.window.activeTerminal;
    const lastCommand = terminalCommands.lastOf(terminal);
    if (lastCommand) items.push({ kind: 'terminal', value: 'terminal', label: 'Terminal: last command', detail: terminalLabel(lastCommand) });
    // Whether the terminal has a selection is only known by copying it, and copying nothing makes VS Code
    // warn, so the row is offered whenever a terminal is active and the check happens when it is picked.
    if (terminal) items.push({ kind: 'terminal', value: 'terminal-selection', label: 'Terminal: selection', detail: `what is selected in "${terminal.name}"` });
    const problems = vscode.languages.getDiagnostics().reduce((n, [, d]) => n + d.length, 0);
    items.push({ kind: 'problems', value: 'problems', label: 'Problems', detail: problems ? `${problems} in the workspace` : 'none right now' });
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
  };
  ctl.resolveMention = async (kind, value) => {
    if (kind === 'selection') {
      const editor = vscode.window.activeTextEditor;
      if (!editor || editor.selection.isEmpty) { ctl.model.addNotice('Nothing is selected in the editor.', 'warn'); return undefined; }
      const file = vscode.workspace.asRelativePath(editor.document.uri, false);
      const sel = editor.selection;
      return { label: selectionLabel(file, sel.start.line + 1, sel.end.line + 1), text: editor.document.getText(sel), source: editor.document.uri.toString() };
    }
    if (kind === 'terminal' && value === 'terminal-selection') return terminalSelectionAttachment();
    if (kind === 'terminal') {
      let last = terminalCommands.lastOf(vscode.window.activeTerminal);
      if (!last) { ctl.model.addNotice('No finished command in the active terminal (it needs shell integration).', 'warn'); return undefined; }
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
    if (kind === 'problems') {
      const lines: string[] = [];
      for (const [uri, diagnostics] of vscode.languages.getDiagnostics()) {
        for (const d of diagnostics) {
          lines.push(`${vscode.workspace.asRelativePath(uri, false)}:${d.range.start.line + 1}:${d.range.start.character + 1}: ${vscode.DiagnosticSeverity[d.severity].toLowerCase()}: ${d.message}${d.source ? ` [${d.source}]` : ''}`);
        }
      }
      return { label: `Problems (${lines.length})`, text: lines.slice(0, 300).join('\n') || 'No problems are reported in the workspace.' };
    }
    // files and folders are attached by name: the model reads them with its own tools, which keep
    // secrets files out and every path inside the workspace
    return { label: value, text: kind === 'folder'
      ? `The user points at the workspace folder ${value} (list or read it with your tools).`
      : `The user points at the workspace file ${value} (read it with read_file).` };
  };

  const listModels = async (baseUrl?: string): Promise<ModelsResult> => {
    try {
      return await srv.sendRequest<ModelsResult>(Method.models, baseUrl ? { baseUrl } : {});
    } catch (error) {
      return { baseUrl: baseUrl ? redact(baseUrl) : '(the configured endpoint)', preset: null, models: [], error: redact(`could not list models: ${errorReason(error)}`) };
    }
  };

  async function pickModel(): Promise<void> {
    const cfg = vscode.workspace.getConfiguration('shiro');
    const current = shownModel(cfg.get<string>('model') ?? '', ctl.session?.model);
    const pick = vscode.window.createQuickPick<vscode.QuickPickItem & { model: string }>();
    pick.title = 'Shiro: Model';
    pick.placeholder = 'Pick a model the endpoint serves, or type any model name';
    pick.busy = true;
    pick.items = modelItems([], current);
    let models: ModelsResult['models'] = [];
    pick.onDidChangeValue(value => { pick.items = modelItems(models, current, value); });
    const chosen = new Promise<string | undefined>(resolve => {
      pick.onDidAccept(() => { resolve(pick.selectedItems[0]?.model ?? (pick.value.trim() || undefined)); pick.hide(); });
      pick.onDidHide(() => { resolve(undefined); pick.dispose(); });
    });
    pick.show();
    void listModels().then(r => {
      models = r.models;
      pick.busy = false;
      pick.items = modelItems(models, current, pick.value);
      if (r.error) pick.placeholder = `${r.error} — type a model name`;
    });
    const model = await chosen;
    if (!model || model === current) return;
    await cfg.update('model', model, vscode.ConfigurationTarget.Global);
    ctl.model.addNotice(`Model: ${model}`);
  }

  /** Probe Ollama, LM Studio, llama.cpp and vLLM on their usual ports; pick one of their models. */
  async function detectLocal(): Promise<void> {
    let found: ModelsDetectResult;
    try {
      found = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Shiro: looking for local model servers…' },
        () => srv.sendRequest<ModelsDetectResult>(Method.modelsDetect, detectParams(srv.settings().get('localServerUrls'))));
    } catch (error) {
      ctl.postSetupResult(false, `Could not look for local servers: ${errorReason(error)}`);
      return;
    }
    const problem = detectionReport(found);
    if (problem) {
      ctl.postSetupResult(false, problem);
      void vscode.window.showWarningMessage(problem);
      return;
    }
    const pick = await vscode.window.showQuickPick(localModelItems(found),
      { title: 'Shiro: Local model', placeHolder: found.message, matchOnDescription: true });
    if (!pick) return;
    const cfg = vscode.workspace.getConfiguration('shiro');
    await cfg.update('baseUrl', pick.baseUrl, vscode.ConfigurationTarget.Global);
    await cfg.update('model', pick.model, vscode.ConfigurationTarget.Global);
    await srv.pushConfiguration();
    ctl.postSetupResult(true, `Using ${pick.model} at ${pick.baseUrl} (no API key needed).`);
    ctl.model.addNotice(`Model: ${pick.model} at ${pick.baseUrl}`);
    await ctl.sendInfo();
  }

  async function pickAgent(): Promise<void> {
    const descriptions: Record<Agent, string> = {
      default: 'the everyday agent', quick: 'short answers, few steps', deep: 'thinks longer, reads more',
      plan: 'plans first, changes nothing', review: 'reviews code, changes nothing',
    };
    const pick = await vscode.window.showQuickPick(
      AGENTS.map(a => ({ label: a, description: a === ctl.agent ? `${descriptions[a]} · current` : descriptions[a], agent: a })),
      { title: 'Shiro: Agent variant', placeHolder: 'Used for the next prompts' });
    if (!pick) return;
    ctl.agent = pick.agent;
    await ctl.sendInfo();
  }

  async function saveAndTest(baseUrl: string, model: string): Promise<void> {
    const cfg = vscode.workspace.getConfiguration('shiro');
    if (baseUrl !== (srv.baseUrl() ?? '')) await cfg.update('baseUrl', baseUrl, vscode.ConfigurationTarget.Global);
    if (model !== (cfg.get<string>('model') ?? '')) await cfg.update('model', model, vscode.ConfigurationTarget.Global);
    await srv.pushConfiguration();
    const report = endpointReport(await listModels(baseUrl || undefined));
    ctl.postSetupResult(report.ok, report.text);
  }

  srv.onDidChangeState(state => {
    if (state === 'running') {
      meter.text = '$(pulse) Shiro';
      meter.tooltip = 'Shiro: ready. Click to compact the context.';
      meter.backgroundColor = undefined;
      void ctl.refreshFromServer();
      void srv.sendRequest<ContextMeter>(Method.context, {}).then(renderMeter, () => undefined);
    } else if (state === 'failed' || state === 'stopped') {
      ctl.serverStopped();
      meter.text = '$(error) Shiro';
      meter.tooltip = 'Shiro: the language server is not running. Click for the log.';
      meter.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
    }
  });

  async function listSessions(typed: string): Promise<SessionInfo[]> {
    return (await srv.sendRequest<{ sessions: SessionInfo[] }>(Method.sessionList, listParams(typed))).sessions;
  }

  /** Ask for a new title; undefined when cancelled. Errors are the server's words. */
  async function askTitle(id: string, current: string): Promise<SessionInfo | undefined> {
    const title = await vscode.window.showInputBox({
      title: 'Shiro: Rename session',
      prompt: 'A title of your own; it is kept when the session is resumed later.',
      value: current === 'untitled' || current === '(untitled)' ? '' : current,
      validateInput: titleProblem,
    });
    if (title === undefined) return undefined;
    return srv.sendRequest<SessionInfo>(Method.sessionRename, { id, title });
  }

  async function renameCurrentSession(): Promise<void> {
    try {
      const live = await srv.sendRequest<SessionInfo>(Method.sessionCurrent, {});
      const renamed = await askTitle(live.id, live.title);
      if (renamed) void vscode.window.showInformationMessage(`Shiro: this session is now "${renamed.title}".`);
    } catch (error) {
      void vscode.window.showErrorMessage(`Shiro: could not rename the session: ${errorReason(error)}`);
    }
  }

  async function resumeSession(): Promise<void> {
    try {
      const first = await listSessions('');
      if (!first.length) { void vscode.window.showInformationMessage('Shiro: no saved sessions in this workspace yet.'); return; }
      const trash = { iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Delete this session…' };
      const pencil = { iconPath: new vscode.ThemeIcon('edit'), tooltip: 'Rename this session…' };
      type Item = vscode.QuickPickItem & { sessionId: string; title: string };
      const pick = vscode.window.createQuickPick<Item>();
      const fill = (query: string, sessions: SessionInfo[]): void => {
        // Search results come from the server, ranked: alwaysShow keeps the picker from filtering them
        // again, and an unmatchable label keeps it from re-sorting them by its own label match.
        pick.items = sessionPickItems(sessions, new Date(), ctl.session?.id, query.trim() !== '')
          .map(i => ({ ...i, title: i.label, label: unmatchableLabel(i.label), alwaysShow: true, buttons: i.current ? [pencil] : [pencil, trash] }));
      };
      const search = new SessionSearch(
        listSessions, fill,
        error => { pick.items = []; pick.placeholder = `Search failed: ${errorReason(error)}`; },
        busy => { pick.busy = busy; },
      );
      pick.title = 'Shiro: Resume session';
      pick.placeholder = 'Newest first; type to search the messages of every session';
      pick.matchOnDescription = true;
      pick.matchOnDetail = true;
      fill('', first);
      pick.onDidChangeValue(value => search.type(value));
      let asking = false;   // an input box or dialog hides the picker for a moment: do not close it then
      pick.onDidTriggerItemButton(async e => {
        if (e.button === pencil) {
          asking = true;
          try {
            const renamed = await askTitle(e.item.sessionId, e.item.title);
            if (renamed) void vscode.window.showInformationMessage(`Shiro: renamed to "${renamed.title}".`);
          } catch (error) {
            void vscode.window.showErrorMessage(`Shiro: could not rename the session: ${errorReason(error)}`);
          } finally {
            asking = false;
          }
          pick.show();
          await search.run();
          return;
        }
        const confirm = await vscode.window.showWarningMessage(
          `Delete the session "${e.item.title}"? Its transcript is removed from disk.`, { modal: true }, 'Delete');
        if (confirm !== 'Delete') return;
        try {
          await srv.sendRequest(Method.sessionDelete, { id: e.item.sessionId });
          await search.run();
          void vscode.window.showInformationMessage(`Shiro: deleted "${e.item.title}".`);
        } catch (error) {
          void vscode.window.showErrorMessage(`Shiro: could not delete the session: ${errorReason(error)}`);
        }
      });
      const chosen = await new Promise<Item | undefined>(resolve => {
        pick.onDidAccept(() => { resolve(pick.selectedItems[0]); pick.hide(); });
        pick.onDidHide(() => { if (asking) return; search.dispose(); resolve(undefined); pick.dispose(); });
        pick.show();
      });
      if (!chosen) return;
      await resumeById(chosen.sessionId);
    } catch (error) {
      void vscode.window.showErrorMessage(`Shiro: could not resume: ${errorReason(error)}`);
    }
  }

  async function resumeById(id: string): Promise<void> {
    const result = await srv.sendRequest<ResumeResult>(Method.sessionResume, { id });
    ctl.loadResumed(result);
    ctl.model.addNotice(`Resumed ${result.session.id.slice(0, 8)} (${result.session.messageCount} messages): ${result.session.title}`);
    await chatView.reveal();
  }

  /** Multi-root: the active editor's folder, or the user's pick when no editor is in a folder. */
  function sessionRoot(bound: boolean): string | undefined | Promise<string | undefined> {
    if (foldersPending()) return knownFolders().then(folders => rootAmong(folders, bound));
    return rootAmong(vscode.workspace.workspaceFolders ?? [], bound);
  }

  function rootAmong(known: readonly vscode.WorkspaceFolder[], bound: boolean): string | undefined | Promise<string | undefined> {
    const folders = known.map(f => ({ name: f.name, fsPath: f.uri.fsPath }));
    const editor = vscode.window.activeTextEditor;
    const active = editor ? vscode.workspace.getWorkspaceFolder(editor.document.uri)?.uri.fsPath : undefined;
    const choice = chooseRoot(folders, active, bound);
    if (choice.kind === 'none') return undefined;
    if (choice.kind === 'folder') return choice.root;
    return Promise.resolve(vscode.window.showQuickPick(choice.items, { title: ROOT_PICK_TITLE, ignoreFocusOut: true }))
      .then(pick => pick?.root);
  }

  async function newSession(): Promise<void> {
    try {
      const root = await sessionRoot(false);
      const r = await srv.sendRequest<NewSessionResult>(Method.sessionNew, root ? { root } : {});
      ctl.startedFresh(r);
      const message = savedPreviousMessage(r.previous);
      ctl.model.addNotice(message);
      void vscode.window.showInformationMessage(`Shiro: ${message}`);
    } catch (error) {
      void vscode.window.showErrorMessage(`Shiro: could not start a new session: ${errorReason(error)}`);
    }
  }

  async function compact(): Promise<void> {
    try {
      const r = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Shiro: compacting the context…' },
        () => srv.sendRequest<SessionCompactResult>(Method.sessionCompact, {}));
      ctl.compacted(r);
      void vscode.window.showInformationMessage(`Shiro: compacted ${r.before} → ${r.after} messages (all kept in the transcript).`);
    } catch (error) {
      void vscode.window.showErrorMessage(`Shiro: could not compact: ${errorReason(error)}`);
    }
  }

  const memoryFiles = new MemoryFileSystem(srv);
  context.subscriptions.push(
    meter, srv, ctl, ...review.register(),
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chatView),
    vscode.commands.registerCommand('shiro.resumeSession', resumeSession),
    vscode.commands.registerCommand('shiro.renameSession', renameCurrentSession),
    vscode.commands.registerCommand('shiro.newSession', newSession),
    vscode.commands.registerCommand('shiro.compact', compact),
    vscode.workspace.registerFileSystemProvider(MEMORY_SCHEME, memoryFiles, { isCaseSensitive: true }),
    memoryFiles,
    vscode.commands.registerCommand('shiro.showMemory', () => showMemory(memoryFiles)),
    vscode.commands.registerCommand('shiro.editMemory', () => editMemory(srv)),
    vscode.commands.registerCommand(CLIENT_REMEMBER_COMMAND, (arg?: RememberSelectionArgs) => rememberSelection(srv, arg)),
    vscode.commands.registerCommand('shiro.showLog', () => srv.log.show(true)),
    vscode.commands.registerCommand('shiro.mcpServers', () => showMcpServers(srv)),
    vscode.commands.registerCommand('shiro.showGrants', () => showGrants(srv)),
    vscode.commands.registerCommand('shiro.diagnose', () => showDiagnostics(srv, context, () => ctl.model.state.entries
      .filter(e => e.kind === 'notice' && e.level === 'error').slice(-10).map(e => (e.kind === 'notice' ? `chat: ${e.text}` : '')))),
    vscode.commands.registerCommand('shiro.restartServer', () => srv.start()),
    vscode.commands.registerCommand('shiro.forgetEndpointAnswers', async () => {
      const n = await srv.forgetEndpointAnswers();
      void vscode.window.showInformationMessage(`Shiro: forgot ${n} answer${n === 1 ? '' : 's'} about workspace endpoints; asked again at the next start.`);
      await srv.start();
    }),
    vscode.commands.registerCommand('shiro.focusChat', async () => { await chatView.reveal(true); ctl.focusInput(); }),
    vscode.commands.registerCommand('shiro.stop', () => ctl.cancel()),
    vscode.commands.registerCommand('shiro.addSelection', async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) { void vscode.window.showWarningMessage('Shiro: open a file and select the code to add.'); return; }
      const sel = editor.selection;
      const whole = sel.isEmpty;
      const text = editor.document.getText(whole ? undefined : sel);
      const file = vscode.workspace.asRelativePath(editor.document.uri, false);
      const label = whole ? file : selectionLabel(file, sel.start.line + 1, sel.end.line + (sel.end.character === 0 && sel.end.line > sel.start.line ? 0 : 1));
      await chatView.reveal(true);
      // the server's secrets gate checks the source: a secrets file or a file outside the workspace is refused
      ctl.addAttachment({ label, text, source: editor.document.uri.toString() });
    }),
    vscode.commands.registerCommand('shiro.addTerminalSelection', async () => {
      const attachment = await terminalSelectionAttachment();
      await chatView.reveal(true);
      if (attachment) ctl.addAttachment(attachment);
    }),
    vscode.commands.registerCommand('shiro.pickModel', () => pickModel()),
    vscode.commands.registerCommand('shiro.detectLocalModels', () => detectLocal()),
    vscode.commands.registerCommand('shiro.pickAgent', () => pickAgent()),
    vscode.commands.registerCommand('shiro.setup', async () => { await chatView.reveal(); ctl.showSetup(); }),
    vscode.commands.registerCommand('shiro.openSettings', () =>
      vscode.commands.executeCommand('workbench.action.openSettings', '@ext:shiro.shiro')),
    vscode.commands.registerCommand('shiro.meterClicked', async () => {
      if (!srv.isRunning) { srv.log.show(true); return; }
      if (ctl.session?.messageCount === 0) {
        void vscode.window.showInformationMessage('Shiro: nothing to compact yet (no messages in this session).');
        return;
      }
      const choice = await vscode.window.showInformationMessage(
        lastMeter ? `Shiro context: ${Math.round(lastMeter.percent)}% of the threshold. Compact now?` : 'Compact the context now?',
        'Compact', 'Show log');
      if (choice === 'Compact') await compact();
      else if (choice === 'Show log') srv.log.show(true);
    }),
    vscode.commands.registerCommand('shiro.setApiKey', async () => {
      const key = await vscode.window.showInputBox({
        title: 'Shiro: Set API key', prompt: 'Stored in VS Code SecretStorage, never in settings. Empty clears it.',
        password: true, ignoreFocusOut: true,
      });
      if (key === undefined) return;
      if (key.trim()) await context.secrets.store(API_KEY_SECRET, key.trim());
      else await context.secrets.delete(API_KEY_SECRET);
      await srv.pushConfiguration();
      void vscode.window.showInformationMessage(key.trim() ? 'Shiro: API key saved.' : 'Shiro: API key cleared.');
    }),
    context.secrets.onDidChange(e => { if (e.key === API_KEY_SECRET) { void srv.pushConfiguration(); void ctl.sendInfo(); } }),
    vscode.workspace.onDidChangeConfiguration(e => {
      // the server keeps its interpreter and state root for its life: a new one means a restart, the rest is pushed
      if (e.affectsConfiguration('shiro')) {
        void srv.restartIfStale().then(restarted => (restarted ? undefined : srv.pushConfiguration()));
        void ctl.sendInfo();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void srv.restartIfStale()),
  );

  void srv.start();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
}
