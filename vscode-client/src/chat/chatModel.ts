// What the chat panel shows, kept in the extension host so a hidden/re-shown (or re-created) webview
// is restored from here. Pure: no vscode import. The webview only renders entries.
import { approvalCard, describeInput, toDecision } from './approval';
import { approvalPreviewOfRows } from '../review/changesModel';
import { splitAttachments } from './attachments';
import { countFiles, formatCounts } from '../shared/lineDiff';
import type { LineCounts } from '../shared/lineDiff';
import { retryWait } from '../shared/retryCountdown';
import type {
  ChangedFile,
  CompactionInfo,
  EngineEvent,
  HistoryEvent,
  Message,
  MessagePart,
  Decision,
  StopReason,
  TodosPayload,
  TurnInfo,
} from '../shared/protocol';
import type {
  ApprovalCard,
  ApprovalEntry,
  ChatEntry,
  ChatState,
  CompactionEntry,
  SentImage,
  SessionLink,
} from '../shared/webviewProtocol';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type NewEntry = DistributiveOmit<ChatEntry, 'id'>;
type ToolEntry = Extract<ChatEntry, { kind: 'tool' }>;

/** Text of a tool result output `{type, value}` (or anything else the server sends). */
export function outputText(output: unknown): string {
  if (output && typeof output === 'object' && 'value' in output) {
    const value = (output as { value: unknown }).value;
    return typeof value === 'string' ? value : describeInput(value);
  }
  return output === undefined ? '' : describeInput(output);
}

/** A turn that failed because no model is connected yet: the panel shows its setup card above the transcript. */
export const SETUP_NEEDED =
  'No model is connected yet. Connect one in the "Set up Shiro" card above: a local server (Ollama, LM Studio, ' +
  'llama.cpp, vLLM) needs no key; for OpenAI or another hosted endpoint, set its API key there. Then Retry.';

/** What the panel says when an undo of a compaction went through (live, and on a resumed transcript). */
export function compactionUndoneNotice(restored: number): string {
  return `Undid the compaction: the model sees the ${restored} messages again instead of the summary.`;
}

export function errorText(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object' && 'message' in error) return String((error as { message: unknown }).message);
  return describeInput(error);
}

export class ChatModel {
  readonly state: ChatState = { entries: [], busy: false, queue: [], todos: undefined, sessionTitle: '' };
  private nextId = 0;
  private readonly lastByTask = new Map<string, ChatEntry>();
  private readonly toolsById = new Map<string, ToolEntry>();
  /** Tasks whose error was already shown (from its `error` event): the chat result must not show it again. */
  private readonly failedTasks = new Set<string>();
  /** While a transcript loads, nothing is reported entry by entry: the caller sends the whole state once. */
  private quiet = false;

  /** The retry notice a turn is counting down on (one per turn, updated by each `retry` event). */
  private readonly retryByTask = new Map<string, Extract<ChatEntry, { kind: 'notice' }>>();

