"""The wire contract (design.md "Wire contract v1"): every custom method and its shapes.

This module is the single source of truth: handlers validate params with these models,
results are dumped from them by alias (camelCase), and `make protocol` generates
docs/protocol.md and docs/protocol.schema.json from ``METHODS``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_type_hints

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    StringConstraints,
    ValidationError,
    create_model,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import InitErrorDetails

from shiro_lsp.agent import events
from shiro_lsp.checkpoints import rows
from shiro_lsp.providers import models as provider_models
from shiro_lsp.state import memory
from shiro_lsp.wire import Wire

# Size limits on what a client may send (a bigger value is -32602 naming the field and the limit).
MAX_PROMPT_CHARS = 256 * 1024
MAX_TODO_CHARS = 2_000
MAX_TODOS = 200
MAX_MEMORY_CHARS = 1024 * 1024  # the store cuts an entry to 400 characters and says so
MAX_QUERY_CHARS = 4_000
MAX_ID_CHARS = 200
MAX_NOTE_CHARS = 16_000  # the notes store's byte limit (task_notes.NOTE_CAP_BYTES) is checked again there
MAX_PROMPT_IMAGES = 10
MAX_IMAGE_BASE64 = 28 * 1024 * 1024  # 20 MB of image (images/process.py) in base64, and some

NonEmpty = Annotated[str, StringConstraints(min_length=1)]
ImageName = Annotated[str, StringConstraints(min_length=1, max_length=200)]


Prompt = Annotated[str, StringConstraints(min_length=1, max_length=MAX_PROMPT_CHARS)]
TodoText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TODO_CHARS)]
TodoNote = Annotated[str, StringConstraints(max_length=MAX_TODO_CHARS)]
MemoryText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_MEMORY_CHARS)]
Query = Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUERY_CHARS)]
Id = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID_CHARS)]
Root = Annotated[
    str,
    StringConstraints(min_length=1, max_length=4096),
    Field(
        description="A workspace folder (absolute path or file URI), or a path inside one: "
        "its folder is meant (multi-root workspaces)."
    ),
]
NoteText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_NOTE_CHARS)]
InputValue = Annotated[str, StringConstraints(max_length=MAX_NOTE_CHARS)]
NoteTextOrEmpty = Annotated[str, StringConstraints(max_length=MAX_NOTE_CHARS)]
MemoryKind = memory.Kind  # the kinds of memory: their one home is state/memory.py
TodoStatus = Literal["pending", "in_progress", "done", "blocked"]


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
    text: Query | None = Field(
        default=None, description="Remove every memory containing this text (case-insensitive)."
    )
    id: NonEmpty | None = Field(
        default=None,
        description="Extension: remove exactly the memory with this id (from shiro/memory/list); "
        "`text` is then ignored. One of `id` or `text` is required.",
    )

    @model_validator(mode="before")
    @classmethod
    def _id_or_text(cls, data: Any) -> Any:
        """Without ``id``, ``text`` is required (reported like any missing field)."""
        if isinstance(data, dict) and data.get("id") is None and data.get("text") is None:
            missing = InitErrorDetails(type="missing", loc=("text",), input=data)
            raise ValidationError.from_exception_data(cls.__name__, [missing])
        return data


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
    local: bool = Field(
        default=False,
        description="The model runs on a local endpoint (localhost): say 'local model', not 'unpriced'.",
    )
    cached_tokens: int | None = Field(
        default=None,
        description="Prompt tokens of the last request the provider served from its prompt cache "
        "(usage.prompt_tokens_details.cached_tokens, Responses input_tokens_details); null before one.",
    )
    will_compact: bool = Field(
        default=False,
        description="The history no longer fits the threshold: the next request will be compacted first "
        "(summarised as by /compact when autoCompact is on, else older tool output pruned).",
    )


# --- chat ----------------------------------------------------------------------------------------


class ChatImage(Wire):
    id: Id = Field(description="The id shiro/images/add answered with.")
    name: ImageName


class ChatParams(Wire):
    text: Prompt
    agent: Literal["default", "quick", "deep", "plan", "review"] | None = None
    inputs: dict[Annotated[str, StringConstraints(min_length=1, max_length=100)], InputValue] | None = Field(
        default=None,
        description="Values for the ${input:name} variables of the custom command the text types "
        "(/name …); a missing one fails the turn with an error that names it.",
    )
    root: Root | None = Field(
        default=None,
        description="The active editor's workspace folder. A live session with no messages yet moves "
        "to it (a fresh session there); otherwise the session keeps its root.",
    )
    images: list[ChatImage] | None = Field(
        default=None,
        description="Extension: images sent with the prompt (kept by shiro/images/add), at most 10. A model "
        "that does not take them is told of each in words, and the turn says so.",
    )

    @field_validator("images")
    @classmethod
    def _few_images(cls, images: list[ChatImage] | None) -> list[ChatImage] | None:
        if images is not None and len(images) > MAX_PROMPT_IMAGES:
            raise ValueError(f"at most {MAX_PROMPT_IMAGES} images go with one prompt")
        return images


class ImageAddParams(Wire):
    name: ImageName
    data: Annotated[str, StringConstraints(min_length=1, max_length=MAX_IMAGE_BASE64)] | None = Field(
        default=None, description="The image's bytes in base64 (pasted or dropped)."
    )
    path: Annotated[str, StringConstraints(min_length=1, max_length=4096)] | None = Field(
        default=None,
        description="Or an image file inside the workspace folders (read like every file: secrets and "
        "files outside refused).",
    )

    @model_validator(mode="before")
    @classmethod
    def _data_or_path(cls, data: Any) -> Any:
        if isinstance(data, dict) and (data.get("data") is None) == (data.get("path") is None):
            missing = InitErrorDetails(type="missing", loc=("data",), input=data)
            raise ValidationError.from_exception_data(cls.__name__, [missing])
        return data


class ImageInfo(Wire):
    id: str = Field(description="The image's SHA-256 (after it was downscaled and written anew).")
    name: str
    media_type: str = Field(description="image/png or image/jpeg.")
    width: int
    height: int
    thumbnail: str = Field(description="A small PNG as a data: URL, for the panel's chip.")


class ChatUsage(Wire):
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    cached_tokens: int = Field(
        default=0, description="Of input_tokens, those the provider served from its prompt cache (this turn)."
    )


class ChatResult(Wire):
    session_id: str
    task_id: str
    stop_reason: Literal["done", "cancelled", "error", "queue-cleared"]
    usage: ChatUsage
    error: str | None = None


def _event_model(cls: type[events.Event]) -> type[Wire]:
    """The wire model of one agent event: its ``type`` tag, then its fields (camelCase)."""
    hints = get_type_hints(cls)
    fields: dict[str, Any] = {"type": (Literal[cls.kind], ...)}
    for f in dataclasses.fields(cls):
        # an optional field (default None) is left out of the wire JSON when it is None
        fields[f.name] = (hints[f.name], ... if f.default is dataclasses.MISSING else f.default)
    model: type[Wire] = create_model(f"{cls.__name__}Event", __base__=Wire, __doc__=cls.__doc__, **fields)
    return model


EVENT_MODELS: tuple[type[Wire], ...] = tuple(_event_model(cls) for cls in events.EVENT_TYPES)
"""One wire model per ``agent.events`` class, derived from it (the fields live there)."""

ChatEvent = Annotated[Union[EVENT_MODELS], Field(discriminator="type")]  # type: ignore[valid-type]  # noqa: UP007
"""An engine event; ``type`` says which (see ``shiro_lsp/agent/events.py``)."""


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


FilePreview = rows.FilePreview
"""A file tool's proposed change on an approval card; its home is ``checkpoints/rows.py``."""


