// Extension-host side of the chat: sends shiro/chat (FIFO-queued by the server), relays shiro/event into the
// ChatModel, answers shiro/approve from approval cards, runs slash commands as requests.
import * as vscode from 'vscode';
import { approvalCard, toDecision, toReason } from './approval';
import { isReviewMessage } from '../review/changesModel';
import { ChatModel, compactionUndoneNotice } from './chatModel';
import { Method } from '../shared/protocol';
import type { Agent, CompactionProgress, SessionCompactResult } from '../shared/protocol';
import { splitAttachments, withAttachments, withCurrentFile } from './attachments';
import type { Candidate, MentionKind } from '../shared/mentions';
import type {
  ApproveParams,
  ApproveResult,
  ChatResult,
  Decision,
  EventNotification,
  ResumeResult,
  TodosPayload,
  NewSessionResult,
  SessionInfo,
  TurnInfo,
} from '../shared/protocol';
import { formatSlashResult, helpText, parseSlash } from './slash';
import { commandCandidates, customInvocation, missingInputs } from './customCommands';
import { SLASH_COMMANDS } from '../shared/slashCommands';
import type { CommandInfo } from './customCommands';
import type { ShiroServer } from '../server/server';
import { errorReason } from '../server/errors';
import { resolveWorkspaceLink } from './workspaceLink';
import { sessionLinks } from '../sessions/sessions';
import type {
  Attachment,
  ChatEntry,
  HostMessage,
  ImageChip,
  PanelInfo,
  ReviewMessage,
  WebviewMessage,
} from '../shared/webviewProtocol';

/** A code block's "Insert": at the cursor of the editor last used (the panel has the focus when clicked). */
async function insertAtCursor(text: string): Promise<void> {
  const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
  if (!editor) {
    void vscode.window.showWarningMessage('Shiro: open an editor to insert the code into.');
    return;
  }
  await editor.edit(edit => {
    for (const s of editor.selections) edit.replace(s, text);
  });
  await vscode.window.showTextDocument(editor.document, editor.viewColumn);
}

async function newUntitled(content: string, language: string): Promise<void> {
  const doc = await vscode.workspace.openTextDocument({
    content,
    ...(language ? { language: languageId(language) } : {}),
  });
  await vscode.window.showTextDocument(doc);
}

const LANGUAGE_IDS: Record<string, string> = {
  py: 'python',
  js: 'javascript',
  ts: 'typescript',
  sh: 'shellscript',
  bash: 'shellscript',
  shell: 'shellscript',
  yml: 'yaml',
  md: 'markdown',
  rs: 'rust',
  'c++': 'cpp',
  cs: 'csharp',
  html: 'html',
  toml: 'toml',
};
const languageId = (fence: string): string => LANGUAGE_IDS[fence.toLowerCase()] ?? fence.toLowerCase();

interface RunningChat {
  text: string;
  images: readonly ImageChip[];
  cts: vscode.CancellationTokenSource;
  taskId?: string;
  shown: boolean;
  user?: ChatEntry;
}

/** The review UI (review/changes.ts): diff previews, changed files, checkpoints. */
export interface ReviewHooks {
  handle(m: ReviewMessage): Promise<void>;
  approvalShown(entryId: string, params: ApproveParams): Promise<void>;
  approvalSettled(entryId: string): Promise<void>;
  refreshCheckpoints(): Promise<void>;
  transcriptLoaded(): Promise<void>;
  /** A resumed turn ends (while the transcript loads): its Changed files block goes here. */
  turnShown(turn: TurnInfo): void;
}

