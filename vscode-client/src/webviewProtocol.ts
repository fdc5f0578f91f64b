import type { ChatEntry, ChatState } from './chatModel';
import type { ReviewMessage } from './changesModel';
import type { Decision, QueuedChat, TodosPayload } from './protocol';

export type HostMessage =
  | { type: 'state'; state: ChatState; history: string[] }
  | { type: 'entry'; entry: ChatEntry }
  | { type: 'busy'; busy: boolean }
  | { type: 'queue'; queue: QueuedChat[] }
  | { type: 'todos'; todos: TodosPayload | undefined }
  | { type: 'history'; prompts: string[] }
  | { type: 'focus' };

export type WebviewMessage =
  | { type: 'ready' }
  | { type: 'send'; text: string }
  | { type: 'cancel' }
  | { type: 'clearQueue' }
  | { type: 'approve'; id: string; decision: Decision; reason?: string }
  | { type: 'copy'; text: string }
  | ReviewMessage;