class ApproveParams(Wire):
    task_id: str
    tool_name: str
    input: Any
    matched_pattern: str | None = None
    suggested_pattern: str
    repeated: bool
    warning: str | None = Field(
        default=None,
        description=(
            "Shown on the approval card: for bash, whether it runs sandboxed or with the user's full "
            "access (secrets and files outside the workspace included), and a warning when the "
            "command reads a secrets file."
        ),
    )
    preview: FilePreview | None = Field(
        default=None, description="File tools (write_file, edit_file, multi_edit, move_file, delete_file)."
    )
    previews: list[FilePreview] | None = Field(
        default=None,
        description="Extension: every file of a multi-file call (apply_patch); `preview` is the first.",
    )
    origin: Literal["native", "text", "shiro"] = Field(
        default="native",
        description=(
            "Extension: `text` when Shiro read the call from the model's text (toolCallFormat text or "
            "auto), not from a native tool call; `shiro` when Shiro makes the call itself (a command "
            "the user's message names, run before the model is asked or to check its files), not the "
            "model. The card says so; an `always` answer then covers text and Shiro's own calls only, "
            "and no `always` given to a native call covers them."
        ),
    )


class GrantItem(Wire):
    tool_name: str
    pattern: str = Field(description="`*` (every call of the tool) or a pattern such as `rm *` for bash.")
    origin: Literal["native", "text"] = Field(
        default="native", description="`text`: the grant covers calls read from the model's text only."
    )