  constructor(
    private readonly onChange: (entry: ChatEntry) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  private add(entry: NewEntry): ChatEntry {
    const full = { ...entry, id: `e${this.nextId++}` } as ChatEntry;
    this.state.entries.push(full);
    this.changed(full);
    return full;
  }

  private changed(entry: ChatEntry): void {
    if (!this.quiet) this.onChange(entry);
  }

  /** For feature modules (review/changes.ts): add an entry / announce that one changed. */
  push(entry: NewEntry): ChatEntry {
    return this.add(entry);
  }
  touch(entry: ChatEntry): void {
    this.changed(entry);
  }

  clear(): void {
    this.state.entries = [];
    this.lastByTask.clear();
    this.toolsById.clear();
    this.retryByTask.clear();
  }

  /** A prompt as sent (context blocks included): shown as the typed text plus one chip per attachment. */
  addUser(sent: string, images: readonly SentImage[] = []): ChatEntry {
    const { text, labels } = splitAttachments(sent);
    return this.add({
      kind: 'user',
      text,
      ...(labels.length ? { attachments: labels } : {}),
      ...(images.length ? { images: images.map(i => ({ name: i.name, thumbnail: i.thumbnail })) } : {}),
    });
  }
  addNotice(text: string, level: 'info' | 'warn' | 'error' = 'info', sessions?: SessionLink[]): ChatEntry {
    return this.add({ kind: 'notice', level, text, ...(sessions?.length ? { sessions } : {}) });
  }
  /** `/todos`: the task list as a transcript entry, or a line saying there is none. */
  addTaskList(todos: TodosPayload): ChatEntry {
    if (!todos.todos.length) return this.addNotice('No task list yet.');
    return this.add({ kind: 'notice', level: 'info', text: '**Task list**', todos });
  }
  /**
   * An approval card. When it is for the tool call just shown (the newest entry, running, same tool),
   * the card goes inside that tool's row: the question comes first, the input is shown once, and
   * the answered card folds into the row. Otherwise it is an entry of its own.
   */
  addApproval(
    card: ApprovalCard,
    toolName?: string,
    row: ChatEntry | undefined = this.state.entries.at(-1),
  ): ApprovalEntry {
    const last = row;
    if (toolName && last?.kind === 'tool' && last.status === 'running' && last.name === toolName && !last.approval) {
      const approval: ApprovalEntry = { id: `e${this.nextId++}`, kind: 'approval', card };
      last.approval = approval;
      this.approvals.set(approval.id, { approval, host: last });
      this.changed(last);
      return approval;
    }
    const entry = this.add({ kind: 'approval', card }) as ApprovalEntry;
    this.approvals.set(entry.id, { approval: entry });
    return entry;
  }

  settleApproval(id: string, decision: Decision, expired = false, reason?: string): ApprovalEntry | undefined {
    const found = this.approvals.get(id);
    if (!found || found.approval.decision) return undefined;
    found.approval.decision = decision;
    found.approval.expired = expired;
    if (reason) found.approval.reason = reason;
    this.changed(found.host ?? found.approval);
    return found.approval;
  }
  private readonly approvals = new Map<string, { approval: ApprovalEntry; host?: ToolEntry }>();

  private appendStreaming(taskId: string, kind: 'assistant' | 'reasoning', text: string): void {
    const last = this.lastByTask.get(taskId);
    if (last && last.kind === kind && last.streaming) {
      last.text += text;
      this.changed(last);
      return;
    }
    this.settleStreaming(last);
    this.lastByTask.set(taskId, this.add({ kind, text, streaming: true }));
  }

  /** The model moved on (to text, a tool, an error): its previous thinking/answer is no longer streaming. */
  private settleStreaming(last: ChatEntry | undefined): void {
    if (last && (last.kind === 'assistant' || last.kind === 'reasoning') && last.streaming) {
      last.streaming = false;
      this.changed(last);
    }
  }

  private tool(id: string, name: string, taskId: string): ToolEntry {
    let entry = this.toolsById.get(id);
    if (!entry) {
      this.settleStreaming(this.lastByTask.get(taskId));
      entry = this.add({ kind: 'tool', toolCallId: id, name, input: '', output: '', status: 'running' }) as ToolEntry;
      this.toolsById.set(id, entry);
    }
    this.lastByTask.set(taskId, entry);
    return entry;
  }

  /** What a call changed on disk: its diff, and its count from the files the server listed. */
  private changedFiles(t: ToolEntry, event: EngineEvent): void {
    if (event.diff) t.diff = event.diff;
    if (event.files?.length) t.counts = formatCounts(countFiles(event.files as Partial<LineCounts>[]));
  }

  /** Finish streaming entries of a task (so the next text starts a new bubble). */
  private endTask(taskId: string): void {
    for (const e of this.state.entries) {
      if ((e.kind === 'assistant' || e.kind === 'reasoning') && e.streaming) {
        e.streaming = false;
        this.changed(e);
      }
    }
    this.lastByTask.delete(taskId);
  }

  applyEvent(taskId: string, event: EngineEvent): void {
    if (event.type === 'retry') {
      this.retrying(taskId, event);
      return;
    }
    this.settleRetry(taskId);
    const id = event.id ?? event.toolCallId ?? '';
    const name = event.name ?? event.toolName ?? 'tool';
    switch (event.type) {
      case 'text':
        this.appendStreaming(taskId, 'assistant', event.text ?? '');
        break;
      case 'reasoning':
        this.appendStreaming(taskId, 'reasoning', event.text ?? '');
        break;
      case 'tool-start':
        this.tool(id, name, taskId);
        break;
      case 'tool-call': {
        const t = this.tool(id, name, taskId);
        t.input = describeInput(event.input);
        if (event.origin === 'text') t.fromText = true;
        if (event.origin === 'shiro') t.byShiro = true;
        this.changed(t);
        break;
      }
      case 'tool-output': {
        const t = this.tool(id, name, taskId);
        t.output += event.chunk ?? '';
        this.changed(t);
        break;
      }
      case 'tool-result': {
        const t = this.tool(id, name, taskId);
        t.output = outputText(event.output);
        t.status = 'done';
        this.changedFiles(t, event);
        this.changed(t);
        break;
      }
      case 'tool-error': {
        const t = this.tool(id, name, taskId);
        t.output = errorText(event.error);
        t.status = 'error';
        this.changedFiles(t, event);
        this.changed(t);
        break;
      }
      case 'tool-denied': {
        const running = id
          ? this.toolsById.get(id)
          : [...this.toolsById.values()].reverse().find(t => t.name === name && t.status === 'running');
        if (running) {
          running.status = 'denied';
          this.changed(running);
        } else this.addNotice(`Denied: ${name}`, 'warn');
        this.lastByTask.delete(taskId);
        break;
      }
      case 'compacted':
        this.addNotice(`Context compacted: ${event.before ?? '?'} → ${event.after ?? '?'} messages.`);
        break;
      case 'notice':
        this.addNotice(event.text ?? '');
        this.lastByTask.delete(taskId);
        break;
      case 'error': {
        const cut = this.lastByTask.get(taskId);
        if (cut?.kind === 'assistant' && cut.streaming) cut.incomplete = true; // the stream broke mid-answer
        this.endTask(taskId);
        this.failedTasks.add(taskId);
        this.addNotice(event.needsSetup ? SETUP_NEEDED : errorText(event.error ?? event.text), 'error');
        break;
      }
      case 'done':
        this.endTask(taskId);
        break;
      default:
        break;
    }
  }

  private retrying(taskId: string, event: EngineEvent): void {
    const wait = retryWait(event, this.now());
    const text = event.reason ?? 'The model call failed.';
    const shown = this.retryByTask.get(taskId);
    if (shown) {
      shown.wait = wait;
      shown.text = text;
      this.changed(shown);
      return;
    }
    const entry = this.add({ kind: 'notice', level: 'warn', text, wait });
    if (entry.kind === 'notice') this.retryByTask.set(taskId, entry);
    this.lastByTask.delete(taskId);
  }

  private settleRetry(taskId: string): void {
    const shown = this.retryByTask.get(taskId);
    if (!shown?.wait) return;
    this.retryByTask.delete(taskId);
    shown.wait.settled = true;
    this.changed(shown);
  }

  hadError(taskId: string): boolean {
    return this.failedTasks.has(taskId);
  }

  /** Put a Retry button on the turn's error (the newest error notice) that sends `text` again. */
  offerRetry(text: string): void {
    const last = this.state.entries.at(-1);
    if (last?.kind === 'notice' && last.level === 'error') {
      last.retry = text;
      this.changed(last);
    }
  }

  /** Retry pressed: the prompt to send again (once; the button goes away). */
  takeRetry(id: string): string | undefined {
    const entry = this.state.entries.find(e => e.id === id);
    if (entry?.kind !== 'notice' || entry.retry === undefined) return undefined;
    const text = entry.retry;
    delete entry.retry;
    this.changed(entry);
    return text;
  }

  /** `shiro/session/compacting`: the divider appears while the summary runs, and says if it failed. */
  compactionProgress(phase: 'summarizing' | 'done' | 'failed', messages: number): void {
    const pending = this.pendingCompaction();
    if (phase === 'summarizing' && !pending) {
      this.add({ kind: 'compaction', state: 'summarizing', summary: '', messages, dropped: [] });
    } else if (phase === 'failed' && pending) {
      pending.state = 'failed';
      this.changed(pending);
    }
  }

  /** The compaction is in place: the divider (the pending one, or a new one) shows its summary, and whether it
   *  is the model's or Shiro's digest. */
  compacted(info: CompactionInfo, messages: number): CompactionEntry {
    const entry =
      this.pendingCompaction() ??
      (this.add({ kind: 'compaction', state: 'summarizing', summary: '', messages, dropped: [] }) as CompactionEntry);
    entry.state = 'active';
    if (info.auto) entry.auto = true;
    if (info.digestReason) entry.digestReason = info.digestReason;
    entry.summary = info.summary;
    entry.messages = messages;
    entry.dropped = this.droppedAbove(entry);
    this.changed(entry);
    return entry;
  }

  /** Undo compaction went through: that divider (by default the last active one) says so. */
  compactionUndone(entry: CompactionEntry | undefined = this.lastCompaction('active')): void {
    if (!entry) return;
    entry.state = 'undone';
    this.changed(entry);
  }

  /** A slash command the user typed (a resumed /compact): shown as typed, never sent to the model. */
  addCommand(text: string): ChatEntry {
    const entry = this.addUser(text);
    if (entry.kind === 'user') entry.command = true;
    return entry;
  }

  private pendingCompaction(): CompactionEntry | undefined {
    const last = this.lastCompaction();
    return last?.state === 'summarizing' ? last : undefined;
  }

  private lastCompaction(state?: CompactionEntry['state']): CompactionEntry | undefined {
    for (let i = this.state.entries.length - 1; i >= 0; i--) {
      const e = this.state.entries[i];
      if (e.kind === 'compaction' && (state === undefined || e.state === state)) return e;
    }
    return undefined;
  }

  /** One line per prompt, answer and tool call between the previous active divider and this one. */
  private droppedAbove(entry: CompactionEntry): string[] {
    const end = this.state.entries.indexOf(entry);
    let start = 0;
    for (let i = end - 1; i >= 0; i--) {
      const e = this.state.entries[i];
      if (e.kind === 'compaction' && e.state === 'active') {
        start = i + 1;
        break;
      }
    }
    return this.state.entries.slice(start, end).flatMap(droppedLine);
  }

  /** Rebuild the panel from a resumed session's transcript (the message model, spec §5.1) as the live panel
   *  showed it: a divider at each compaction point, and each turn's recorded events (approvals, denials,
   *  notices, errors, tool-card diffs) and end (Stopped., its Changed files through `onTurnEnd`) where they
   *  happened, through the builders live events use. */
  loadTranscript(
    messages: readonly Message[],
    compactions: readonly CompactionInfo[] = [],
    history: ResumedHistory = {},
    onTurnEnd: (turn: TurnInfo) => void = () => {},
  ): void {
    this.clear();
    this.quiet = true;
    try {
      const replay = new Replay(this, messages, compactions, history, onTurnEnd);
      for (const [index, message] of messages.entries()) {
        replay.before(index);
        if (message.role === 'system') continue;
        if (message.role === 'user' && message.shiroNote === 'nudge') {
          if (!replay.recorded) this.addNudge(message); // a recorded turn has the notice the panel showed
          continue;
        }
        const parts: MessagePart[] =
          typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
        if (message.role === 'user' && parts.some(p => p.type === 'image')) {
          // a prompt with images: one entry, its text and the images' thumbnails (shiro/session/resume `images`)
          const text = parts.map(p => (p.type === 'text' ? (p.text ?? '') : '')).join('');
          const thumbnails = history.images ?? {};
          const images = parts
            .filter(p => p.type === 'image')
            .map(p => ({ name: p.name ?? 'image', thumbnail: p.imageId ? thumbnails[p.imageId] : undefined }));
          this.addUser(text, images);
        } else for (const part of parts) this.addPart(message.role, part, replay);
        if (message.role === 'user') replay.prompted(index, this.state.entries.at(-1));
      }
      replay.before(messages.length);
      replay.unfinished();
      for (const e of this.state.entries) if (e.kind === 'assistant' || e.kind === 'reasoning') e.streaming = false;
      this.lastByTask.clear();
    } finally {
      this.quiet = false;
    }
  }

  /** How a turn ended, as the panel says it (live: the chat result; resumed: the turn's record). */
  turnEnded(taskId: string, stopReason: StopReason | null | undefined, error?: string | null): void {
    this.applyEvent(taskId, { type: 'done' });
    if (stopReason === 'cancelled') this.addNotice('Stopped.', 'warn');
    // an error the turn already reported as an event is shown once
    else if (stopReason === 'error' && error && !this.hadError(taskId)) this.addNotice(error, 'error');
  }

  /** An approval the user answered (replayed): the card inside its tool's row, settled as it was. */
  answeredApproval(taskId: string, event: EngineEvent): void {
    const row = event.id ? this.toolsById.get(event.id) : undefined;
    const card = approvalCard({
      taskId,
      toolName: event.name ?? row?.name ?? 'tool',
      input: row?.input ?? '',
      repeated: false,
      matchedPattern: event.matchedPattern ?? null,
      suggestedPattern: event.suggestedPattern ?? '',
      origin: event.origin === 'text' || event.origin === 'shiro' ? event.origin : 'native',
    });
    const preview = approvalPreviewOfRows(event.files as ChangedFile[] | null | undefined);
    if (preview) card.preview = preview; // its "Proposed change", from the files the answer recorded
    const approval = this.addApproval(card, row?.name, row);
    this.settleApproval(approval.id, toDecision(event.decision), event.expired === true, event.reason ?? undefined);
  }

  /** The turn guard's instruction to the model (turn_guards.py): a small note, as live, never the user's words. */
  private addNudge(message: Message): void {
    const text =
      typeof message.content === 'string' ? message.content : message.content.map(p => p.text ?? '').join('');
    this.addNotice(`Shiro sent the model back: ${clip(text, 160)}`);
  }

  private addPart(role: Message['role'], part: MessagePart, replay: Replay): void {
    if (part.type === 'text' && role === 'user') this.addUser(part.text ?? '');
    else if (part.type === 'text') this.add({ kind: 'assistant', text: part.text ?? '', streaming: false });
    else if (part.type === 'reasoning') this.add({ kind: 'reasoning', text: part.text ?? '', streaming: false });
    else if (part.type === 'tool-call') {
      const mark = part.providerOptions?.shiro;
      const origin = mark?.byShiro ? 'shiro' : mark?.fromText ? 'text' : 'model';
      this.applyEvent('transcript', {
        type: 'tool-call',
        id: part.toolCallId,
        name: part.toolName,
        input: part.input,
        origin,
      });
    } else if (part.type === 'tool-result') {
      if (part.toolCallId && this.toolsById.get(part.toolCallId)?.status === 'denied') return; // live showed no result
      const { diff, files } = replay.changeOf(part.toolCallId);
      const failed = (part.output as { type?: string } | undefined)?.type?.startsWith('error');
      const call = { id: part.toolCallId, name: part.toolName, diff, files };
      this.applyEvent(
        'transcript',
        failed
          ? { type: 'tool-error', ...call, error: outputText(part.output) }
          : { type: 'tool-result', ...call, output: part.output },
      );
    } else if (part.type === 'tool-error') {
      this.applyEvent('transcript', {
        type: 'tool-error',
        id: part.toolCallId,
        name: part.toolName,
        error: part.error,
      });
    }
  }
}

const clip = (text: string, max = 100): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

function droppedLine(entry: ChatEntry): string[] {
  switch (entry.kind) {
    case 'user':
      return entry.command ? [] : [`You: ${clip(entry.text)}`];
    case 'assistant':
      return entry.text.trim() ? [`Shiro: ${clip(entry.text)}`] : [];
    case 'tool':
      return [`${entry.name} ${clip(entry.input, 80)}`];
    default:
      return [];
  }
}

/** What a resumed session recorded of its turns besides the messages (older sessions: nothing). */
export interface ResumedHistory {
  turns?: readonly TurnInfo[];
  events?: readonly HistoryEvent[];
  /** Compactions the user undid (with `undoneAt` and `restored`): their dividers show, undone. */
  undoneCompactions?: readonly CompactionInfo[];
  /** Thumbnails of the images the transcript's prompts carry, by image id (`data:` URLs). */
  images?: Readonly<Record<string, string>>;
}

const DIFF_EVENTS = new Set(['tool-result', 'tool-error']);

/** Walks a resumed transcript's recorded turns and events alongside its messages (ChatModel.loadTranscript). */
class Replay {
  private readonly marks: CompactionInfo[];
  private readonly undos: CompactionInfo[];
  private readonly dividers = new Map<CompactionInfo, CompactionEntry>();
  private readonly shown: CompactionInfo[] = [];
  private readonly events: HistoryEvent[];
  private readonly ends: TurnInfo[];
  private readonly starts: Map<number, TurnInfo>;
  private readonly unended: TurnInfo[];
  private readonly changes = new Map<string, Pick<EngineEvent, 'diff' | 'files'>>();
  readonly recorded: boolean;

