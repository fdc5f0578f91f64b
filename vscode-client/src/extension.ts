import * as vscode from 'vscode';
import { ChatViewProvider, CHAT_VIEW_ID } from './chatView';
import { ReviewController } from './changes';
import { ChatController } from './controller';
import { errorReason } from './errors';
import { MEMORY_SCHEME, MemoryDocuments, rememberSelection, showMemory } from './memory';
import { meterView } from './meter';
import { CLIENT_REMEMBER_COMMAND, Method } from './protocol';
import type {
  ApproveParams, ChangesResult, ContextMeter, EventNotification, ResumeResult, SessionInfo, TodosPayload, NewSessionResult,
  RememberSelectionArgs,
} from './protocol';
import { API_KEY_SECRET, ShiroServer } from './server';
import { savedPreviousMessage, sessionPickItems } from './sessions';

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
    const view = meterView(m, controller?.session?.costUsd);
    meter.text = view.text;
    meter.tooltip = view.tooltip;
    meter.backgroundColor = view.background ? new vscode.ThemeColor(view.background) : undefined;
  };

  server = new ShiroServer(context, client => [
    client.onNotification(Method.event, (n: EventNotification) => controller?.onEvent(n)),
    client.onNotification(Method.todosChanged, (t: TodosPayload) => controller?.setTodos(t)),
    client.onNotification(Method.contextChanged, (m: ContextMeter) => renderMeter(m)),
    client.onNotification(Method.sessionChanged, (s: SessionInfo) => {
      controller?.setSession(s);
      if (lastMeter) renderMeter(lastMeter);
    }),
    client.onNotification(Method.changesChanged, (r: ChangesResult) => review?.onChanged(r)),
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
  ctl.onPickSession = () => resumeSession();

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

  async function resumeSession(): Promise<void> {
    try {
      const { sessions } = await srv.sendRequest<{ sessions: SessionInfo[] }>(Method.sessionList, { limit: 50 });
      if (!sessions.length) { void vscode.window.showInformationMessage('Shiro: no saved sessions in this workspace yet.'); return; }
      const pick = await vscode.window.showQuickPick(sessionPickItems(sessions), {
        title: 'Shiro: Resume session', placeHolder: 'Newest first', matchOnDescription: true, matchOnDetail: true,
      });
      if (!pick) return;
      const result = await srv.sendRequest<ResumeResult>(Method.sessionResume, { id: pick.sessionId });
      ctl.loadResumed(result);
      ctl.model.addNotice(`Resumed ${result.session.id.slice(0, 8)} (${result.session.messageCount} messages): ${result.session.title}`);
      await chatView.reveal();
    } catch (error) {
      void vscode.window.showErrorMessage(`Shiro: could not resume: ${errorReason(error)}`);
    }
  }

  async function newSession(): Promise<void> {
    try {
      const r = await srv.sendRequest<NewSessionResult>(Method.sessionNew, {});
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
        () => srv.sendRequest<{ before: number; after: number }>(Method.sessionCompact, {}));
      void vscode.window.showInformationMessage(`Shiro: compacted ${r.before} → ${r.after} messages.`);
    } catch (error) {
      void vscode.window.showErrorMessage(`Shiro: could not compact: ${errorReason(error)}`);
    }
  }

  const memoryDocuments = new MemoryDocuments();
  context.subscriptions.push(
    meter, srv, ctl, ...review.register(),
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chatView),
    vscode.commands.registerCommand('shiro.resumeSession', resumeSession),
    vscode.commands.registerCommand('shiro.newSession', newSession),
    vscode.commands.registerCommand('shiro.compact', compact),
    vscode.workspace.registerTextDocumentContentProvider(MEMORY_SCHEME, memoryDocuments),
    vscode.commands.registerCommand('shiro.showMemory', () => showMemory(srv, memoryDocuments)),
    vscode.commands.registerCommand(CLIENT_REMEMBER_COMMAND, (arg?: RememberSelectionArgs) => rememberSelection(srv, arg)),
    vscode.commands.registerCommand('shiro.showLog', () => srv.log.show(true)),
    vscode.commands.registerCommand('shiro.restartServer', () => srv.start()),
    vscode.commands.registerCommand('shiro.focusChat', () => chatView.reveal()),
    vscode.commands.registerCommand('shiro.meterClicked', async () => {
      if (!srv.isRunning) { srv.log.show(true); return; }
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
    context.secrets.onDidChange(e => { if (e.key === API_KEY_SECRET) void srv.pushConfiguration(); }),
    vscode.workspace.onDidChangeConfiguration(e => {
      if (e.affectsConfiguration('shiro.pythonPath')) void srv.start();
      else if (e.affectsConfiguration('shiro')) void srv.pushConfiguration();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void srv.start()),
  );

  void srv.start();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
}
