"""The session file (spec §3.1): the record, its validation and its encoding, camelCase on disk.

Messages are treated as immutable once appended: the autosave snapshots the list (not the
dicts) on the event loop and encodes it in a thread. To change a message, ``replace`` the list.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeGuard, TypeVar

from shiro_lsp.clock import now_iso as now_iso  # the sessions package names it too
from shiro_lsp.errors import BadParams, ShiroError
from shiro_lsp.ids import new_id
from shiro_lsp.messages import Message, title_of
from shiro_lsp.state.todos import Todo, restore_todos

ID_PATTERN = re.compile(r"[0-9A-Za-z][0-9A-Za-z-]{0,127}")
ROLES = frozenset({"system", "user", "assistant", "tool"})


def new_session_id() -> str:
    return new_id()


class SessionFormatError(ShiroError):
    """A session file that is not a session record (bad JSON or a wrong schema)."""


def check_id(reference: str) -> str:
    """A session id or prefix as the user typed it; anything path-like is refused."""
    text = reference.strip()
    if not ID_PATTERN.fullmatch(text):
        raise BadParams(f'"{reference}" is not a session id (ids are letters, digits and dashes).')
    return text


SUMMARY_PREFIX = "Summary of the session so far:\n\n"
"""Begins the summary the model reads after a compaction; an older file that begins with it was
compacted when /compact still replaced the history, and is read as a compaction at 0."""


@dataclass(frozen=True)
class Compaction:
    """A compaction point: the model sees ``summary`` in place of ``messages[:at]`` (which are kept)."""

    at: int
    summary: str
    created_at: str
    auto: bool = False
    """Made because the history no longer fit the threshold (not by /compact)."""
    digest_reason: str | None = None
    """Set when ``summary`` is Shiro's digest, not the model's: why the model's summary was refused."""
    undone_at: int | None = None
    """An undone compaction: the messages the transcript held when the user undid it."""
    restored: int = 0
    """An undone compaction: the messages the model saw again in place of the summary."""

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"at": self.at, "summary": self.summary, "createdAt": self.created_at}
        if self.auto:
            value["auto"] = True
        if self.digest_reason is not None:
            value["digestReason"] = self.digest_reason
        if self.undone_at is not None:
            value["undoneAt"] = self.undone_at
            value["restored"] = self.restored
        return value

    @classmethod
    def from_json(cls, value: Any, count: int) -> Compaction:
        if not isinstance(value, dict):
            raise SessionFormatError('"compactions" must hold objects')
        at, summary = value.get("at"), value.get("summary")
        if isinstance(at, bool) or not isinstance(at, int) or not 0 <= at <= count:
            raise SessionFormatError('a compaction\'s "at" must be a message index')
        if not isinstance(summary, str):
            raise SessionFormatError('a compaction\'s "summary" must be text')
        reason = value.get("digestReason")
        return cls(
            at,
            summary,
            _text(value, "createdAt", default=""),
            value.get("auto") is True,
            reason if isinstance(reason, str) else None,
        )

    @classmethod
    def undone_from_json(cls, value: Any, count: int) -> Compaction | None:
        """An undone compaction (``undoneCompactions``); one that does not fit this history is None."""
        try:
            compaction = cls.from_json(value, count)
        except SessionFormatError:
            return None
        undone_at, restored = value.get("undoneAt"), value.get("restored")
        if not _index(undone_at, count) or undone_at < compaction.at:
            return None
        return replace(compaction, undone_at=undone_at, restored=restored if _index(restored, 10**9) else 0)


StopReason = Literal["done", "cancelled", "error"]
STOP_REASONS: frozenset[str] = frozenset({"done", "cancelled", "error"})


@dataclass(frozen=True)
class TurnMark:
    """A turn as the panel showed it: its prompt is ``messages[at]``; it ended with ``end`` messages
    (None while it runs, or when the process died first) and ``stop_reason``."""

    task_id: str
    at: int
    end: int | None = None
    stop_reason: StopReason | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"taskId": self.task_id, "at": self.at, "end": self.end}
        if self.stop_reason is not None:
            value["stopReason"] = self.stop_reason
        if self.error is not None:
            value["error"] = self.error
        return value

    @classmethod
    def from_json(cls, value: Any, count: int) -> TurnMark | None:
        """None for an entry that is not a turn of this history (a file edited by hand): it is dropped."""
        if not isinstance(value, dict) or not isinstance(value.get("taskId"), str):
            return None
        at, end, stop, error = value.get("at"), value.get("end"), value.get("stopReason"), value.get("error")
        if not _index(at, count):
            return None
        if end is not None and not _index(end, count):
            return None
        return cls(
            value["taskId"],
            at,
            end,
            stop if stop in STOP_REASONS else None,
            error if isinstance(error, str) else None,
        )


