// The wire contract v1 (docs/protocol.md): method names and shapes. Names here are a contract; keep them exact.
// The shapes come from protocol.gen.ts, generated from docs/protocol.schema.json (`make protocol`). The few
// written here by hand say why they cannot be generated; every other name is an alias of a generated type.
import type * as gen from './protocol.gen';

/** Every event the server sends in `shiro/event` (a union on `type`). */
export type WireEvent = gen.EventNotification['event'];
export type EventNotification = gen.EventNotification;
export type QueuedChat = gen.QueuedChat;
export type GrantItem = gen.GrantItem;
export type GrantsResult = gen.GrantsResult;
export type GrantRevokeResult = gen.GrantRevokeResult;
export type QueueResult = gen.QueueResult;
export type SessionInfo = gen.SessionInfo;
export type CompactionInfo = gen.CompactionInfo;
export type CompactionProgress = gen.CompactionProgress;
export type SessionCompactResult = gen.SessionCompactResult;
export type SessionUncompactResult = gen.SessionUncompactResult;
/** A resumed session's turn (where it is, how it ended, its checkpoint and Changed files). */
export type TurnInfo = gen.TurnInfo;
/** An event the panel showed besides the messages, recorded with the session and replayed on resume. */
export type HistoryEvent = gen.HistoryEvent;

// The method names, their params/result types and the agent variants are generated from the server's
// METHODS table (shiro_lsp/server/protocol.py) with the types.
export { AGENTS, Method } from './protocol.gen';
export type ProtocolMethods = gen.ProtocolMethods;
/** The requests the extension sends; `ShiroServer.sendRequest` takes these, typed per method. */
export type ClientRequest = {
  [M in keyof ProtocolMethods]: ProtocolMethods[M] extends { kind: 'request'; direction: 'client->server' } ? M : never;
}[keyof ProtocolMethods];
export type ParamsOf<M extends keyof ProtocolMethods> = ProtocolMethods[M]['params'];
export type ResultOf<M extends keyof ProtocolMethods> = ProtocolMethods[M] extends { result: infer R } ? R : never;

export type Agent = (typeof gen.AGENTS)[number];

/** shiro/models: the models an endpoint serves (GET /v1/models), or why none could be listed. */
export type ModelsParams = gen.ModelsParams;
export type ModelEntry = gen.ModelEntry;
export type ModelsResult = gen.ModelsResult;
/** shiro/models/detect: the local presets (or the given URLs) that answered, and what was found in words. */
export type ModelsDetectResult = gen.ModelsDetectResult;

/** Server command (workspace/executeCommand); vscode-languageclient registers it itself. */
export const SERVER_REMEMBER_COMMAND = 'shiro.remember';
/** Client command the server's "Remember this" code action points at. */
export const CLIENT_REMEMBER_COMMAND = 'shiro.rememberSelection';

export type StopReason = gen.ChatResult['stopReason'];

export type Usage = gen.ChatUsage;

export type ChatParams = gen.ChatParams;
export type ChatResult = gen.ChatResult;

/** An engine event read loosely (every field optional); every `WireEvent` is one (tsc checks it). Hand-written
 *  on purpose: the panel reads any event through it, including types a newer server may add. */
export interface EngineEvent {
  type:
    | 'text'
    | 'reasoning'
    | 'tool-start'
    | 'tool-call'
    | 'tool-output'
    | 'tool-result'
    | 'tool-error'
    | 'tool-denied'
    | 'compacted'
    | 'notice'
    | 'retry'
    | 'error'
    | 'done'
    | string;
  text?: string;
  /** retry: the attempt after the wait (2 = the first retry), of maxAttempts; the wait; the error in words. */
  attempt?: number;
  maxAttempts?: number;
  delaySeconds?: number;
  reason?: string | null;
  id?: string;
  toolCallId?: string;
  name?: string;
  toolName?: string;
  input?: unknown;
  /** tool-call, approval: `model` (a native call), `text` (Shiro read it from the model's text) or `shiro`
   *  (Shiro made it itself: a command the user's message names). */
  origin?: string | null;
  chunk?: string;
  output?: unknown;
  error?: unknown;
  /** error: no model endpoint is usable yet (the panel shows its setup card). */
  needsSetup?: boolean | null;
  before?: number;
  after?: number;
  inputTokens?: number;
  outputTokens?: number;
  /** tool-result / tool-error of a call that changed files: its unified diff and the files (v2). */
  diff?: string | null;
  files?: unknown[] | null;
  /** approval: the user's answer, what "always" grants, and whether no answer came in time. */
  decision?: string;
  suggestedPattern?: string;
  matchedPattern?: string | null;
  expired?: boolean;
}

export type Decision = gen.ApproveResult['decision'];
export type ApproveParams = gen.ApproveParams;
export type ApproveResult = gen.ApproveResult;

