// The wire contract v1 (docs/protocol.md): method names and shapes. Names here are a contract; keep them exact.
// The shapes come from protocol.gen.ts, generated from docs/protocol.schema.json (`make protocol`); the
// hand-written ones below are being replaced by it one by one (a generated type is the one to trust).
import type * as gen from './protocol.gen';

/** Every event the server sends in `shiro/event` (a union on `type`). */
export type WireEvent = gen.EventNotification['event'];
export type EventNotification = gen.EventNotification;
export type QueuedChat = gen.QueuedChat;
export type QueueResult = gen.QueueResult;
export type SessionInfo = gen.SessionInfo;

export const Method = {
  chat: 'shiro/chat',
  event: 'shiro/event',
  queue: 'shiro/queue',
  queueClear: 'shiro/queue/clear',
  approve: 'shiro/approve',
  sessionCurrent: 'shiro/session/current',
  sessionList: 'shiro/session/list',
  sessionResume: 'shiro/session/resume',
  sessionNew: 'shiro/session/new',
  sessionSave: 'shiro/session/save',
  sessionClear: 'shiro/session/clear',
  sessionCompact: 'shiro/session/compact',
  sessionDelete: 'shiro/session/delete',
  sessionRename: 'shiro/session/rename',
  sessionChanged: 'shiro/session/changed',
  todos: 'shiro/todos',
  todosChanged: 'shiro/todos/changed',
  todosUpdate: 'shiro/todos/update',
  memoryRemember: 'shiro/memory/remember',
  memoryList: 'shiro/memory/list',
  memoryForget: 'shiro/memory/forget',
  memoryCompact: 'shiro/memory/compact',
  notesRead: 'shiro/notes/read',
  notesAppend: 'shiro/notes/append',
  history: 'shiro/history',
  context: 'shiro/context',
  contextChanged: 'shiro/context/changed',
  mcpList: 'shiro/mcp/list',
  mcpTrust: 'shiro/mcp/trust',
  models: 'shiro/models',
  modelsDetect: 'shiro/models/detect',
  changes: 'shiro/changes',
  changesDiff: 'shiro/changes/diff',
  changesUndo: 'shiro/changes/undo',
  changesKeep: 'shiro/changes/keep',
  changesChanged: 'shiro/changes/changed',
  checkpointList: 'shiro/checkpoint/list',
  checkpointRestore: 'shiro/checkpoint/restore',
} as const;

export const AGENTS = ['default', 'quick', 'deep', 'plan', 'review'] as const;
export type Agent = typeof AGENTS[number];

/** shiro/models: the models an endpoint serves (GET /v1/models), or why none could be listed. */
export type ModelsParams = gen.ModelsParams;
export type ModelEntry = gen.ModelEntry;
export interface ModelsResult { baseUrl: string; preset?: string | null; models: ModelEntry[]; error?: string | null }
/** shiro/models/detect: the local presets (or the given URLs) that answered, and what was found in words. */
export type ModelsDetectResult = gen.ModelsDetectResult;

/** Server command (workspace/executeCommand); vscode-languageclient registers it itself. */
export const SERVER_REMEMBER_COMMAND = 'shiro.remember';
/** Client command the server's "Remember this" code action points at. */
export const CLIENT_REMEMBER_COMMAND = 'shiro.rememberSelection';

export type StopReason = 'done' | 'cancelled' | 'error' | 'queue-cleared';

export interface Usage { inputTokens: number; outputTokens: number; costUsd: number | null }

export type ChatParams = gen.ChatParams;
export interface ChatResult { sessionId: string; taskId: string; stopReason: StopReason; usage: Usage; error?: string }

/** An engine event read loosely (every field optional); every `WireEvent` is one (tsc checks it). */
export interface EngineEvent {
  type: 'text' | 'reasoning' | 'tool-start' | 'tool-call' | 'tool-output' | 'tool-result' | 'tool-error'
    | 'tool-denied' | 'compacted' | 'notice' | 'retry' | 'error' | 'done' | string;
  text?: string;
  /** retry: the attempt after the wait (2 = the first retry), of maxAttempts; the wait; the error in words. */
  attempt?: number; maxAttempts?: number; delaySeconds?: number; reason?: string | null;
  id?: string; toolCallId?: string;
  name?: string; toolName?: string;
  input?: unknown;
  chunk?: string;
  output?: unknown;
  error?: unknown;
  before?: number; after?: number;
  inputTokens?: number; outputTokens?: number;
  /** tool-result / tool-error of a call that changed files: its unified diff and the files (v2). */
  diff?: string | null; files?: unknown[] | null;
}