export class ChatController implements vscode.Disposable {
  readonly model: ChatModel;
  private post: (m: HostMessage) => void = () => {};
  private readonly chats: RunningChat[] = [];
  private readonly seenTasks = new Set<string>();
  private readonly pendingApprovals = new Map<string, (d: Decision, reason?: string) => void>();
  review: ReviewHooks | undefined;
  private history: string[] = [];
  private historyLoaded = false;
  session: SessionInfo | undefined;
  onPickSession: () => Promise<void> = async () => {};
  /** Multi-root: the workspace folder a session that starts now is for (undefined: the server's choice). */
  rootSource: (sessionBound: boolean) => string | undefined | Promise<string | undefined> = () => undefined;
  /** Resume a session by id (a /sessions button): set by the extension. */
  onResume: (id: string) => Promise<void> = async () => {};
  onReveal: () => void = () => {};
  /** `@` in the prompt: what can be mentioned (files, folders, the selection, Problems): set by the extension. */
  mentionCandidates: () => Promise<Candidate[]> = async () => [];
  /** A picked mention → the context to attach (undefined: nothing to attach, the reason was shown). */
  resolveMention: (kind: MentionKind, value: string) => Promise<Attachment | undefined> = async () => undefined;
  /** Whether the chat view is on screen (a turn that ends while it is hidden says so in a notification). */
  isVisible: () => boolean = () => true;
  /** The agent variant sent with each prompt (shiro/chat `agent`; `default` is left out). */
  agent: Agent = 'default';
  /** What the panel's bar and welcome show (settings, SecretStorage): set by the extension. */
  infoSource: () => Promise<PanelInfo | undefined> = async () => undefined;
  /** Panel actions that need the workbench (pickers, settings, SecretStorage): set by the extension. */
  onAction: (
    m: Extract<WebviewMessage, { type: 'pickModel' | 'pickAgent' | 'setApiKey' | 'detectLocal' | 'setup' }>,
  ) => Promise<void> = async () => {};

  constructor(private readonly server: ShiroServer) {
    this.model = new ChatModel(entry => this.post({ type: 'entry', entry }));
  }

  /** A (re)created webview: give it everything it needs to draw the current state. */
  attach(post: (m: HostMessage) => void): void {
    this.post = post;
    this.ready = false;
  }

  detach(): void {
    this.post = () => {};
    this.ready = false;
  }

  /** The webview's script has started (its `ready`): messages posted now are not lost. */
  private ready = false;
  private wantFocus = false;
  private wantSetup = false;

  sendState(): void {
    this.post({ type: 'state', state: this.model.state, history: this.history });
  }

  async sendInfo(): Promise<void> {
    const info = await this.infoSource();
    if (info) this.post({ type: 'info', info });
  }

  showSetup(): void {
    if (this.ready) this.post({ type: 'showSetup' });
    else this.wantSetup = true; // the view is still being created (the command opened it)
  }
  postSetupResult(ok: boolean, text: string): void {
    this.post({ type: 'setupResult', ok, text });
  }

  /** Ask the panel to focus its prompt (after it is revealed, after an approval is answered). */
  focusInput(): void {
    if (this.ready) this.post({ type: 'focus' });
    else this.wantFocus = true; // the view is still being created: focus when its script is up
  }

  async refreshFromServer(): Promise<void> {
    if (!this.server.isRunning) return;
    const [history, todos, session] = await Promise.allSettled([
      this.server.sendRequest(Method.history, {}),
      this.server.sendRequest(Method.todos, {}),
      this.server.sendRequest(Method.sessionCurrent, {}),
    ]);
    if (history.status === 'fulfilled' && !this.historyLoaded) {
      // the server's history is loaded once; after that the host keeps it (slash commands included)
      this.historyLoaded = true;
      this.history = [...history.value.prompts, ...this.history].slice(-200);
      this.post({ type: 'history', prompts: this.history });
    }
    if (todos.status === 'fulfilled') this.setTodos(todos.value);
    if (session.status === 'fulfilled') {
      this.setSession(session.value);
      void this.offerLastSession(session.value);
    }
    await this.refreshCommands(); // the / completion's custom commands, once the server is up
  }

  private lastSessionOffered = false;

  /** An empty panel on a fresh session (after a reload, a new window) offers the workspace's last session. */
  private async offerLastSession(current: SessionInfo): Promise<void> {
    if (this.lastSessionOffered || current.messageCount > 0 || this.model.state.entries.length) return;
    this.lastSessionOffered = true;
    const listed = await this.server.sendRequest(Method.sessionList, { limit: 3 }).catch(() => undefined);
    const last = listed?.sessions?.find(s => s.id !== current.id && s.messageCount > 0);
    if (!last || this.model.state.entries.length) return;
    this.model.addNotice('Your last session in this workspace:', 'info', sessionLinks([last], current.id));
  }

  setTodos(todos: TodosPayload | undefined): void {
    this.model.state.todos = todos;
    this.post({ type: 'todos', todos });
  }

  setSession(session: SessionInfo): void {
    this.session = session;
    this.model.state.sessionTitle = session.title;
    void this.sendInfo();
  }