class GrantsResult(Wire):
    grants: list[GrantItem] = Field(description="The live session's `always` grants, in the order given.")


class GrantRevokeParams(Wire):
    grant: GrantItem


class GrantRevokeResult(Wire):
    revoked: bool = Field(description="False when the session had no such grant (already revoked, or new).")
    grants: list[GrantItem]


class ApproveResult(Wire):
    decision: Literal["once", "always", "deny"]
    reason: str | None = Field(default=None, description="With deny: why. The model reads it.")


# --- reviewable edits and checkpoints (design.md v2) --------------------------------------------

ChangeStatus = rows.ChangeStatus
RestoreMode = Literal["code", "chat", "both"]


class ChangesParams(Wire):
    task_id: NonEmpty | None = Field(
        default=None, description="Default: the latest turn of this session that changed files."
    )


ChangedFile = rows.ChangedFile
"""A changed file's row, in ``shiro/changes`` and on tool cards (``shiro/event``); its home is
``checkpoints/rows.py``, where the turn and the review make it."""


class ChangesResult(Wire):
    task_id: str | None = Field(description="null when no turn of this session changed files.")
    checkpoint_id: str | None
    files: list[ChangedFile]


class ChangesDiffParams(Wire):
    path: NonEmpty
    task_id: NonEmpty | None = None


class DiffHunk(Wire):
    """Extension: one contiguous changed region (no context lines); its index is what undo takes."""

    index: int
    old_start: int = Field(description="1-based first line in `before` (the line before, for a pure insert).")
    old_lines: int
    new_start: int = Field(description="1-based first line in `after` (the line before, for a pure delete).")
    new_lines: int
    header: str = Field(description="The unified-diff header, `@@ -a,b +c,d @@`.")


class ChangesDiffResult(Wire):
    path: str
    before: str | None = Field(description="The checkpoint's content; null when the turn created the file.")
    after: str | None = Field(description="The file now; null when it is gone.")
    binary: bool = Field(default=False, description="Extension: before/after are one-line summaries.")
    hunks: list[DiffHunk] = Field(
        default_factory=list, description="Extension: the hunks `shiro/changes/undo` indexes."
    )


class ChangesUndoParams(Wire):
    path: NonEmpty
    task_id: NonEmpty | None = None
    hunks: list[Annotated[int, Field(ge=0)]] | None = Field(
        default=None, description="Indices into `shiro/changes/diff` hunks; default the whole file."
    )


class ChangesUndoResult(Wire):
    path: str
    undone: bool
    conflict: str | None = Field(
        default=None, description="Why nothing was written (e.g. the user edited the file since the turn)."
    )


class ChangesKeepParams(Wire):
    path: NonEmpty | None = Field(default=None, description="Default: every file of the turn.")
    task_id: NonEmpty | None = None


class ChangesKeepResult(Wire):
    kept: int


class CheckpointInfo(Wire):
    id: str
    task_id: str
    created_at: str
    prompt: str = Field(description="The user's message that started the turn.")
    files: list[str] = Field(description="Paths the turn changed (workspace-relative).")
    kind: Literal["turn", "redo"] = Field(
        default="turn", description="Extension: `redo` = taken by a restore, to undo that restore."
    )
    not_covered: list[str] = Field(
        default_factory=list,
        description="Extension: what this checkpoint could not record (skipped trees, size caps).",
    )


class CheckpointListResult(Wire):
    checkpoints: list[CheckpointInfo]


class CheckpointRestoreParams(Wire):
    id: NonEmpty
    mode: RestoreMode