  constructor(
    private readonly model: ChatModel,
    messages: readonly Message[],
    compactions: readonly CompactionInfo[],
    history: ResumedHistory,
    private readonly onTurnEnd: (turn: TurnInfo) => void,
  ) {
    const undone = history.undoneCompactions ?? [];
    this.marks = [...compactions, ...undone].sort((a, b) => a.at - b.at || a.createdAt.localeCompare(b.createdAt));
    this.undos = [...undone].sort((a, b) => (a.undoneAt ?? 0) - (b.undoneAt ?? 0));
    const events = history.events ?? [];
    for (const { event } of events as readonly { event: EngineEvent }[]) {
      if (DIFF_EVENTS.has(event.type) && event.diff && event.id)
        this.changes.set(event.id, { diff: event.diff, files: event.files });
    }
    this.events = events.filter(e => !DIFF_EVENTS.has(e.event.type));
    const turns = history.turns ?? [];
    this.starts = new Map(turns.map(t => [t.at, t]));
    this.ends = turns.filter(t => t.end !== null).sort((a, b) => (a.end ?? 0) - (b.end ?? 0));
    this.unended = turns.filter(t => t.end === null);
    this.recorded = turns.length > 0 && messages.length > 0;
  }

  /** Before message `index`: the events shown by then, the turns that ended, then compaction dividers. */
  before(index: number): void {
    while (this.events.length && this.events[0].at <= index) {
      const { taskId, event } = this.events.shift()!;
      if (event.type === 'approval') this.model.answeredApproval(taskId, event);
      else this.model.applyEvent(taskId, event);
    }
    while (this.ends.length && (this.ends[0].end ?? 0) <= index) this.ended(this.ends.shift()!);
    for (let mark = this.marks[0]; mark && mark.at <= index; mark = this.marks[0]) {
      this.marks.shift();
      if (!mark.auto) this.model.addCommand('/compact'); // the user asked for it: their /compact, as typed
      this.dividers.set(mark, this.model.compacted(mark, mark.at - this.previousAt(mark)));
      this.shown.push(mark);
    }
    for (let undo = this.undos[0]; undo && (undo.undoneAt ?? 0) <= index; undo = this.undos[0]) {
      this.undos.shift();
      this.model.compactionUndone(this.dividers.get(undo));
      this.model.addNotice(compactionUndoneNotice(undo.restored ?? 0));
    }
  }