  private setBusy(): void {
    const busy = this.chats.length > 0;
    if (busy !== this.model.state.busy) {
      this.model.state.busy = busy;
      this.post({ type: 'busy', busy });
      void vscode.commands.executeCommand('setContext', 'shiro.busy', busy); // the Stop keybinding's `when`
    }
  }

  async refreshQueue(): Promise<void> {
    try {
      const r = await this.server.sendRequest(Method.queue, {});
      this.model.state.queue = r.queued;
    } catch {
      this.model.state.queue = this.chats.slice(1).map(c => ({ taskId: c.taskId ?? '', text: c.text }));
    }
    this.post({ type: 'queue', queue: this.model.state.queue });
  }

  async handleMessage(m: WebviewMessage): Promise<void> {
    if (isReviewMessage(m)) {
      await this.review?.handle(m);
      return;
    }
    switch (m.type) {
      case 'ready':
        this.ready = true;
        this.sendState();
        for (const attachment of this.pendingAttachments.splice(0)) this.post({ type: 'attach', attachment });
        this.activeFileChanged();
        if (this.wantFocus) {
          this.wantFocus = false;
          this.post({ type: 'focus' });
        }
        if (this.wantSetup) {
          this.wantSetup = false;
          this.post({ type: 'showSetup' });
        }
        void this.sendInfo();
        void this.refreshFromServer();
        break;
      case 'pickModel':
      case 'pickAgent':
      case 'setApiKey':
      case 'detectLocal':
      case 'setup':
        await this.onAction(m);
        break;
      case 'send':
        await this.submit(
          m.text,
          withCurrentFile(m.attachments ?? [], m.currentFile ? this.activeFile.attachment() : undefined),
          m.images ?? [],
        );
        break;
      case 'addImage':
        await this.addImage({ name: m.name, data: m.dataUrl.slice(m.dataUrl.indexOf(',') + 1) });
        break;
      case 'cancel':
        this.cancel();
        break;
      case 'clearQueue':
        await this.clearQueue();
        break;
      case 'approve':
        this.answerApproval(m.id, toDecision(m.decision), false, toReason(m.reason));
        break;
      case 'copy':
        await vscode.env.clipboard.writeText(m.text);
        break;
      case 'mentions':
        this.post({ type: 'mentionCandidates', items: await this.mentionCandidates().catch(() => []) });
        break;
      case 'commands':
        await this.refreshCommands();
        break;
      case 'inputs': {
        const waiting = this.waitingInputs.get(m.id);
        this.waitingInputs.delete(m.id);
        if (waiting && m.values) await this.chat(waiting.text, waiting.images, m.values);
        break;
      }
      case 'mention': {
        const attachment = await this.resolveMention(m.kind, m.value).catch(error => {
          this.model.addNotice(`Could not attach ${m.value}: ${errorReason(error)}`, 'warn');
          return undefined;
        });
        if (attachment) this.post({ type: 'attach', attachment });
        break;
      }
      case 'resume':
        await this.onResume(m.id);
        break;
      case 'undoCompaction':
        await this.undoCompaction();
        break;
      case 'retry': {
        const text = this.model.takeRetry(m.id);
        if (text !== undefined) await this.chat(text);
        break;
      }
      case 'insertCode':
        await insertAtCursor(m.text);
        break;
      case 'newFile':
        await newUntitled(m.text, m.language);
        break;
      case 'openFile':
        await this.openLink(m.href);
        break;
    }
  }

  private async openLink(href: string): Promise<void> {
    const roots = (vscode.workspace.workspaceFolders ?? []).map(f => f.uri.fsPath);
    const target = resolveWorkspaceLink(href, roots);
    if (!target) {
      this.model.addNotice(`Not opened: ${href} is not a file inside this workspace.`, 'warn');
      return;
    }
    try {
      const line = Math.max(0, (target.line ?? 1) - 1);
      const position = new vscode.Position(line, 0);
      await vscode.window.showTextDocument(vscode.Uri.file(target.fsPath), {
        preview: true,
        selection: new vscode.Range(position, position),
      });
    } catch (error) {
      this.model.addNotice(`Could not open ${href}: ${errorReason(error)}`, 'warn');
    }
  }

  /** The custom commands (`shiro/commands/list`) as last read; the `/` completion offers them. */
  customCommands: CommandInfo[] = [];
  private readonly waitingInputs = new Map<string, { text: string; images: readonly ImageChip[] }>();
  private inputsAsked = 0;