class CheckpointRestoreResult(Wire):
    restored: list[str] = Field(description="Paths put back as they were before the turn.")
    conflicts: list[str] = Field(description="Paths left alone: the user changed them since.")
    redo_id: str | None = Field(description="Restore this checkpoint (same mode) to undo this restore.")
    messages_removed: int = Field(default=0, description="Extension: messages dropped from the session.")
    not_covered: list[str] = Field(
        default_factory=list,
        description=(
            "Extension: paths left as they are because the checkpoint cannot put them back (their "
            "earlier content was not recorded, or the user saved them while the turn ran)."
        ),
    )
    deleted: list[str] = Field(
        default_factory=list,
        description=(
            "Extension: of `restored`, the paths this restore deleted: the turn created them (for a "
            "redo: the turn deleted them, so the redo deleted them again)."
        ),
    )
    created: list[str] = Field(
        default_factory=list,
        description=(
            "Extension: of `restored`, the paths this restore wrote where no file was: the turn "
            "deleted them (for a redo: the turn created them, so the redo created them again)."
        ),
    )


# --- sessions ------------------------------------------------------------------------------------


class SessionInfo(Wire):
    id: str
    title: str
    cwd: str = Field(description="The workspace folder the session is bound to (its root, multi-root).")
    created_at: str
    updated_at: str
    message_count: int
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    cached_tokens: int | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Of input_tokens, those the provider served from its prompt cache, over the whole "
        "session; left out of listings (shiro/session/list), which come from the index.",
    )
    snippet: str | None = Field(
        default=None,
        description="Extension: with a list `query`, the matching text of the best message (absent otherwise).",
    )

    @model_serializer(mode="wrap")
    def _without_empty_snippet(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A listing without a query looks exactly as before the search existed."""
        data: dict[str, Any] = handler(self)
        if data.get("snippet") is None:
            data.pop("snippet", None)
        return data


class SessionListParams(Wire):
    limit: int = Field(default=15, ge=1, le=10_000)
    all_workspaces: bool = False
    root: Root | None = Field(
        default=None, description="List this folder's sessions (default: the live one's)."
    )
    query: str | None = Field(
        default=None,
        max_length=500,
        description="Extension: only sessions whose message text (or given title) holds every word "
        "(each word also matches as a prefix), best match first; blank = no filter.",
    )


class SessionNewParams(Wire):
    root: Root | None = Field(
        default=None, description="Start the session in this workspace folder (default: the live one's)."
    )


class SessionListResult(Wire):
    sessions: list[SessionInfo]


class SessionResumeParams(Wire):
    id: Id | None = Field(default=None, description="Full id or a unique prefix.")
    latest: bool | None = None


class CompactionInfo(Wire):
    at: int = Field(
        description="Transcript index: the model sees the summary in place of the messages before it."
    )
    summary: str
    created_at: str
    auto: bool = Field(
        default=False, description="Made because the history no longer fit the threshold, not by /compact."
    )
    digest_reason: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Extension: set when `summary` is Shiro's own digest (the goal, the task list, the files "
        "touched and one line per message), not the model's summary: why the model's was refused (it "
        "repeated the model's last answer, did not name the session's goal, was empty), twice.",
    )
    undone_at: int | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Extension, undone compactions only: the transcript's length when the user undid it.",
    )
    restored: int | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Extension, undone compactions only: the messages the model saw again in place of the summary.",
    )


class TurnInfo(Wire):
    """A turn of a resumed session: where it is in the transcript and how it ended."""

    task_id: str
    at: int = Field(description="Transcript index of the turn's prompt.")
    end: int | None = Field(
        description="Messages in the transcript when the turn ended; null: it never ended (the process died)."
    )
    stop_reason: Literal["done", "cancelled", "error"] | None = None
    error: str | None = None
    checkpoint_id: str | None = Field(
        default=None, description="The turn's checkpoint (Restore checkpoint), when it changed files."
    )
    changes: ChangesResult | None = Field(
        default=None, description="The turn's Changed files block as `shiro/changes` gives it now."
    )


class HistoryEvent(Wire):
    """An event the panel showed, besides the messages, replayed where it happened."""

    at: int = Field(description="Shown after the first `at` messages of the transcript.")
    task_id: str
    event: ChatEvent


class SessionResumeResult(Wire):
    session: SessionInfo
    transcript: list[dict[str, Any]] = Field(
        description="Every message the user saw, in the message model (spec §5.1); compaction never drops any."
    )
    todos: TodosPayload
    compactions: list[CompactionInfo] = Field(
        default_factory=list, description="Oldest first; the model's view starts at the last one."
    )
    undone_compactions: list[CompactionInfo] = Field(
        default_factory=list,
        description="Extension: the compactions the user undid, oldest first, with `undoneAt` and `restored`.",
    )
    turns: list[TurnInfo] = Field(
        default_factory=list, description="Oldest first; sessions saved by older versions have none."
    )
    events: list[HistoryEvent] = Field(
        default_factory=list,
        description="Notices, approvals, denials, errors and tool-card diffs, in order "
        "(a `tool-result`/`tool-error` here carries only its `diff`; the transcript has its output).",
    )
    model_note: str | None = Field(
        default=None,
        description="Set when the session resumes on another model than the one it last ran on "
        "(the settings name another): says which one is used now.",
    )
    images: dict[str, str] = Field(
        default_factory=dict,
        description="Extension: a small PNG (data: URL) of each image the transcript's prompts carry, by "
        "image id; an image no longer kept is left out.",
    )


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
    before: int = Field(description="Messages in the model's view before.")
    after: int = Field(description="Messages in the model's view after (the summary: 1).")
    compaction: CompactionInfo | None = Field(
        default=None, description="The marker added (none: nothing to compact)."
    )


class SessionUncompactResult(Wire):
    before: int = Field(description="Messages in the model's view before.")
    after: int = Field(description="Messages in the model's view after.")
    compactions: list[CompactionInfo] = Field(description="Those that remain, oldest first.")


class CompactionProgress(Wire):
    phase: Literal["summarizing", "done", "failed"]
    messages: int = Field(description="Messages in the model's view being summarised.")
    compaction: CompactionInfo | None = Field(
        default=None, description="done: the marker added (/compact, or automatic when the history filled)."
    )


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


class SessionRenameParams(Wire):
    id: Id = Field(description="Full id or a unique prefix (the live session too).")
    title: str = Field(description="One line, 1 to 200 characters after trimming; kept across restarts.")


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


# --- MCP servers Shiro uses (design.md "Ecosystem (v2)") -------------------------------------------


class McpServerInfo(Wire):
    name: str
    source: str = Field(description="The config file the entry came from.")
    scope: Literal["project", "user"] = Field(description="Project servers run only once trusted.")
    status: Literal["running", "stopped", "untrusted", "error"]
    trusted: bool
    tools: list[str] = Field(
        description="The server's tool names as it lists them (offered as mcp__<server>__<tool>)."
    )
    command: str = Field(description="Exactly what runs: the command line (stdio) or the URL (http).")
    error: str | None = None


class McpListResult(Wire):
    servers: list[McpServerInfo]
    problems: list[str] = Field(
        default_factory=list, description="Config files or entries that could not be used, in words."
    )


class McpTrustParams(Wire):
    name: NonEmpty
    trusted: bool


# --- custom commands and hooks ---------------------------------------------------------------------


class CommandInput(Wire):
    name: str
    placeholder: str = Field(description="What to enter ('' when the file gives no hint).")


class CommandInfo(Wire):
    name: str = Field(description="Typed as /name.")
    description: str
    argument_hint: str = Field(description="What goes after the name ('' for nothing said).")
    source: str = Field(description="The file, as the user would name it (.claude/commands/x.md, ~/...).")
    scope: Literal["user", "project"] = Field(
        description="user: the state root's commands/; project: the workspace's."
    )
    inputs: list[CommandInput] = Field(
        description="The ${input:name} variables: asked for before it runs (or given as name=value)."
    )
    agent: str | None = Field(default=None, description="The agent variant it runs (its front matter).")
    tools: list[str] | None = Field(
        default=None,
        description="The only tools it offers (its front matter); null: the agent's usual tools.",
    )
    model: str | None = Field(default=None, description="The model it runs (only from the user's own files).")
    notes: list[str] = Field(
        description="What of the file Shiro does not do as written (shell lines not run, unknown tools, a model)."
    )
    error: str | None = Field(default=None, description="Why the file cannot be used (it never runs).")
    shadowed_by: str | None = Field(
        default=None, description="A built-in or an earlier file with the same name: this one never runs."
    )


class CommandsListResult(Wire):
    commands: list[CommandInfo] = Field(
        description="Every command file found, in the order that decides which one a name runs."
    )


class HookInfo(Wire):
    id: str = Field(description="SHA-256 of the event, matcher and entry: what trust is pinned to.")
    event: Literal["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart"]
    matcher: str = Field(description="The tool names (or SessionStart sources) it runs for; '' for all.")
    command: str = Field(description="Exactly what runs (bash -c).")
    timeout_seconds: float
    source: str = Field(description="The settings file it came from.")
    scope: Literal["user", "project"] = Field(description="project hooks run only once trusted.")
    trusted: bool
    runs: bool = Field(description="Trusted, and the workspace is not in restricted mode.")


class HooksListResult(Wire):
    hooks: list[HookInfo]
    problems: list[str] = Field(
        description="Settings files, events or entries that could not be used, in words."
    )
    restricted: bool = Field(description="The workspace is in restricted mode: no hook runs.")


class HooksTrustParams(Wire):
    ids: list[Id] = Field(
        min_length=1, description='The hooks\' ids, or ["all"]: every hook of .shiro/settings.json.'
    )
    trusted: bool


# --- models (local model presets) ----------------------------------------------------------------


ModelPreset = provider_models.Preset  # the local model-server presets: their one home is providers/models.py


class ModelsParams(Wire):
    base_url: NonEmpty | None = Field(
        default=None, description="Default: the configured baseUrl (OpenAI when none is set)."
    )


class ModelEntry(Wire):
    id: str
    context_window: int | None = Field(
        default=None,
        description="Tokens, when the server reports it (vLLM, llama.cpp /props, LM Studio). Ollama: the "
        "loaded model's window (/api/ps), else its num_ctx, else Ollama's default of 4,096.",
    )
    native_tools: bool | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="false: the server takes no native tool calls for this model (Ollama's capabilities), "
        'so Shiro uses toolCallFormat "text" with it; left out when not known.',
    )


class ModelsResult(Wire):
    base_url: str
    preset: ModelPreset | None = Field(
        description="Which server answered: from its answer (owned_by, /props), else its well-known port."
    )
    models: list[ModelEntry] = Field(description="Sorted by id; empty when error is set.")
    error: str | None = Field(default=None, description="Why nothing could be listed, for a person to read.")
    preset_name: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description='Extension: the preset\'s display name (e.g. "LM Studio"), to show as it is; left out '
        "when preset is null.",
    )


class ModelsDetectParams(Wire):
    base_urls: list[NonEmpty] | None = Field(
        default=None,
        description="Base URLs to probe instead of the presets (Ollama 127.0.0.1:11434/v1, LM Studio "
        ":1234/v1, llama.cpp :8080/v1, vLLM :8000/v1).",
    )


class ModelsDetectResult(Wire):
    endpoints: list[ModelsResult] = Field(description="The ones that answered, in the order probed.")
    message: str = Field(description="What was found, or which addresses were tried when none answered.")


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
        "shiro/images/add",
        ImageAddParams,
        ImageInfo,
        "Extension: keep an image for the next prompt (checked, downscaled, metadata dropped); "
        "its id goes in shiro/chat `images`.",
    ),
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
    _request(
        "shiro/changes",
        ChangesParams,
        ChangesResult,
        "What a turn changed (default: the latest turn that changed files).",
    ),
    _request(
        "shiro/changes/diff", ChangesDiffParams, ChangesDiffResult, "A file's checkpoint content vs now."
    ),
    _request(
        "shiro/changes/undo",
        ChangesUndoParams,
        ChangesUndoResult,
        "Put back the whole file or the listed hunks; a file the user edited since is a conflict.",
    ),
    _request("shiro/changes/keep", ChangesKeepParams, ChangesKeepResult, "Mark files reviewed."),
    _notification("shiro/changes/changed", ChangesResult, "After every turn that changed files."),
    _request(
        "shiro/checkpoint/list", Empty, CheckpointListResult, "This session's checkpoints, newest first."
    ),
    _request(
        "shiro/checkpoint/restore",
        CheckpointRestoreParams,
        CheckpointRestoreResult,
        "code: the workspace as before that turn; chat: drop that turn and later ones; both.",
    ),
    _request("shiro/session/current", Empty, SessionInfo, "The live session."),
    _request(
        "shiro/session/list", SessionListParams, SessionListResult, "Newest first; this workspace by default."
    ),
    _request("shiro/session/resume", SessionResumeParams, SessionResumeResult, "Make a saved session live."),
    _request(
        "shiro/session/new",
        SessionNewParams,
        SessionNewResult,
        "Save the live session (if it has messages), start anew.",
    ),
    _request("shiro/session/save", Empty, SessionSaveResult, "Save now; an empty session is not written."),
    _request(
        "shiro/session/clear", SessionNewParams, SessionNewResult, "Like new: the old session stays on disk."
    ),
    _request(
        "shiro/session/compact",
        Empty,
        SessionCompactResult,
        "Manual /compact: the model sees a summary in place of its view; the history is kept.",
    ),
    _request(
        "shiro/session/uncompact",
        Empty,
        SessionUncompactResult,
        "Undo the last compaction while the earlier view fits the limit; an error says why not.",
    ),
    _request("shiro/session/export", SessionExportParams, SessionExportResult, "JSON or readable Markdown."),
    _request(
        "shiro/session/branch", SessionBranchParams, SessionInfo, "A new session with a copy of the history."
    ),
    _request("shiro/session/delete", SessionDeleteParams, SessionDeleteResult, "Explicit user action only."),
    _request(
        "shiro/session/rename", SessionRenameParams, SessionInfo, "Extension: a title of the user's own."
    ),
    _notification("shiro/session/changed", SessionInfo, "After every save, new, resume, clear."),
    _request("shiro/grants", Empty, GrantsResult, "Extension: the `always` grants of the live session."),
    _request(
        "shiro/grants/revoke",
        GrantRevokeParams,
        GrantRevokeResult,
        "Extension: take one grant back; the next matching call asks again.",
    ),
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
    _request(
        "shiro/memory/forget",
        ForgetParams,
        ForgetResult,
        "Remove every memory containing the text, or exactly the one with `id`.",
    ),
    _request("shiro/memory/list", Empty, EntriesResult, "/notes: every memory, newest first."),
    _request(
        "shiro/memory/compact", Empty, MemoryCompactResult, "/memory: merge unused memories with the model."
    ),
    _request("shiro/notes/read", NotesReadParams, NotesResult, "Project and task notes with their hashes."),
    _request("shiro/notes/append", NotesAppendParams, NotesResult, "Append to the notes."),
    _request("shiro/notes/replace", NotesReplaceParams, NotesResult, "Replace; needs the hash last read."),
    _request("shiro/history", Empty, HistoryResult, "Prompt history of this workspace, newest last."),
    _request("shiro/context", Empty, ContextMeter, "What the next request will carry."),
    _request("shiro/mcp/list", Empty, McpListResult, "The configured MCP servers: status, tools, trust."),
    _request(
        "shiro/mcp/trust",
        McpTrustParams,
        McpListResult,
        "Trust (pinned to the entry's SHA-256) or untrust a project MCP server; answers as list.",
    ),
    _request(
        "shiro/commands/list",
        Empty,
        CommandsListResult,
        "The custom commands (/name): the user's and the workspace's command and prompt files.",
    ),
    _request(
        "shiro/hooks/list", Empty, HooksListResult, "The configured hooks, where each comes from, trust."
    ),
    _request(
        "shiro/hooks/trust",
        HooksTrustParams,
        HooksListResult,
        "Trust (pinned to each entry's SHA-256) or untrust hooks of .shiro/settings.json; answers as list.",
    ),
    _request(
        "shiro/models",
        ModelsParams,
        ModelsResult,
        "The models an endpoint serves (GET /v1/models, plus llama.cpp /props), and which server it is.",
    ),
    _request(
        "shiro/models/detect",
        ModelsDetectParams,
        ModelsDetectResult,
        "Which local model servers are running (the presets, probed at once).",
    ),
    _notification(
        "shiro/session/compacting",
        CompactionProgress,
        "While /compact runs: summarizing, then done or failed.",
    ),
    _notification(
        "shiro/context/changed", ContextMeter, "After every model step, resume, compact and clear."
    ),
)

METHODS_BY_NAME = {m.name: m for m in METHODS}
