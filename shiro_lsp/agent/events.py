"""The events of a turn: what the engine tells a front end, in order (spec §7.5).

One frozen dataclass per kind; ``Event`` is their union and ``Emit`` what a front end gives the
engine. Fields are snake_case here; :func:`event_json` is the one place that turns an event into
its wire JSON (``{"type": "done", "inputTokens": ...}``), for ``shiro/event`` and the headless
``--json`` lines alike. ``server/protocol.py`` derives the documented wire union from
:data:`EVENT_TYPES`, so a new event is one class here plus its entry in that tuple.

A turn ends with ``Done`` or, on failure, with ``Failed`` and no ``Done``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, Literal

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from shiro_lsp.checkpoints.rows import ChangedFile

TurnOutcomeKind = Literal["changed", "unchanged", "answered"]
CallOrigin = Literal["model", "text", "shiro"]
"""Who made a tool call: the model (a native call), the model's text (Shiro read the call from it),
or Shiro itself (a command the user's message names, run before or after the model's answer)."""


@dataclass(frozen=True)
class Text:
    """A delta of the answer's text."""

    kind: ClassVar[str] = "text"
    text: str


@dataclass(frozen=True)
class Reasoning:
    """A delta of the model's visible reasoning."""

    kind: ClassVar[str] = "reasoning"
    text: str


@dataclass(frozen=True)
class ToolStart:
    """The model began writing a tool call (its input is still streaming)."""

    kind: ClassVar[str] = "tool-start"
    id: str
    name: str


@dataclass(frozen=True)
class ToolCall:
    """A complete tool call; ``input`` is the checked input, or the raw text when it was not JSON."""

    kind: ClassVar[str] = "tool-call"
    id: str
    name: str
    input: Any
    origin: CallOrigin = "model"
    """``model``: the model's native tool call; ``text``: Shiro read it from the model's text;
    ``shiro``: Shiro made it itself (a command the user's message names), not the model."""


@dataclass(frozen=True)
class ToolOutput:
    """Live output of a running tool (bash stdout/stderr)."""

    kind: ClassVar[str] = "tool-output"
    id: str
    chunk: str


@dataclass(frozen=True)
class ToolResult:
    """A tool's result, as the model reads it."""

    kind: ClassVar[str] = "tool-result"
    id: str
    name: str
    output: str
    diff: str | None = None  # a call that changed files: a short unified diff for the card
    files: list[ChangedFile] | None = None  # and one row per changed file (path, status, +N -M)


@dataclass(frozen=True)
class ToolFailed:
    """A tool call that failed (bad input, an error the model reads); the turn goes on."""

    kind: ClassVar[str] = "tool-error"
    id: str
    name: str
    error: str
    diff: str | None = None  # what the failed call still changed, if anything
    files: list[ChangedFile] | None = None


@dataclass(frozen=True)
class ToolDenied:
    """A tool call refused by the rules or by the user."""

    kind: ClassVar[str] = "tool-denied"
    id: str
    name: str
    reason: str | None = None
    """What the model was told: the rule's reason, the user's deny, headless, a repeat."""


@dataclass(frozen=True)
class ToolApproval:
    """The user's answer to an approval request for a tool call (before it runs, or is denied)."""

    kind: ClassVar[str] = "approval"
    id: str
    name: str
    decision: Literal["once", "always", "deny"]
    suggested_pattern: str
    """What "always" grants (or would have granted)."""
    reason: str | None = None
    """The reason given with a deny (the model reads it)."""
    matched_pattern: str | None = None
    origin: CallOrigin = "model"
    """As the call's (``ToolCall.origin``)."""
    expired: bool = False
    """No answer came in time: the call was denied."""
    files: list[ChangedFile] | None = None
    """A file tool's card: the files it proposed to change, with their counts (its "Proposed change")."""


@dataclass(frozen=True)
class Compacted:
    """The history sent was pruned to fit: ``before`` messages became ``after``."""

    kind: ClassVar[str] = "compacted"
    before: int
    after: int