  async refreshCommands(): Promise<void> {
    if (!this.server.isRunning) return;
    try {
      this.customCommands = (await this.server.sendRequest(Method.commandsList, {})).commands ?? [];
    } catch {
      return; // an older server, or one still starting: the built-ins alone
    }
    this.post({ type: 'commands', items: commandCandidates(this.customCommands) });
  }

  async submit(raw: string, attachments: readonly Attachment[] = [], images: readonly ImageChip[] = []): Promise<void> {
    const text = raw.trim();
    if (!text) return;
    this.pushHistory(text);
    const name = /^\/([A-Za-z0-9][\w.:-]*)/.exec(text)?.[1];
    if (name && !(name.toLowerCase() in SLASH_COMMANDS) && !customInvocation(text, this.customCommands))
      await this.refreshCommands(); // a command file added since the list was read
    const custom = customInvocation(text, this.customCommands);
    if (custom) {
      await this.runCustom(text, custom, attachments, images);
      return;
    }
    const slash = parseSlash(text);
    if (slash) {
      await this.runSlash(text, slash);
      return;
    }
    await this.chat(withAttachments(text, attachments), images);
  }

  /**
   * An image for the next prompt: pasted or dropped (`data`, base64) or a workspace file (`path`). The server
   * checks, downscales and keeps it; the composer shows its chip. What cannot be kept is said in the chat.
   */
  async addImage(image: { name: string; data?: string; path?: string }): Promise<void> {
    try {
      const kept = await this.server.sendRequest(Method.imagesAdd, image);
      this.post({ type: 'image', image: { id: kept.id, name: kept.name, thumbnail: kept.thumbnail } });
      this.focusInput();
    } catch (error) {
      this.model.addNotice(`Not attached: ${errorReason(error)}`, 'warn');
    }
  }

  /** A custom command: sent to the server, which expands it; its missing `${input:…}` values are asked first. */
  private async runCustom(
    text: string,
    custom: { command: CommandInfo; args: string },
    attachments: readonly Attachment[],
    images: readonly ImageChip[],
  ): Promise<void> {
    const { command, args } = custom;
    if (command.error) {
      const typed = this.model.addUser(text);
      if (typed.kind === 'user') typed.command = true;
      this.model.addNotice(`/${command.name} cannot run: ${command.error} (${command.source})`, 'warn');
      return;
    }
    const full = withAttachments(text, attachments);
    const missing = missingInputs(command, args);
    if (!missing.length) {
      await this.chat(full, images);
      return;
    }
    const id = `inputs-${++this.inputsAsked}`;
    this.waitingInputs.set(id, { text: full, images });
    this.post({ type: 'askInputs', ask: { id, command: command.name, source: command.source, inputs: missing } });
  }

  /** The current-file chip: its label now, and what it sends (set by the extension; shiro.attachActiveFile). */
  activeFile: { label(): string | null; attachment(): Attachment | undefined } = {
    label: () => null,
    attachment: () => undefined,
  };

  /** The active editor (or the setting) changed: the composer's current-file chip follows. */
  activeFileChanged(): void {
    this.post({ type: 'activeFile', label: this.activeFile.label() });
  }

  /** "Add selection to chat" (and other context): a chip in the composer, sent with the next prompt. */
  addAttachment(attachment: Attachment): void {
    if (this.ready) this.post({ type: 'attach', attachment });
    else this.pendingAttachments.push(attachment);
    this.focusInput();
  }
  private readonly pendingAttachments: Attachment[] = [];

  private pushHistory(text: string): void {
    if (this.history[this.history.length - 1] !== text) this.history = [...this.history, text].slice(-200);
  }

