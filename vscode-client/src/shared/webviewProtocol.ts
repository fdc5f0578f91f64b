// The panel's side of the wire: what the extension host sends the webview (HostMessage), what the webview
// posts back (WebviewMessage), and the shapes both carry. The host builds them (chat/chatModel.ts,
// review/changesModel.ts, chat/approval.ts, setup/setup.ts); the webview only renders them. Types only.
import type { ChangeStatus, Decision, QueuedChat, RestoreMode, TodosPayload } from './protocol';
import type { Candidate, MentionKind } from './mentions';
import type { RetryWait } from './retryCountdown';

// --- the transcript ---

export type ToolStatus = 'running' | 'done' | 'error' | 'denied';
export type ChatEntry =
  | {
      id: string;
      kind: 'user';
      text: string;
      attachments?: string[];
      /** Images sent with the prompt, as thumbnails (a resumed image the server no longer keeps has none). */
      images?: SentImage[];
      taskId?: string;
      checkpointId?: string;
      /** A slash command: run by the panel, never part of the model's conversation. */
      command?: boolean;
    }
  | { id: string; kind: 'assistant'; text: string; streaming: boolean; incomplete?: boolean }
  | { id: string; kind: 'reasoning'; text: string; streaming: boolean }
  | {
      id: string;
      kind: 'tool';
      toolCallId: string;
      name: string;
      input: string;
      output: string;
      status: ToolStatus;
      approval?: ApprovalEntry;
      /** What the call changed in the workspace, as a unified diff (file tools and bash; v2). */
      diff?: string;
      /** `+N −M` over the files the call changed, as the server counted them (the result's `files`). */
      counts?: string;
      /** Shiro read the call from the model's text: it was not a native tool call (tool-call `origin`). */
      fromText?: boolean;
      /** Shiro made the call itself (a command the user's message names), not the model (`origin` "shiro"). */
      byShiro?: boolean;
    }
  | {
      id: string;
      kind: 'notice';
      level: 'info' | 'warn' | 'error';
      text: string;
      retry?: string;
      sessions?: SessionLink[];
      wait?: RetryWait;
      /** `/todos`: the task list, drawn as the task panel draws it. */
      todos?: TodosPayload;
    }
  | { id: string; kind: 'approval'; card: ApprovalCard; decision?: Decision; expired?: boolean; reason?: string }
  | CompactionEntry
  | ChangesEntry
  | RestoredEntry;

/**
 * A compaction point: above it, what the model no longer sees (still here for the user); the model
 * sees `summary` instead. `summarizing` while the summary runs; `undone` once the user undid it.
 */
export type CompactionEntry = {
  id: string;
  kind: 'compaction';
  state: 'summarizing' | 'active' | 'undone' | 'failed';
  summary: string;
  messages: number;
  dropped: string[];
  /** Made by Shiro because the conversation no longer fit the threshold (not by /compact). */
  auto?: boolean;
  /** The model sees Shiro's digest, not the model's summary: why the model's summary was refused. */
  digestReason?: string;
};

/** A session listed by /sessions: the panel draws it as a button that resumes it. */
export interface SessionLink {
  id: string;
  label: string;
}
export type ApprovalEntry = {
  id: string;
  kind: 'approval';
  card: ApprovalCard;
  decision?: Decision;
  expired?: boolean;
  reason?: string;
};

export interface ChatState {
  entries: ChatEntry[];
  busy: boolean;
  queue: QueuedChat[];
  todos: TodosPayload | undefined;
  sessionTitle: string;
}

// --- approval cards and the review UI ---

export interface ApprovalButton {
  label: string;
  decision: Decision;
}
export interface ApprovalCard {
  title: string;
  input: string;
  matched?: string;
  warning?: string;
  buttons: ApprovalButton[];
  /** File tools: the files and their `+N −M`; the host opens the diff editor. */
  preview?: ApprovalPreviewView;
}

export interface PreviewFileView {
  path: string;
  from?: string;
  status: ChangeStatus;
  counts: string;
  binary: boolean;
}
export interface ApprovalPreviewView {
  files: PreviewFileView[];
  total: string;
}

