"""The wire contract (design.md "Wire contract v1"): every custom method and its shapes.

This module is the single source of truth: handlers validate params with these models,
results are dumped from them by alias (camelCase), and `make protocol` generates
docs/protocol.md and docs/protocol.schema.json from ``METHODS``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from pydantic.alias_generators import to_camel

# Size limits on what a client may send (a bigger value is -32602 naming the field and the limit).
MAX_PROMPT_CHARS = 256 * 1024
MAX_TODO_CHARS = 2_000
MAX_TODOS = 200
MAX_MEMORY_CHARS = 1024 * 1024  # the store cuts an entry to 400 characters and says so
MAX_QUERY_CHARS = 4_000
MAX_ID_CHARS = 200
MAX_NOTE_CHARS = 16_000  # the notes store's byte limit (task_notes.NOTE_CAP_BYTES) is checked again there

NonEmpty = Annotated[str, StringConstraints(min_length=1)]


Prompt = Annotated[str, StringConstraints(min_length=1, max_length=MAX_PROMPT_CHARS)]
TodoText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TODO_CHARS)]
TodoNote = Annotated[str, StringConstraints(max_length=MAX_TODO_CHARS)]
MemoryText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_MEMORY_CHARS)]
Query = Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUERY_CHARS)]
Id = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID_CHARS)]
NoteText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_NOTE_CHARS)]
NoteTextOrEmpty = Annotated[str, StringConstraints(max_length=MAX_NOTE_CHARS)]
MemoryKind = Literal["fact", "decision", "gotcha", "command"]
TodoStatus = Literal["pending", "in_progress", "done", "blocked"]


class Wire(BaseModel):
    """camelCase on the wire, strict types (a string is not a number), unknown keys ignored."""

    # defer_build: each model builds its validator on first use, not at server start.
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", strict=True, defer_build=True
    )


class Empty(Wire):
    pass


# --- task list -----------------------------------------------------------------------------------


class TodoItem(Wire):
    content: TodoText
    status: TodoStatus
    note: TodoNote | None = None


class TodoProgress(Wire):
    done: int
    total: int
    blocked: int
    current: str | None = None


class TodosPayload(Wire):
    todos: list[TodoItem]
    progress: TodoProgress
    rendered: str = Field(description="The 40-cell progress line, then one line per task ('' when empty).")


class TodosUpdateParams(Wire):
    todos: list[TodoItem] = Field(max_length=MAX_TODOS)


# --- project memory ------------------------------------------------------------------------------


class MemoryEntry(Wire):
    id: str
    kind: MemoryKind
    text: str
    created_at: str
    hits: int


class RememberParams(Wire):
    kind: MemoryKind
    text: MemoryText


class RememberResult(Wire):
    text: str = Field(description="The remember tool's reply string.")
    duplicate: bool
    entry: MemoryEntry | None = None


class RecallParams(Wire):
    query: Query


class EntriesResult(Wire):
    entries: list[MemoryEntry]
    text: str


class ForgetParams(Wire):
    text: Query


class ForgetResult(Wire):
    removed: int
    text: str


class MemoryCompactResult(Wire):
    before: int
    after: int
    text: str


class RememberCommandArgs(Wire):
    """`workspace/executeCommand` `shiro.remember` argument."""

    kind: MemoryKind
    text: MemoryText


class RememberSelectionArgs(Wire):
    """Argument of the client command `shiro.rememberSelection` offered by the code action."""

    text: str
    uri: str
    range: dict[str, Any]


# --- history -------------------------------------------------------------------------------------


class HistoryResult(Wire):
    prompts: list[str]


# --- context meter -------------------------------------------------------------------------------


class ContextMeter(Wire):
    tokens: int = Field(description="What the next request carries: instructions + tools + messages.")
    threshold: int
    percent: int
    level: Literal["ok", "warn", "critical"]
    estimated: bool = Field(description="true: the /4 estimate; false: measured by the provider.")


# --- chat ----------------------------------------------------------------------------------------


class ChatParams(Wire):
    text: Prompt
    agent: Literal["default", "quick", "deep", "plan", "review"] | None = None


class ChatUsage(Wire):
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


class ChatResult(Wire):
    session_id: str
    task_id: str
    stop_reason: Literal["done", "cancelled", "error", "queue-cleared"]
    usage: ChatUsage
    error: str | None = None


class ChatEvent(Wire):
    model_config = ConfigDict(extra="allow")
    type: Literal[
        "text",
        "reasoning",
        "tool-start",
        "tool-call",
        "tool-output",
        "tool-result",
        "tool-error",
        "tool-denied",
        "compacted",
        "notice",
        "error",
        "done",
    ]


class EventNotification(Wire):
    session_id: str
    task_id: str
    seq: int = Field(description="Counts from 0 per task.")
    event: ChatEvent


class QueuedChat(Wire):
    task_id: str
    text: str


class QueueResult(Wire):
    queued: list[QueuedChat]


class QueueClearResult(Wire):
    cleared: int


class ApproveParams(Wire):
    task_id: str
    tool_name: str
    input: Any
    matched_pattern: str | None = None
    suggested_pattern: str
    repeated: bool


class ApproveResult(Wire):
    decision: Literal["once", "always", "deny"]


# --- sessions ------------------------------------------------------------------------------------


class SessionInfo(Wire):
    id: str
    title: str
    cwd: str
    created_at: str
    updated_at: str
    message_count: int
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


class SessionListParams(Wire):
    limit: int = Field(default=15, ge=1, le=10_000)
    all_workspaces: bool = False


class SessionListResult(Wire):
    sessions: list[SessionInfo]


class SessionResumeParams(Wire):
    id: Id | None = Field(default=None, description="Full id or a unique prefix.")
    latest: bool | None = None


class SessionResumeResult(Wire):
    session: SessionInfo
    transcript: list[dict[str, Any]] = Field(description="Messages in the message model (spec §5.1).")
    todos: TodosPayload


class PreviousSession(Wire):
    id: str
    title: str
    message_count: int


class SessionNewResult(Wire):
    session: SessionInfo
    previous: PreviousSession | None = None


class SessionSaveResult(Wire):
    id: str
    saved: bool
    reason: str | None = None


class SessionCompactResult(Wire):
    before: int
    after: int


class SessionExportParams(Wire):
    id: Id | None = Field(default=None, description="Full id or a unique prefix; default the live session.")
    format: Literal["json", "markdown"]


class SessionExportResult(Wire):
    content: str


class SessionBranchParams(Wire):
    id: Id | None = Field(default=None, description="Full id or a unique prefix; default the live session.")
    at_message: int | None = Field(
        default=None, ge=0, description="Index of the last message the branch keeps (0-based); default all."
    )


class SessionDeleteParams(Wire):
    id: Id


class SessionDeleteResult(Wire):
    deleted: bool


# --- notes ---------------------------------------------------------------------------------------


class NotesReadParams(Wire):
    scope: Literal["project", "task"] = "project"
    task_id: Id | None = Field(
        default=None,
        description="Default: the current conversation's latest task (none before its first turn; "
        "then task writes need a taskId).",
    )


class NotesAppendParams(NotesReadParams):
    note: NoteText


class NotesReplaceParams(NotesReadParams):
    note: NoteTextOrEmpty = Field(description="The new text; an empty string clears.")
    expected_hash: Id


class NotesResult(Wire):
    project: str
    task: str
    project_hash: str
    task_hash: str
    task_id: str | None = Field(description="The task shown; null when there is none.")
    problems: list[str] = Field(
        default_factory=list, description="Notes files that could not be read (left untouched on disk)."
    )


# --- the method table ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Method:
    name: str
    kind: Literal["request", "notification"]
    direction: Literal["client->server", "server->client"]
    params: type[Wire]
    result: type[Wire] | None
    doc: str


def _request(name: str, params: type[Wire], result: type[Wire], doc: str) -> Method:
    return Method(name, "request", "client->server", params, result, doc)


def _notification(name: str, params: type[Wire], doc: str) -> Method:
    return Method(name, "notification", "server->client", params, None, doc)


METHODS: tuple[Method, ...] = (
    _request(
        "shiro/chat", ChatParams, ChatResult, "Run one turn. Sent while a turn runs, it waits in FIFO order."
    ),
    _notification("shiro/event", EventNotification, "One per engine event of a turn, in order."),
    _request("shiro/queue", Empty, QueueResult, "The chats waiting behind the running turn."),
    _request(
        "shiro/queue/clear", Empty, QueueClearResult, "Queued chats resolve with stopReason queue-cleared."
    ),
    Method(
        "shiro/approve",
        "request",
        "server->client",
        ApproveParams,
        ApproveResult,
        "Ask the user about a tool call. No answer within approvalTimeoutMs, or an error, is a deny.",
    ),
    _request("shiro/session/current", Empty, SessionInfo, "The live session."),
    _request(
        "shiro/session/list", SessionListParams, SessionListResult, "Newest first; this workspace by default."
    ),
    _request("shiro/session/resume", SessionResumeParams, SessionResumeResult, "Make a saved session live."),
    _request(
        "shiro/session/new",
        Empty,
        SessionNewResult,
        "Save the live session (if it has messages), start anew.",
    ),
    _request("shiro/session/save", Empty, SessionSaveResult, "Save now; an empty session is not written."),
    _request("shiro/session/clear", Empty, SessionNewResult, "Like new: the old session stays on disk."),
    _request(
        "shiro/session/compact",
        Empty,
        SessionCompactResult,
        "Manual /compact: a model summary replaces history.",
    ),
    _request("shiro/session/export", SessionExportParams, SessionExportResult, "JSON or readable Markdown."),
    _request(
        "shiro/session/branch", SessionBranchParams, SessionInfo, "A new session with a copy of the history."
    ),
    _request("shiro/session/delete", SessionDeleteParams, SessionDeleteResult, "Explicit user action only."),
    _notification("shiro/session/changed", SessionInfo, "After every save, new, resume, clear."),
    _request("shiro/todos", Empty, TodosPayload, "The task list."),
    _notification("shiro/todos/changed", TodosPayload, "After every todo_write, update and resume."),
    _request(
        "shiro/todos/update",
        TodosUpdateParams,
        TodosPayload,
        "The user edits the plan; the model sees it next step.",
    ),
    _request("shiro/memory/remember", RememberParams, RememberResult, "Store a project memory."),
    _request("shiro/memory/recall", RecallParams, EntriesResult, "Every term must match; newest 15 matches."),
    _request("shiro/memory/forget", ForgetParams, ForgetResult, "Remove every memory containing the text."),
    _request("shiro/memory/list", Empty, EntriesResult, "/notes: every memory, newest first."),
    _request(
        "shiro/memory/compact", Empty, MemoryCompactResult, "/memory: merge unused memories with the model."
    ),
    _request("shiro/notes/read", NotesReadParams, NotesResult, "Project and task notes with their hashes."),
    _request("shiro/notes/append", NotesAppendParams, NotesResult, "Append to the notes."),
    _request("shiro/notes/replace", NotesReplaceParams, NotesResult, "Replace; needs the hash last read."),
    _request("shiro/history", Empty, HistoryResult, "Prompt history of this workspace, newest last."),
    _request("shiro/context", Empty, ContextMeter, "What the next request will carry."),
    _notification(
        "shiro/context/changed", ContextMeter, "After every model step, resume, compact and clear."
    ),
)

METHODS_BY_NAME = {m.name: m for m in METHODS}
