// What the chat panel shows, kept in the extension host so a hidden/re-shown (or re-created) webview
// is restored from here. Pure: no vscode import. The webview only renders entries.
import type { ApprovalCard } from './approval';
import { describeInput } from './approval';
import type { ChangesEntry, RestoredEntry } from './changesModel';
import type { EngineEvent, Message, MessagePart, Decision, TodosPayload, QueuedChat } from './protocol';

export type ToolStatus = 'running' | 'done' | 'error' | 'denied';
export type ChatEntry =
  | { id: string; kind: 'user'; text: string; taskId?: string; checkpointId?: string }
  | { id: string; kind: 'assistant'; text: string; streaming: boolean }
  | { id: string; kind: 'reasoning'; text: string; streaming: boolean }
  | { id: string; kind: 'tool'; toolCallId: string; name: string; input: string; output: string; status: ToolStatus }
  | { id: string; kind: 'notice'; level: 'info' | 'warn' | 'error'; text: string }
  | { id: string; kind: 'approval'; card: ApprovalCard; decision?: Decision; expired?: boolean; reason?: string }
  | ChangesEntry | RestoredEntry;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type NewEntry = DistributiveOmit<ChatEntry, 'id'>;
type ToolEntry = Extract<ChatEntry, { kind: 'tool' }>;

export interface ChatState {
  entries: ChatEntry[];
  busy: boolean;
  queue: QueuedChat[];
  todos: TodosPayload | undefined;
  sessionTitle: string;
}

/** Text of a tool result output `{type, value}` (or anything else the server sends). */
export function outputText(output: unknown): string {
  if (output && typeof output === 'object' && 'value' in output) {
    const value = (output as { value: unknown }).value;
    return typeof value === 'string' ? value : describeInput(value);
  }
  return output === undefined ? '' : describeInput(output);
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

  constructor(private readonly onChange: (entry: ChatEntry) => void = () => {}) {}

  private add(entry: NewEntry): ChatEntry {
    const full = { ...entry, id: `e${this.nextId++}` } as ChatEntry;
    this.state.entries.push(full);
    this.onChange(full);
    return full;
  }

  private changed(entry: ChatEntry): void { this.onChange(entry); }

  /** For feature modules (changes.ts): add an entry / announce that one changed. */
  push(entry: NewEntry): ChatEntry { return this.add(entry); }
  touch(entry: ChatEntry): void { this.changed(entry); }

  clear(): void {
    this.state.entries = [];
    this.lastByTask.clear();
    this.toolsById.clear();
  }

  addUser(text: string): ChatEntry { return this.add({ kind: 'user', text }); }
  addNotice(text: string, level: 'info' | 'warn' | 'error' = 'info'): ChatEntry { return this.add({ kind: 'notice', level, text }); }
  addApproval(card: ApprovalCard): ChatEntry { return this.add({ kind: 'approval', card }); }

  settleApproval(id: string, decision: Decision, expired = false, reason?: string): ChatEntry | undefined {
    const entry = this.state.entries.find(e => e.id === id);
    if (entry?.kind !== 'approval' || entry.decision) return undefined;
    entry.decision = decision;
    entry.expired = expired;
    if (reason) entry.reason = reason;
    this.changed(entry);
    return entry;
  }

  private appendStreaming(taskId: string, kind: 'assistant' | 'reasoning', text: string): void {
    const last = this.lastByTask.get(taskId);
    if (last && last.kind === kind && last.streaming) {
      last.text += text;
      this.changed(last);
      return;
    }
    this.lastByTask.set(taskId, this.add({ kind, text, streaming: true }));
  }

  private tool(id: string, name: string, taskId: string): ToolEntry {
    let entry = this.toolsById.get(id);
    if (!entry) {
      entry = this.add({ kind: 'tool', toolCallId: id, name, input: '', output: '', status: 'running' }) as ToolEntry;
      this.toolsById.set(id, entry);
    }
    this.lastByTask.set(taskId, entry);
    return entry;
  }

  /** Finish streaming entries of a task (so the next text starts a new bubble). */
  private endTask(taskId: string): void {
    for (const e of this.state.entries) {
      if ((e.kind === 'assistant' || e.kind === 'reasoning') && e.streaming) { e.streaming = false; this.changed(e); }
    }
    this.lastByTask.delete(taskId);
  }

  applyEvent(taskId: string, event: EngineEvent): void {
    const id = event.id ?? event.toolCallId ?? '';
    const name = event.name ?? event.toolName ?? 'tool';
    switch (event.type) {
      case 'text': this.appendStreaming(taskId, 'assistant', event.text ?? ''); break;
      case 'reasoning': this.appendStreaming(taskId, 'reasoning', event.text ?? ''); break;
      case 'tool-start': this.tool(id, name, taskId); break;
      case 'tool-call': {
        const t = this.tool(id, name, taskId);
        t.input = describeInput(event.input);
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
        this.changed(t);
        break;
      }
      case 'tool-error': {
        const t = this.tool(id, name, taskId);
        t.output = errorText(event.error);
        t.status = 'error';
        this.changed(t);
        break;
      }
      case 'tool-denied': {
        const running = id ? this.toolsById.get(id)
          : [...this.toolsById.values()].reverse().find(t => t.name === name && t.status === 'running');
        if (running) { running.status = 'denied'; this.changed(running); }
        else this.addNotice(`Denied: ${name}`, 'warn');
        this.lastByTask.delete(taskId);
        break;
      }
      case 'compacted': this.addNotice(`Context compacted: ${event.before ?? '?'} → ${event.after ?? '?'} messages.`); break;
      case 'notice': this.addNotice(event.text ?? ''); this.lastByTask.delete(taskId); break;
      case 'error': this.endTask(taskId); this.addNotice(errorText(event.error ?? event.text), 'error'); break;
      case 'done': this.endTask(taskId); break;
      default: break;
    }
  }

  /** Rebuild the panel from a resumed session's transcript (the message model, spec §5.1). */
  loadTranscript(messages: readonly Message[]): void {
    this.clear();
    for (const message of messages) {
      if (message.role === 'system') continue;
      const parts: MessagePart[] = typeof message.content === 'string'
        ? [{ type: 'text', text: message.content }] : message.content;
      for (const part of parts) this.addPart(message.role, part);
    }
    for (const e of this.state.entries) if (e.kind === 'assistant' || e.kind === 'reasoning') e.streaming = false;
  }

  private addPart(role: Message['role'], part: MessagePart): void {
    if (part.type === 'text' && role === 'user') this.add({ kind: 'user', text: part.text ?? '' });
    else if (part.type === 'text') this.add({ kind: 'assistant', text: part.text ?? '', streaming: false });
    else if (part.type === 'reasoning') this.add({ kind: 'reasoning', text: part.text ?? '', streaming: false });
    else if (part.type === 'tool-call') {
      this.applyEvent('transcript', { type: 'tool-call', id: part.toolCallId, name: part.toolName, input: part.input });
    } else if (part.type === 'tool-result') {
      this.applyEvent('transcript', { type: 'tool-result', id: part.toolCallId, name: part.toolName, output: part.output });
    } else if (part.type === 'tool-error') {
      this.applyEvent('transcript', { type: 'tool-error', id: part.toolCallId, name: part.toolName, error: part.error });
    }
  }
}
