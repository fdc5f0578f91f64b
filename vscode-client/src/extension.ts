// Activation only wires: it builds the parts (server, chat, review, memory, sessions, setup), connects the
// server's notifications to them and registers the commands (commands.ts).
import * as vscode from 'vscode';
import { ChatViewProvider, CHAT_VIEW_ID } from './chat/chatView';
import { ChatController } from './chat/controller';
import { MentionSources } from './chat/mentionSources';
import { MeterItem } from './chat/meterItem';
import { registerCommands } from './commands';
import { MEMORY_SCHEME, MemoryFileSystem } from './memory/memory';
import { ReviewController } from './review/changes';
import { errorReason } from './server/errors';
import { API_KEY_SECRET, ShiroServer } from './server/server';
import { SessionCommands } from './sessions/commands';
import { SetupCommands } from './setup/commands';
import { Method } from './shared/protocol';
import type {
  ApproveParams,
  ChangesResult,
  CompactionProgress,
  ContextMeter,
  EventNotification,
  SessionInfo,
  TodosPayload,
} from './shared/protocol';

let server: ShiroServer | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  // the server's handlers reach the parts built after it (nothing arrives before srv.start())
  const late: { ctl?: ChatController; review?: ReviewController } = {};
  const meter = new MeterItem(() => late.ctl?.session);
  server = new ShiroServer(context, client => [
    client.onNotification(Method.event, (n: EventNotification) => late.ctl?.onEvent(n)),
    client.onNotification(Method.todosChanged, (t: TodosPayload) => late.ctl?.setTodos(t)),
    client.onNotification(Method.contextChanged, (m: ContextMeter) => meter.render(m)),
    client.onNotification(Method.sessionCompacting, (p: CompactionProgress) => late.ctl?.compactionProgress(p)),
    client.onNotification(Method.sessionChanged, (s: SessionInfo) => {
      late.ctl?.setSession(s);
      meter.refresh();
    }),
    client.onNotification(Method.changesChanged, (r: ChangesResult) => late.review?.onNotified(r)),
    client.onRequest(Method.approve, (p: ApproveParams, token: vscode.CancellationToken) =>
      late.ctl!.requestApproval(p, token),
    ),
  ]);
  const srv = server;
  const ctl = new ChatController(srv);
  const review = new ReviewController(srv, ctl);
  Object.assign(late, { ctl, review });
  ctl.review = review;
  const chatView = new ChatViewProvider(context.extensionUri, ctl);
  const sessions = new SessionCommands(srv, ctl, () => chatView.reveal());
  const setup = new SetupCommands(context, srv, ctl);
  const mentions = new MentionSources(ctl);
  wireController(ctl, chatView, sessions, setup, mentions);
  followServerState(srv, ctl, meter);

  const memoryFiles = new MemoryFileSystem(srv);
  context.subscriptions.push(
    meter,
    srv,
    ctl,
    ...review.register(),
    // kept alive while hidden: showing the view again redraws nothing (a rebuild took 1.7 s on a long session)
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chatView, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
    vscode.workspace.registerFileSystemProvider(MEMORY_SCHEME, memoryFiles, { isCaseSensitive: true }),
    memoryFiles,
    ...mentions.watchTerminals(),
    vscode.window.onDidChangeActiveTextEditor(() => ctl.activeFileChanged()),
    vscode.workspace.onDidChangeConfiguration(e => {
      if (e.affectsConfiguration('shiro.attachActiveFile')) ctl.activeFileChanged();
    }),
    ...registerCommands({ context, srv, ctl, chatView, meter, memoryFiles, mentions, sessions, setup }),
    ...followSettings(context, srv, ctl),
  );

  void srv.start();
  void ctl.sendInfo(); // (the walkthrough's context keys, before the chat is ever opened)
}

export async function deactivate(): Promise<void> {
  await server?.stop();
}

/** The chat controller's hooks into the parts that own what it asks for. */
function wireController(
  ctl: ChatController,
  chatView: ChatViewProvider,
  sessions: SessionCommands,
  setup: SetupCommands,
  mentions: MentionSources,
): void {
  ctl.activeFile = { label: () => mentions.activeFileLabel(), attachment: () => mentions.activeFileAttachment() };
  ctl.onReveal = () => {
    void chatView.reveal();
  };
  ctl.isVisible = () => chatView.visible;
  ctl.onPickSession = () => sessions.resume();
  ctl.rootSource = bound => sessions.root(bound);
  ctl.onResume = async id => {
    try {
      await sessions.resumeById(id);
    } catch (error) {
      ctl.model.addNotice(`Could not resume: ${errorReason(error)}`, 'error');
    }
  };
  ctl.infoSource = async () => {
    const info = await setup.panelInfo();
    // the walkthrough's "Connect a model" step is done once a model endpoint is set up
    void vscode.commands.executeCommand('setContext', 'shiro.modelReady', !info.setup.show);
    return info;
  };
  ctl.onAction = m => setup.onAction(m);
  ctl.mentionCandidates = () => mentions.candidates();
  ctl.resolveMention = (kind, value) => mentions.resolve(kind, value);
}

function followServerState(srv: ShiroServer, ctl: ChatController, meter: MeterItem): void {
  srv.onDidChangeState(state => {
    if (state === 'running') {
      meter.serverRunning();
      void ctl.refreshFromServer();
      void srv.sendRequest(Method.context, {}).then(
        m => meter.render(m),
        () => undefined,
      );
    } else if (state === 'failed' || state === 'stopped') {
      ctl.serverStopped();
      meter.serverStopped();
    }
  });
}

/** Settings, the API key and Workspace Trust: a restart or a configuration push when they change. */
function followSettings(context: vscode.ExtensionContext, srv: ShiroServer, ctl: ChatController): vscode.Disposable[] {
  return [
    context.secrets.onDidChange(e => {
      if (e.key === API_KEY_SECRET) {
        void srv.pushConfiguration();
        void ctl.sendInfo();
      }
    }),
    vscode.workspace.onDidChangeConfiguration(e => {
      // the server keeps its trust, interpreter and state root for its life: a new one restarts it, the rest is pushed
      if (e.affectsConfiguration('shiro')) {
        void srv.restartIfStale().then(restarted => (restarted ? undefined : srv.pushConfiguration()));
        void ctl.sendInfo();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void srv.restartIfStale()),
  ];
}