  /** Where the model's view began when `mark` was made: the last compaction before it still in place then. */
  private previousAt(mark: CompactionInfo): number {
    const before = this.shown.filter(m => m.undoneAt === undefined || m.undoneAt === null || m.undoneAt > mark.at);
    return before.length ? before[before.length - 1].at : 0;
  }

  /** A user message: a recorded turn's prompt knows its task and checkpoint (Restore checkpoint). */
  prompted(index: number, entry: ChatEntry | undefined): void {
    const turn = this.starts.get(index);
    if (!turn || entry?.kind !== 'user') return;
    entry.taskId = turn.taskId;
    if (turn.checkpointId) entry.checkpointId = turn.checkpointId;
  }

  /** Turns the process never ended (it died): their Changed files still show. */
  unfinished(): void {
    for (const turn of this.unended) if (turn.changes) this.onTurnEnd(turn);
  }

  /** What a call changed on disk, as its live card showed it: the diff and the files' counts. */
  changeOf(id: string | undefined): Pick<EngineEvent, 'diff' | 'files'> {
    return (id && this.changes.get(id)) || {};
  }

  private ended(turn: TurnInfo): void {
    this.onTurnEnd(turn);
    this.model.turnEnded(turn.taskId, turn.stopReason, turn.error);
  }
}