@dataclass(frozen=True)
class Notice:
    """Something the user should know that is not an error (a refusal's reason, the step limit)."""

    kind: ClassVar[str] = "notice"
    text: str


@dataclass(frozen=True)
class Retry:
    """A model call failed and is tried again after ``delay_seconds``: ``attempt`` (2 = the first retry)
    of ``max_attempts`` (maxRetries + 1); ``reason`` is the error, in words. The panel counts it down."""

    kind: ClassVar[str] = "retry"
    attempt: int
    max_attempts: int
    delay_seconds: float
    reason: str


@dataclass(frozen=True)
class Failed:
    """The turn failed; no ``done`` follows. ``needs_setup``: no model endpoint is usable yet (no API key
    for a remote endpoint), so a client can offer its own setup instead of the settings ``error`` names."""

    kind: ClassVar[str] = "error"
    error: str
    needs_setup: bool | None = None


@dataclass(frozen=True)
class Done:
    """The turn ended (also after a cancel); the turn's token counts and cost (None when unknown), and
    what came of it as Shiro saw it (``agent/outcome.py``): the files it changed, and ``changed``,
    ``unchanged`` (asked to change files, it changed none) or ``answered``."""

    kind: ClassVar[str] = "done"
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    changed_files: list[str] | None = None
    outcome: TurnOutcomeKind | None = None


Event = (
    Text
    | Reasoning
    | ToolStart
    | ToolCall
    | ToolOutput
    | ToolResult
    | ToolFailed
    | ToolDenied
    | ToolApproval
    | Compacted
    | Notice
    | Retry
    | Failed
    | Done
)
Emit = Callable[[Event], None]

EVENT_TYPES: tuple[type[Event], ...] = (
    Text,
    Reasoning,
    ToolStart,
    ToolCall,
    ToolOutput,
    ToolResult,
    ToolFailed,
    ToolDenied,
    ToolApproval,
    Compacted,
    Notice,
    Retry,
    Failed,
    Done,
)

Delta = Text | Reasoning | ToolOutput
"""The events a front end may join with the next one of the same stream (see :func:`joined`)."""


def event_json(event: Event) -> dict[str, Any]:
    """The wire form: ``type`` first, then the fields in camelCase; an optional field (default
    ``None``) that is ``None`` is left out; a row (a wire model) is its own wire form."""
    out: dict[str, Any] = {"type": event.kind}
    for name, camel, optional in _wire_fields(event.kind, event):
        value = getattr(event, name)
        if value is None and optional:
            continue
        out[camel] = _wire(value)
    return out


def _wire_fields(kind: str, event: Event) -> tuple[tuple[str, str, bool], ...]:
    """Each field's name, wire name and whether it is optional (default ``None``): worked out once
    per event type (``kind``), not on every event of a turn."""
    known = _WIRE_FIELDS.get(kind)
    if known is None:
        known = _WIRE_FIELDS[kind] = tuple(
            (f.name, to_camel(f.name), f.default is None) for f in fields(event)
        )
    return known


_WIRE_FIELDS: dict[str, tuple[tuple[str, str, bool], ...]] = {}


def _wire(value: Any) -> Any:
    if isinstance(value, list) and value and isinstance(value[0], BaseModel):
        return [each.model_dump(mode="json", by_alias=True) for each in value]
    return value


def same_stream(a: Event, b: Event) -> bool:
    """Two deltas of the same text, reasoning or tool output (so they can be joined)."""
    return type(a) is type(b) and getattr(a, "id", None) == getattr(b, "id", None)


def joined(a: Delta, b: Delta) -> Delta:
    """``a`` followed by ``b`` (same stream) as one delta."""
    if isinstance(a, ToolOutput) and isinstance(b, ToolOutput):
        return replace(a, chunk=a.chunk + b.chunk)
    if isinstance(a, Text | Reasoning) and isinstance(b, Text | Reasoning):
        return replace(a, text=a.text + b.text)
    raise ValueError(f"cannot join {a.kind} and {b.kind}")