export interface ChangedFileView {
  path: string;
  from?: string;
  status: ChangeStatus;
  reviewed: boolean;
  binary: boolean;
  /** What this turn itself changed in the file (`+N −M`), as Copilot and Cline show per request. */
  counts: string;
  /** The turn's checkpoint vs the file now, when that differs from `counts` (a later turn, an undo or the
   *  user changed the file since). */
  since?: string;
  /** Why undo and restore leave this file as it is (no earlier bytes recorded, or the user saved it). */
  notCovered?: string;
}

export interface ChangesEntry {
  id: string;
  kind: 'changes';
  taskId: string;
  checkpointId: string | null;
  files: ChangedFileView[];
  total: string;
  pending: number;
}

export interface RestoredEntry {
  id: string;
  kind: 'restored';
  text: string;
  mode: RestoreMode;
  redoId: string | null;
  redone: boolean;
  level: 'info' | 'warn';
}

// --- the composer and the header ---

export interface Attachment {
  label: string;
  text: string;
  source?: string;
}

/** An image in the composer: the server keeps it (shiro/images/add) under `id`; the chip shows `thumbnail`. */
export interface ImageChip {
  id: string;
  name: string;
  /** A small `data:image/png` URL made by the server (the webview's CSP allows `img-src data:`). */
  thumbnail: string;
}
export interface SentImage {
  name: string;
  thumbnail?: string;
}

export interface SetupInfo {
  show: boolean;
  baseUrl: string;
  model: string;
  hasKey: boolean;
}
export interface PanelInfo {
  model: string;
  agent: string;
  setup: SetupInfo;
}

/** A custom command waiting for the values of its `${input:name}` variables (the panel's small form). */
export interface InputsRequest {
  id: string;
  command: string;
  source: string;
  inputs: { name: string; placeholder: string }[];
}

// --- the messages ---

export type HostMessage =
  | { type: 'state'; state: ChatState; history: string[] }
  | { type: 'entry'; entry: ChatEntry }
  | { type: 'busy'; busy: boolean }
  | { type: 'queue'; queue: QueuedChat[] }
  | { type: 'todos'; todos: TodosPayload | undefined }
  | { type: 'history'; prompts: string[] }
  | { type: 'focus' }
  | { type: 'attach'; attachment: Attachment }
  /** An image the server now keeps: a chip in the composer, sent with the next prompt. */
  | { type: 'image'; image: ImageChip }
  /** The active editor's file, offered as a removable chip (null: none, or the setting is off). */
  | { type: 'activeFile'; label: string | null }
  | { type: 'mentionCandidates'; items: Candidate[] }
  /** The custom commands the `/` completion offers besides the built-ins. */
  | { type: 'commands'; items: Candidate[] }
  /** A custom command's `${input:…}` values to ask for before it is sent. */
  | { type: 'askInputs'; ask: InputsRequest }
  | { type: 'info'; info: PanelInfo }
  | { type: 'showSetup' }
  | { type: 'setupResult'; ok: boolean; text: string };

export type WebviewMessage =
  | { type: 'ready' }
  | {
      type: 'send';
      text: string;
      attachments?: Attachment[];
      /** The current-file chip was not removed: attach the active editor's file (or selection) as sent. */
      currentFile?: boolean;
      images?: ImageChip[];
    }
  /** An image pasted or dropped into the composer, as a `data:` URL read in the webview. */
  | { type: 'addImage'; name: string; dataUrl: string }
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
  /** `/` typed: the custom commands, read again (a file may have been added). */
  | { type: 'commands' }
  /** The values of an `askInputs` form (none: cancelled). */
  | { type: 'inputs'; id: string; values?: Record<string, string> }
  | { type: 'mention'; kind: MentionKind; value: string }
  | ReviewMessage;

export type ReviewMessage =
  | { type: 'openPreview'; id: string; index: number }
  | { type: 'openChange'; taskId: string; path: string }
  | { type: 'undoChange'; taskId: string; path: string }
  | { type: 'keepChange'; taskId: string; path: string }
  | { type: 'keepAll'; taskId: string }
  | { type: 'undoAll'; taskId: string }
  | { type: 'restore'; id: string }
  | { type: 'redo'; id: string };