@dataclass(frozen=True)
class EventMark:
    """An event of a turn the panel showed besides the messages (a notice, an approval, a denial, an
    error, a tool call's diff), in its wire form, shown after ``messages[:at]``."""

    at: int
    task_id: str
    event: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "taskId": self.task_id, "event": self.event}

    @classmethod
    def from_json(cls, value: Any, count: int) -> EventMark | None:
        if not isinstance(value, dict) or not _index(value.get("at"), count):
            return None
        task_id, event = value.get("taskId"), value.get("event")
        if (
            not isinstance(task_id, str)
            or not isinstance(event, dict)
            or not isinstance(event.get("type"), str)
        ):
            return None
        return cls(value["at"], task_id, event)


def _index(value: Any, count: int) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= count


@dataclass(frozen=True)
class SessionRecord:
    id: str
    created_at: str
    updated_at: str
    cwd: str
    provider: str
    model: str
    title: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    cached_input_tokens: int = 0
    """Of ``input_tokens``, those the provider served from its prompt cache."""
    todos: list[Todo] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    # A title the user gave (`shiro/session/rename`); None = the first prompt (``title_of``).
    custom_title: str | None = None
    compactions: list[Compaction] = field(default_factory=list)
    """Oldest first; the model's view is the last one's summary plus the messages after it."""
    undone_compactions: list[Compaction] = field(default_factory=list)
    """Compactions the user undid, oldest first (a resumed transcript shows their dividers)."""
    turns: list[TurnMark] = field(default_factory=list)
    """Each turn's task id, where it began and how it ended (older files: none)."""
    events: list[EventMark] = field(default_factory=list)
    """What the panel showed of the turns besides the messages, in order (older files: none)."""

    def header_json(self) -> dict[str, Any]:
        """Every field but ``messages``, in the reference's key order."""
        value: dict[str, Any] = {
            "id": self.id,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "cwd": self.cwd,
            "provider": self.provider,
            "model": self.model,
            "title": self.title,
            **({"customTitle": self.custom_title} if self.custom_title is not None else {}),
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
        }
        if self.cost_usd is not None:
            value["costUsd"] = self.cost_usd
        if self.cached_input_tokens:
            value["cachedInputTokens"] = self.cached_input_tokens
        value["notebook"] = {"todos": [t.to_json() for t in self.todos]}
        if self.compactions:
            value["compactions"] = [c.to_json() for c in self.compactions]
        if self.undone_compactions:
            value["undoneCompactions"] = [c.to_json() for c in self.undone_compactions]
        if self.turns:
            value["turns"] = [t.to_json() for t in self.turns]
        if self.events:
            value["events"] = [e.to_json() for e in self.events]
        return value

    def to_json(self) -> dict[str, Any]:
        return {**self.header_json(), "messages": list(self.messages)}

    def up_to(self, count: int) -> SessionRecord:
        """The first ``count`` messages, with the compactions, turns and events among them."""
        return replace(
            self,
            messages=self.messages[:count],
            compactions=[c for c in self.compactions if c.at <= count],
            undone_compactions=[
                c for c in self.undone_compactions if c.undone_at is not None and c.undone_at <= count
            ],
            turns=[
                t if t.end is None or t.end <= count else replace(t, end=count)
                for t in self.turns
                if t.at < count
            ],
            events=[e for e in self.events if e.at <= count],
        )

    @classmethod
    def from_json(cls, value: Any) -> SessionRecord:
        """Validate a parsed session file; a wrong schema raises ``SessionFormatError`` naming the field."""
        if not isinstance(value, dict):
            raise SessionFormatError("it does not hold a JSON object")
        messages = _messages_field(value)
        created_at = _text(value, "createdAt")
        compactions = _compactions_field(value, len(messages))
        if not compactions and _is_legacy_summary(messages):  # /compact before history was kept
            compactions = [Compaction(0, messages[0]["content"][len(SUMMARY_PREFIX) :], created_at)]
            messages = messages[1:]
            value = {k: v for k, v in value.items() if k != "title"}  # the summary is not the title
        notebook = value.get("notebook")
        if notebook is not None and not isinstance(notebook, dict):
            raise SessionFormatError('"notebook" must be an object with a "todos" list')
        custom_title = value.get("customTitle")
        if custom_title is not None and not isinstance(custom_title, str):
            raise SessionFormatError('"customTitle" must be text')
        return cls(
            id=_text(value, "id"),
            created_at=created_at,
            updated_at=_text(value, "updatedAt", default=created_at),
            cwd=_text(value, "cwd"),
            provider=_text(value, "provider", default=""),
            model=_text(value, "model", default=""),
            title=custom_title or _text(value, "title", default=title_of(messages)),
            input_tokens=_count(value, "inputTokens"),
            output_tokens=_count(value, "outputTokens"),
            cost_usd=_cost(value),
            cached_input_tokens=_count(value, "cachedInputTokens"),
            todos=restore_todos((notebook or {}).get("todos")),
            messages=messages,
            custom_title=custom_title or None,
            compactions=compactions,
            undone_compactions=_marks(value, "undoneCompactions", Compaction.undone_from_json, len(messages)),
            turns=_marks(value, "turns", TurnMark.from_json, len(messages)),
            events=_marks(value, "events", EventMark.from_json, len(messages)),
        )