// --- reviewable edits and checkpoints (v2) ---
/** `before` null = a new file, `after` null = a delete; `binary`: both are one-line summaries. */
export type FilePreview = gen.FilePreview;
export type ChangeStatus = gen.ChangedFile['status'];
export type ChangedFile = gen.ChangedFile;
export type ChangesResult = gen.ChangesResult;
/** One contiguous changed region, 1-based lines (for a pure insert/delete, the line before). */
export type DiffHunk = gen.DiffHunk;
export type ChangesDiffResult = gen.ChangesDiffResult;
export type ChangesUndoResult = gen.ChangesUndoResult;
export type ChangesKeepResult = gen.ChangesKeepResult;
export type CheckpointInfo = gen.CheckpointInfo;
export type CheckpointListResult = gen.CheckpointListResult;
export type RestoreMode = gen.CheckpointRestoreParams['mode'];
export type CheckpointRestoreResult = gen.CheckpointRestoreResult;

/** The message model (spec §5.1): Vercel AI SDK ModelMessage shapes. Hand-written: the wire schema carries
 *  messages as open JSON objects (`transcript: {[k: string]: unknown}[]`; the server stores what providers
 *  send), so there is no generated type for them. */
export interface MessagePart {
  type: string;
  text?: string;
  toolCallId?: string;
  toolName?: string;
  input?: unknown;
  output?: unknown;
  error?: string;
  /** A tool-call part Shiro read from the model's text carries `{shiro: {fromText: true}}`; one Shiro made
   *  itself also `byShiro: true`. */
  providerOptions?: { shiro?: { fromText?: boolean; byShiro?: boolean } };
  /** An image part: the id the server keeps it under, its file name. */
  imageId?: string;
  name?: string;
}
export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | MessagePart[];
  /** Set on a user message Shiro wrote, not the user: `nudge` (the turn guard sent the model back),
   *  `pruned-span` (notes on compacted messages). */
  shiroNote?: string;
}

export type TodoStatus = gen.TodoItem['status'];
export type Todo = gen.TodoItem;
export type TodosPayload = gen.TodosPayload;

/** The generated result with its transcript read as the message model (see `Message`). */
export type ResumeResult = Omit<gen.SessionResumeResult, 'transcript'> & { transcript: Message[] };
/** shiro/session/resume's result read that way: the schema leaves a transcript message open. */
export function asResumeResult(r: gen.SessionResumeResult): ResumeResult {
  return r as unknown as ResumeResult;
}
export type NewSessionResult = gen.SessionNewResult;
export type SaveResult = gen.SessionSaveResult;

export type MemoryEntry = gen.MemoryEntry;
export type MemoryListResult = gen.EntriesResult;
export type MemoryCompactResult = gen.MemoryCompactResult;
export type NotesResult = gen.NotesResult;

export type MeterLevel = gen.ContextMeter['level'];
export type ContextMeter = gen.ContextMeter;

/** What the extension sends as initializationOptions. Hand-written: the server reads them as settings
 *  (shiro_lsp/config.py, a dataclass read leniently), which are not wire types and not in the schema. */
export interface InitializationOptions {
  home?: string;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  api?: 'responses' | 'chat' | 'auto';
  agent?: string;
  thinking?: string;
  compactThreshold?: number;
  autoCompact?: boolean;
  memory?: boolean;
  approvalTimeoutMs?: number;
  trusted?: boolean;
  /** bash in bubblewrap: off (default), auto (when bwrap works), required (sandboxed or not at all). */
  bashSandbox?: 'off' | 'auto' | 'required';
  bashSandboxNetwork?: boolean;
  contextWindow?: number;
  maxOutputTokens?: number;
  maxRetries?: number;
  temperature?: number;
  toolCallFormat?: ToolCallFormat | Record<string, ToolCallFormat>;
  /** Hosts web_fetch may reach at a loopback, private or link-local address (the user's own setting). */
  webFetchAllowHosts?: string[];
  /** How Shiro works with the model (shiro_lsp/adapt/profiles.py). */
  modelProfile?: 'auto' | 'full' | 'compact';
  /** The command that checks the work: the user's, or a trusted workspace's (settingsTrust.ts). */
  checkCommand?: string;
  /** Whether the model is sent images: auto (as the endpoint says), on, off; or one per model glob. */
  imageInput?: ImageInput | Record<string, ImageInput>;
}
export type ToolCallFormat = 'auto' | 'native' | 'text';
export type ImageInput = 'auto' | 'on' | 'off';

/** Arguments of the client command `shiro.rememberSelection` as the server's code action sends them. Hand-written:
 *  the schema has the methods' params and results and the events; a code action's command arguments
 *  (protocol.py's RememberSelectionArgs, whose `range` is an LSP Range kept as a plain dict) are neither. */
export interface RememberSelectionArgs {
  text: string;
  uri: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
}
/** The kinds of memory (generated: the server's `state.memory.Kind`). */
export type MemoryKind = gen.RememberParams['kind'];

export type McpServerInfo = gen.McpServerInfo;
export type McpListResult = gen.McpListResult;
