import type { ChatEntry, ChatState } from '../chat/chatModel';
import type { ReviewMessage } from '../review/changesModel';
import type { Decision, QueuedChat, TodosPayload } from './protocol';
import type { PanelInfo } from '../setup/setup';
import type { Attachment } from '../chat/attachments';
import type { Candidate, MentionKind } from '../chat/mentions';

export type HostMessage =
  | { type: 'state'; state: ChatState; history: string[] }
  | { type: 'entry'; entry: ChatEntry }
  | { type: 'busy'; busy: boolean }
  | { type: 'queue'; queue: QueuedChat[] }
  | { type: 'todos'; todos: TodosPayload | undefined }
  | { type: 'history'; prompts: string[] }
  | { type: 'focus' }
  | { type: 'attach'; attachment: Attachment }
  | { type: 'mentionCandidates'; items: Candidate[] }
  | { type: 'info'; info: PanelInfo }
  | { type: 'showSetup' }
  | { type: 'setupResult'; ok: boolean; text: string };

export type WebviewMessage =
  | { type: 'ready' }
  | { type: 'send'; text: string; attachments?: Attachment[] }
  | { type: 'cancel' }
  | { type: 'clearQueue' }
  | { type: 'approve'; id: string; decision: Decision; reason?: string }
  | { type: 'copy'; text: string }
  | { type: 'retry'; id: string }
  | { type: 'resume'; id: string }
  | { type: 'undoCompaction' }
  | { type: 'insertCode'; text: string }
  | { type: 'newFile'; text: string; language: string }
  | { type: 'openFile'; href: string }
  | { type: 'pickModel' }
  | { type: 'pickAgent' }
  | { type: 'setApiKey' }
  | { type: 'detectLocal' }
  | { type: 'setup'; baseUrl: string; model: string }
  | { type: 'mentions' }
  | { type: 'mention'; kind: MentionKind; value: string }
  | ReviewMessage;