  private async runSlash(text: string, action: NonNullable<ReturnType<typeof parseSlash>>): Promise<void> {
    const typed = this.model.addUser(text);
    if (typed.kind === 'user') typed.command = true;
    if (action.kind === 'help') {
      await this.refreshCommands();
      this.model.addNotice(helpText(this.customCommands));
      return;
    }
    if (action.kind === 'error') {
      this.model.addNotice(action.message, 'warn');
      return;
    }
    if (action.kind === 'pickSession') {
      await this.onPickSession();
      return;
    }
    try {
      if (action.command === 'new' || action.command === 'clear') {
        // multi-root: like the New session command, the fresh session goes to the editor's folder (or the pick)
        const source = this.rootSource(false);
        const root = source instanceof Promise ? await source : source;
        const first = action.steps[0];
        if (root && (first.method === Method.sessionNew || first.method === Method.sessionClear))
          first.params.root = root;
      }
      const results: unknown[] = [];
      for (const step of action.steps) results.push(await this.server.sendRequest(step.method, step.params));
      if (action.command === 'resume') {
        this.loadResumed(results[0] as ResumeResult);
      }
      if (action.command === 'new' || action.command === 'clear') this.startedFresh(results[0] as NewSessionResult);
      if (action.command === 'compact') {
        this.compacted(results[0] as SessionCompactResult);
        return;
      }
      if (action.command === 'todos') {
        this.model.addTaskList(results[0] as TodosPayload);
        return;
      }
      if (action.command === 'sessions') {
        // a button per session that resumes it (the text list stays for reading and copying)
        const sessions = (results[0] as { sessions: SessionInfo[] }).sessions;
        this.model.addNotice(
          formatSlashResult(action.command, results),
          'info',
          sessionLinks(sessions, this.session?.id),
        );
      } else this.model.addNotice(formatSlashResult(action.command, results));
    } catch (error) {
      this.model.addNotice(`/${action.command} failed: ${errorReason(error)}`, 'error');
    }
  }

  loadResumed(r: ResumeResult): void {
    this.setSession(r.session);
    this.model.loadTranscript(r.transcript, r.compactions ?? [], r, turn => this.review?.turnShown(turn));
    if (r.modelNote) this.model.addNotice(r.modelNote);
    this.setTodos(r.todos);
    this.sendState();
    void this.review?.transcriptLoaded();
  }

  /** `shiro/session/compacting`: the divider shows the summary running (and a failure). */
  compactionProgress(p: CompactionProgress): void {
    this.model.compactionProgress(p.phase, p.messages);
    // an automatic compaction has no /compact result: its marker comes with `done`
    if (p.phase === 'done' && p.compaction?.auto) this.model.compacted(p.compaction, p.messages);
  }

  /** A /compact that went through (from the chat or the status bar): the divider gets its summary. */
  compacted(r: SessionCompactResult): void {
    if (r.compaction) this.model.compacted(r.compaction, r.before);
    else this.model.addNotice(formatSlashResult('compact', [r]));
  }

  async undoCompaction(): Promise<void> {
    try {
      const r = await this.server.sendRequest(Method.sessionUncompact, {});
      this.model.compactionUndone();
      this.model.addNotice(compactionUndoneNotice(r.after));
    } catch (error) {
      this.model.addNotice(`Could not undo the compaction: ${errorReason(error)}`, 'warn');
    }
  }

  startedFresh(r: NewSessionResult): void {
    this.setSession(r.session);
    this.model.clear();
    this.setTodos(undefined);
    this.sendState();
  }

  /** Send a prompt; while a turn runs the server queues it (FIFO) and the panel shows the queue. */
  async chat(text: string, images: readonly ImageChip[] = [], inputs?: Record<string, string>): Promise<void> {
    const bound = this.chats.length > 0 || (this.session?.messageCount ?? 0) > 0;
    const source = this.rootSource(bound); // a promise only while the user picks a folder
    const root = source instanceof Promise ? await source : source;
    const entry: RunningChat = { text, images, cts: new vscode.CancellationTokenSource(), shown: false };
    const wasBusy = this.chats.length > 0;
    this.chats.push(entry);
    if (!wasBusy) {
      entry.shown = true;
      entry.user = this.model.addUser(text, images);
    }
    this.setBusy();
    if (wasBusy) setTimeout(() => void this.refreshQueue(), 50);
    try {
      const params = {
        text,
        ...(this.agent !== 'default' ? { agent: this.agent } : {}),
        ...(root ? { root } : {}),
        ...(inputs ? { inputs } : {}),
        ...(images.length ? { images: images.map(i => ({ id: i.id, name: i.name })) } : {}),
      };
      const result = await this.server.sendRequest(Method.chat, params, entry.cts.token);
      entry.taskId = result.taskId;
      if (result.stopReason === 'queue-cleared' && !entry.shown) return; // it never ran: the queue was cleared
      this.showUser(entry);
      this.finish(result);
      if (result.stopReason === 'error') this.model.offerRetry(text);
      if (result.stopReason === 'done' || result.stopReason === 'error') this.notifyIfHidden(text, result.stopReason);
      void this.review?.refreshCheckpoints();
    } catch (error) {
      this.showUser(entry);
      this.model.addNotice(`Shiro: ${errorReason(error)}`, 'error');
      this.model.offerRetry(text);
    } finally {
      entry.cts.dispose();
      this.chats.splice(this.chats.indexOf(entry), 1);
      this.setBusy();
      if (this.chats.length > 0 || this.model.state.queue.length > 0) void this.refreshQueue();
    }
  }