M = TypeVar("M")


def _marks(value: dict[str, Any], key: str, read: Callable[[Any, int], M | None], count: int) -> list[M]:
    """A list of marks; an entry that does not fit this history is dropped (they only decorate it)."""
    found = value.get(key, [])
    if not isinstance(found, list):
        raise SessionFormatError(f'"{key}" must be a list')
    return [mark for mark in (read(item, count) for item in found) if mark is not None]


def _compactions_field(value: dict[str, Any], count: int) -> list[Compaction]:
    found = value.get("compactions", [])
    if not isinstance(found, list):
        raise SessionFormatError('"compactions" must be a list')
    return [Compaction.from_json(item, count) for item in found]


def _is_legacy_summary(messages: list[Message]) -> bool:
    first = messages[0] if messages else None
    return (
        first is not None
        and first.get("role") == "user"
        and isinstance(first.get("content"), str)
        and first["content"].startswith(SUMMARY_PREFIX)
    )


def _text(value: dict[str, Any], key: str, default: str | None = None) -> str:
    if key not in value and default is not None:
        return default
    found = value.get(key)
    if not isinstance(found, str):
        raise SessionFormatError(f'"{key}" must be text')
    return found


def _count(value: dict[str, Any], key: str) -> int:
    found = value.get(key, 0)
    if isinstance(found, bool) or not isinstance(found, int) or found < 0:
        raise SessionFormatError(f'"{key}" must be a whole number of tokens')
    return found


def _cost(value: dict[str, Any]) -> float | None:
    found = value.get("costUsd")
    if found is None:
        return None
    if isinstance(found, bool) or not isinstance(found, int | float):
        raise SessionFormatError('"costUsd" must be a number')
    return float(found)


def _messages_field(value: dict[str, Any]) -> list[Message]:
    messages = value.get("messages")
    if not isinstance(messages, list):
        raise SessionFormatError('"messages" must be a list')
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise SessionFormatError(
                f"messages[{index}] is not a message (it needs a role: system, user, assistant or tool)"
            )
    return messages


class MessageCache:
    """Each message's encoded JSON, by identity, so an autosave only encodes what is new.

    Sound because messages are never changed in place once appended (see the module docstring);
    the cached message itself is kept, so its ``id()`` cannot be reused while it is cached.
    Used by one writer at a time (the autosave's write lock).
    """

    def __init__(self) -> None:
        self._entries: dict[int, tuple[Message, bytes]] = {}

    def encode(self, message: Message, keep: dict[int, tuple[Message, bytes]]) -> bytes:
        key = id(message)
        found = self._entries.get(key)
        piece = found[1] if found is not None and found[0] is message else _encode_message(message)
        keep[key] = (message, piece)
        return piece

    def replace(self, entries: dict[int, tuple[Message, bytes]]) -> None:
        self._entries = entries


def encode_record(
    record: SessionRecord, cache: MessageCache | None = None, extra: dict[str, Any] | None = None
) -> Iterator[bytes]:
    """The file's bytes in pieces: a pretty header (plus ``extra`` keys), then one message per line.

    Encoding message by message lets a thread doing this give the event loop the GIL between
    pieces; one ``json.dumps`` of a 20 MB session would hold it for the whole C call.
    """
    header = json.dumps({**record.header_json(), **(extra or {})}, indent=2, ensure_ascii=False)
    if not record.messages:
        yield (header[:-2] + ',\n  "messages": []\n}\n').encode("utf-8")
        return
    yield (header[:-2] + ',\n  "messages": [\n    ').encode("utf-8")
    keep: dict[int, tuple[Message, bytes]] = {}
    last = len(record.messages) - 1
    for index, message in enumerate(record.messages):
        piece = cache.encode(message, keep) if cache is not None else _encode_message(message)
        yield piece
        yield b",\n    " if index < last else b"\n  ]\n}\n"
    if cache is not None:
        cache.replace(keep)


def _encode_message(message: Message) -> bytes:
    try:
        return json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the ASCII form escapes it, still valid JSON
        return json.dumps(message).encode("ascii")


def decode_record(data: bytes) -> SessionRecord:
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise SessionFormatError("it is not valid UTF-8") from None
    except json.JSONDecodeError as error:
        raise SessionFormatError(f"it is not valid JSON ({error.msg} at line {error.lineno})") from None
    return SessionRecord.from_json(value)