export type Decision = 'once' | 'always' | 'deny';
export interface ApproveParams {
  taskId: string; toolName: string; input: unknown;
  matchedPattern?: string; suggestedPattern: string; repeated: boolean;
  /** bash: whether it runs sandboxed or with full access; a command that reads a secrets file. */
  warning?: string | null;
  /** File tools: what the call would do to the file (v2). */
  preview?: FilePreview | null;
  /** Multi-file calls (apply_patch): every file; `preview` is the first. */
  previews?: FilePreview[] | null;
}
export type ApproveResult = gen.ApproveResult;

// --- reviewable edits and checkpoints (v2) ---
/** `before` null = a new file, `after` null = a delete; `binary`: both are one-line summaries. */
export type FilePreview = gen.FilePreview;
export type ChangeStatus = 'added' | 'modified' | 'deleted' | 'moved';
export type ChangedFile = gen.ChangedFile;
export type ChangesResult = gen.ChangesResult;
/** One contiguous changed region, 1-based lines (for a pure insert/delete, the line before). */
export type DiffHunk = gen.DiffHunk;
export type ChangesDiffResult = gen.ChangesDiffResult;
export type ChangesUndoResult = gen.ChangesUndoResult;
export type ChangesKeepResult = gen.ChangesKeepResult;
export type CheckpointInfo = gen.CheckpointInfo;
export type CheckpointListResult = gen.CheckpointListResult;
export type RestoreMode = 'code' | 'chat' | 'both';
export type CheckpointRestoreResult = gen.CheckpointRestoreResult;


/** The message model (spec §5.1): Vercel AI SDK ModelMessage shapes. */
export interface MessagePart {
  type: string; text?: string; toolCallId?: string; toolName?: string; input?: unknown; output?: unknown; error?: string;
}
export interface Message { role: 'system' | 'user' | 'assistant' | 'tool'; content: string | MessagePart[] }

export type TodoStatus = 'pending' | 'in_progress' | 'done' | 'blocked' | string;
export interface Todo { content: string; status: TodoStatus; note?: string }
export interface TodosPayload {
  todos: Todo[];
  progress: { done: number; total: number; blocked: number; current?: string };
  rendered: string;
}

export interface ResumeResult { session: SessionInfo; transcript: Message[]; todos: TodosPayload }
export interface NewSessionResult { session: SessionInfo; previous?: { id: string; title: string; messageCount: number } }
export interface SaveResult { id: string; saved: boolean; reason?: string }

export interface MemoryEntry { id: string; kind: string; text: string; createdAt: string; hits: number }
export interface MemoryListResult { entries: MemoryEntry[]; text: string }
export type MemoryCompactResult = gen.MemoryCompactResult;
export type NotesResult = gen.NotesResult;

export type MeterLevel = 'ok' | 'warn' | 'critical';
export type ContextMeter = gen.ContextMeter;

export interface InitializationOptions {
  home?: string; model?: string; baseUrl?: string; apiKey?: string; api?: 'responses' | 'chat' | 'auto';
  agent?: string; thinking?: string; compactThreshold?: number; memory?: boolean; approvalTimeoutMs?: number;
  trusted?: boolean;
  /** bash in bubblewrap: off (default), auto (when bwrap works), required (sandboxed or not at all). */
  bashSandbox?: 'off' | 'auto' | 'required'; bashSandboxNetwork?: boolean;
  contextWindow?: number; maxOutputTokens?: number; maxRetries?: number;
  toolCallFormat?: ToolCallFormat | Record<string, ToolCallFormat>;
}
export type ToolCallFormat = 'auto' | 'native' | 'text';

/** Arguments of the client command `shiro.rememberSelection` as the server's code action sends them. */
export interface RememberSelectionArgs {
  text: string; uri: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
}
/** The kinds of memory (generated: the server's `state.memory.Kind`). */
export type MemoryKind = gen.RememberParams['kind'];

export type McpServerInfo = gen.McpServerInfo;
export interface McpListResult { servers: McpServerInfo[]; problems: string[] }