  private notifyIfHidden(text: string, how: 'done' | 'error'): void {
    if (this.isVisible()) return;
    const prompt = splitAttachments(text).text.replace(/\s+/g, ' ');
    const short = prompt.length > 50 ? `${prompt.slice(0, 50)}…` : prompt;
    const message = how === 'error' ? `Shiro: the turn failed: "${short}"` : `Shiro answered: "${short}"`;
    void Promise.resolve(vscode.window.showInformationMessage(message, 'Show chat')).then(choice => {
      if (choice === 'Show chat') this.onReveal();
    });
  }

  private showUser(entry: RunningChat): void {
    if (!entry.shown) {
      entry.shown = true;
      entry.user = this.model.addUser(entry.text, entry.images);
    }
    if (entry.taskId && entry.user?.kind === 'user' && !entry.user.taskId) entry.user.taskId = entry.taskId;
  }

  private finish(result: ChatResult): void {
    this.model.turnEnded(result.taskId, result.stopReason, result.error);
  }

  /** shiro/event: the first event of a queued task shows its prompt, then the event. */
  onEvent(n: EventNotification): void {
    if (!this.seenTasks.has(n.taskId)) {
      this.seenTasks.add(n.taskId);
      const running = this.chats[0];
      if (running && !running.taskId) running.taskId = n.taskId;
      if (running) this.showUser(running);
      if (this.model.state.queue.length) void this.refreshQueue();
    }
    this.model.applyEvent(n.taskId, n.event);
    if (n.event.type === 'error' && n.event.needsSetup) this.showSetup(); // the error points at the card
  }

  /** Stop = cancel the running shiro/chat via its token ($/cancelRequest); the server answers "cancelled". */
  cancel(): void {
    const running = this.chats[0];
    if (running) running.cts.cancel();
    for (const id of this.pendingApprovals.keys()) this.answerApproval(id, 'deny');
  }

  async clearQueue(): Promise<void> {
    try {
      const r = await this.server.sendRequest(Method.queueClear, {});
      this.model.addNotice(`Cleared ${r.cleared} queued message${r.cleared === 1 ? '' : 's'}.`);
    } catch (error) {
      this.model.addNotice(`Could not clear the queue: ${errorReason(error)}`, 'error');
    }
    await this.refreshQueue();
  }

  /** shiro/approve: show a card and wait; a cancelled request (server timeout) counts as deny. */
  requestApproval(params: ApproveParams, token: vscode.CancellationToken): Promise<ApproveResult> {
    const entry = this.model.addApproval(approvalCard(params), params.toolName);
    if (!this.isVisible()) {
      void Promise.resolve(
        vscode.window.showInformationMessage(`Shiro asks to run ${params.toolName}: answer in the chat.`, 'Show chat'),
      ).then(choice => {
        if (choice === 'Show chat') this.onReveal();
      });
    }
    this.onReveal();
    void this.review?.approvalShown(entry.id, params).catch(() => undefined);
    return new Promise<ApproveResult>(resolve => {
      const sub = token.onCancellationRequested(() => this.answerApproval(entry.id, 'deny', true));
      this.pendingApprovals.set(entry.id, (decision, reason) => {
        sub.dispose();
        resolve(decision === 'deny' && reason ? { decision, reason } : { decision });
      });
    });
  }

  answerApproval(id: string, decision: Decision, expired = false, reason?: string): void {
    const resolve = this.pendingApprovals.get(id);
    if (!resolve) return;
    this.pendingApprovals.delete(id);
    this.model.settleApproval(id, decision, expired, decision === 'deny' ? reason : undefined);
    resolve(decision, reason);
    void this.review?.approvalSettled(id).catch(() => undefined);
  }

  /** The server went away: running chats fail, pending approvals deny. */
  serverStopped(): void {
    for (const id of [...this.pendingApprovals.keys()]) this.answerApproval(id, 'deny', true);
  }

  dispose(): void {
    this.serverStopped();
    for (const c of this.chats) c.cts.cancel();
  }
}
