"""Sessions (spec §3): one JSON file per session, a SQLite index, and the live session.

* ``SessionRecord`` is the file format of the reference (§3.1), camelCase on disk.
* ``SessionStore`` writes records atomically and keeps the ``sessions`` table of ``shiro.db`` in
  step, so listing never parses session files. Files the index does not know (copied in, written
  by an older Shiro, or saved by a process that died before updating the index) are picked up by
  comparing the directory against the index; a corrupt file is skipped, reported and left alone.
* ``LiveSession`` is what the turn engine mutates; every mutation calls ``on_change``.
* ``SessionManager`` owns the live session and its autosave: new, clear, resume, save, list,
  export, branch, delete.

Messages are treated as immutable once appended: the autosave snapshots the list (not the
dicts) on the event loop and encodes it in a thread. To change a message, ``replace`` the list.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import sqlite3
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import uuid6

from shiro_lsp.errors import BadParams, NotFound, ShiroError
from shiro_lsp.messages import Message, title_of
from shiro_lsp.state import db
from shiro_lsp.state.atomic import mark_in_use
from shiro_lsp.state.autosave import Autosave
from shiro_lsp.state.jsonstore import Reporter, log_reporter
from shiro_lsp.state.live_lock import LiveSessionLock
from shiro_lsp.state.paths import StatePaths
from shiro_lsp.state.todos import TaskList, Todo, restore_todos

log = logging.getLogger(__name__)

ID_PATTERN = re.compile(r"[0-9A-Za-z][0-9A-Za-z-]{0,127}")
ROLES = frozenset({"system", "user", "assistant", "tool"})
DEFAULT_LIST_LIMIT = 15
AUTOSAVE_DELAY_S = 0.4
# A directory whose mtime is this recent may still change within the same timestamp tick, so the
# index does not trust it as "unchanged since the last scan" (the racy-git rule).
SETTLED_AFTER_NS = 2_000_000_000
WRITE_BATCH_BYTES = 1 << 20
DIR_SIGNATURE_KEY = "sessions_dir_signature"

ExportFormat = Literal["json", "markdown"]


def now_iso() -> str:
    """``2026-11-30T09:06:13.123Z``, the format of JavaScript's ``toISOString`` (the reference)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_session_id() -> str:
    return str(uuid6.uuid7())


class SessionFormatError(ShiroError):
    """A session file that is not a session record (bad JSON or a wrong schema)."""


# --- the record ----------------------------------------------------------------------------------


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
    todos: list[Todo] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)

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
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
        }
        if self.cost_usd is not None:
            value["costUsd"] = self.cost_usd
        value["notebook"] = {"todos": [t.to_json() for t in self.todos]}
        return value

    def to_json(self) -> dict[str, Any]:
        return {**self.header_json(), "messages": list(self.messages)}

    @classmethod
    def from_json(cls, value: Any) -> SessionRecord:
        """Validate a parsed session file; a wrong schema raises ``SessionFormatError`` naming the field."""
        if not isinstance(value, dict):
            raise SessionFormatError("it does not hold a JSON object")
        messages = _messages_field(value)
        created_at = _text(value, "createdAt")
        notebook = value.get("notebook")
        if notebook is not None and not isinstance(notebook, dict):
            raise SessionFormatError('"notebook" must be an object with a "todos" list')
        return cls(
            id=_text(value, "id"),
            created_at=created_at,
            updated_at=_text(value, "updatedAt", default=created_at),
            cwd=_text(value, "cwd"),
            provider=_text(value, "provider", default=""),
            model=_text(value, "model", default=""),
            title=_text(value, "title", default=title_of(messages)),
            input_tokens=_count(value, "inputTokens"),
            output_tokens=_count(value, "outputTokens"),
            cost_usd=_cost(value),
            todos=restore_todos((notebook or {}).get("todos")),
            messages=messages,
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


# --- what the index knows ------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionSummary:
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

    @classmethod
    def of(cls, record: SessionRecord) -> SessionSummary:
        return cls(
            id=record.id,
            title=record.title,
            cwd=record.cwd,
            created_at=record.created_at,
            updated_at=record.updated_at,
            message_count=len(record.messages),
            model=record.model,
            input_tokens=record.input_tokens,
            output_tokens=record.output_tokens,
            cost_usd=record.cost_usd,
        )

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> SessionSummary:
        return cls(
            id=row["id"],
            title=row["title"],
            cwd=row["cwd"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            message_count=row["message_count"],
            model=row["model"],
            input_tokens=row["input_tokens"],
            output_tokens=row["output_tokens"],
            cost_usd=row["cost_usd"],
        )


FileSignature = tuple[int, int]  # (mtime_ns, size)

UPSERT = """INSERT OR REPLACE INTO sessions (id, cwd, title, created_at, updated_at, message_count, model,
    input_tokens, output_tokens, cost_usd, file_mtime_ns, file_size)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
COLUMNS = (
    "id, cwd, title, created_at, updated_at, message_count, model, input_tokens, output_tokens, cost_usd"
)


def _row(summary: SessionSummary, signature: FileSignature) -> tuple[Any, ...]:
    return (
        summary.id,
        summary.cwd,
        summary.title,
        summary.created_at,
        summary.updated_at,
        summary.message_count,
        summary.model,
        summary.input_tokens,
        summary.output_tokens,
        summary.cost_usd,
        *signature,
    )


def check_id(reference: str) -> str:
    """A session id or prefix as the user typed it; anything path-like is refused."""
    text = reference.strip()
    if not ID_PATTERN.fullmatch(text):
        raise BadParams(f'"{reference}" is not a session id (ids are letters, digits and dashes).')
    return text


def write_chunks_durable(path: Path, chunks: Iterable[bytes]) -> FileSignature:
    """Write atomically (temp file, fsync, rename, fsync dir); return the written file's (mtime, size).

    The signature comes from the file we wrote (fstat before the rename), so an index row never
    pairs our content with another writer's file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    mark_in_use(fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            batch: list[bytes] = []
            pending = 0
            for chunk in chunks:
                batch.append(chunk)
                pending += len(chunk)
                if pending >= WRITE_BATCH_BYTES:
                    handle.writelines(batch)
                    batch, pending = [], 0
            handle.writelines(batch)
            handle.flush()
            os.fsync(handle.fileno())
            written = os.fstat(handle.fileno())
            os.replace(tmp, path)  # still open: the cleanup at start sees a live writer
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return written.st_mtime_ns, written.st_size


# --- the store -----------------------------------------------------------------------------------


class SessionStore:
    """Session files plus their index. Thread-safe; every method may block on I/O."""

    def __init__(self, paths: StatePaths, reporter: Reporter = log_reporter) -> None:
        self.dir = paths.sessions_dir
        self.database = paths.database
        self.reporter = reporter
        self._local = threading.local()
        self._scan_lock = threading.Lock()
        self._skipped: dict[str, FileSignature] = {}
        self._database_reported = False

    def path_of(self, session_id: str) -> Path:
        return self.dir / f"{check_id(session_id)}.json"

    # -- writing

    def save(self, record: SessionRecord, cache: MessageCache | None = None) -> SessionRecord:
        """Write the record with ``updatedAt`` = now; return what was written.

        ``cache`` (one per live session) skips re-encoding messages an earlier save encoded.
        """
        stamped = replace(record, updated_at=now_iso(), title=title_of(record.messages))
        path = self.path_of(stamped.id)
        self._require_dir_usable()
        try:
            signature = write_chunks_durable(path, encode_record(stamped, cache))
        except OSError as error:
            raise ShiroError(
                f"Could not save session {stamped.id} to {path}: {error.strerror or error}. "
                "The session is still open; fix the problem and save again."
            ) from None
        self.index(SessionSummary.of(stamped), signature)
        return stamped

    def delete(self, session_id: str) -> bool:
        """Remove a session's file and index row (an explicit user action)."""
        path = self.path_of(session_id)
        try:
            path.unlink()
            removed = True
        except FileNotFoundError:
            removed = False
        except OSError as error:
            raise ShiroError(f"Could not delete {path}: {error.strerror or error}.") from None
        with db.transaction(self._db()) as connection:
            removed = (
                connection.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0 or removed
            )
        self._skipped.pop(session_id, None)
        return removed

    # -- reading

    def load(self, session_id: str) -> SessionRecord:
        path = self.path_of(session_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise NotFound(f'No session matching "{session_id}".') from None
        except OSError as error:
            raise ShiroError(f"Could not read {path}: {error.strerror or error}.") from None
        try:
            record = decode_record(data)
        except SessionFormatError as error:
            raise SessionFormatError(
                f"The session file {path} could not be used because {error.message}. It was left as it is."
            ) from None
        if record.id != session_id:
            raise SessionFormatError(
                f'The session file {path} holds the id "{record.id}", not "{session_id}". It was left as it is.'
            )
        return record

    def list(self, *, cwd: str | None = None, limit: int = DEFAULT_LIST_LIMIT) -> list[SessionSummary]:
        """Newest first (by ``updatedAt``), optionally only sessions started in ``cwd``."""
        self.sync()
        where, args = ("WHERE cwd = ?", [cwd]) if cwd is not None else ("", [])
        rows = self._db().execute(
            f"SELECT {COLUMNS} FROM sessions {where} ORDER BY updated_at DESC, id DESC LIMIT ?",
            (*args, limit),
        )
        return [SessionSummary.from_row(row) for row in rows]

    def summary(self, session_id: str) -> SessionSummary | None:
        row = self._db().execute(f"SELECT {COLUMNS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return SessionSummary.from_row(row) if row else None

    def latest(self, cwd: str) -> str | None:
        found = self.list(cwd=cwd, limit=1)
        return found[0].id if found else None

    def resolve(self, reference: str) -> str:
        """A full id, or a prefix matching exactly one saved session; otherwise a clear error."""
        prefix = check_id(reference)
        if self.path_of(prefix).is_file():
            return prefix
        self.sync()
        rows = (
            self._db()
            .execute(
                f"SELECT {COLUMNS} FROM sessions WHERE id GLOB ? ORDER BY updated_at DESC LIMIT 11",
                (prefix + "*",),
            )
            .fetchall()
        )
        if not rows:
            raise NotFound(f'No session matching "{reference}".')
        if len(rows) > 1:
            candidates = [SessionSummary.from_row(r) for r in rows[:10]]
            listed = "; ".join(f"{c.id} ({c.title})" for c in candidates)
            more = " and more" if len(rows) > 10 else ""
            raise BadParams(
                f'"{reference}" matches more than one session: {listed}{more}. Type more of the id.',
                data={"candidates": [c.id for c in candidates]},
            )
        return str(rows[0]["id"])

    # -- the index

    def sync(self) -> None:
        """Bring the index in step with the directory; cheap when the directory has not changed."""
        with self._scan_lock:
            connection = self._db()
            signature = self._dir_signature()
            stored = connection.execute(
                "SELECT value FROM meta WHERE key = ?", (DIR_SIGNATURE_KEY,)
            ).fetchone()
            if signature is not None and stored is not None and stored[0] == signature[0]:
                return
            self._scan(connection)
            settled = signature is not None and signature[1]
            with db.transaction(connection):
                connection.execute("DELETE FROM meta WHERE key = ?", (DIR_SIGNATURE_KEY,))
                if settled and signature is not None:
                    connection.execute(
                        "INSERT INTO meta (key, value) VALUES (?, ?)", (DIR_SIGNATURE_KEY, signature[0])
                    )

    def _dir_signature(self) -> tuple[str, bool] | None:
        """(inode:mtime, settled) of the sessions directory; None if it does not exist yet."""
        try:
            info = self.dir.stat()
        except (FileNotFoundError, NotADirectoryError):  # no folder (or a file above it): no sessions
            return None
        except OSError as error:
            raise self._dir_error(error.strerror or str(error)) from None
        if not stat.S_ISDIR(info.st_mode):
            raise self._dir_error("it is not a folder")
        settled = time.time_ns() - info.st_mtime_ns > SETTLED_AFTER_NS
        return f"{info.st_ino}:{info.st_mtime_ns}", settled

    def _require_dir_usable(self) -> None:
        self._dir_signature()

    def _dir_error(self, reason: str) -> ShiroError:
        return ShiroError(
            f"Shiro keeps sessions in {self.dir}, but {reason}. Nothing was changed there; "
            "move it aside or fix its permissions so sessions can be listed and saved."
        )

    def _scan(self, connection: sqlite3.Connection) -> None:
        on_disk = self._files_on_disk()
        indexed: dict[str, FileSignature] = {
            row[0]: (row[1], row[2])
            for row in connection.execute("SELECT id, file_mtime_ns, file_size FROM sessions")
        }
        gone = [session_id for session_id in indexed if session_id not in on_disk]
        changed = [
            session_id
            for session_id, signature in on_disk.items()
            if indexed.get(session_id) != signature and self._skipped.get(session_id) != signature
        ]
        rows = [row for row in (self._read_for_index(session_id) for session_id in changed) if row]
        with db.transaction(connection):
            connection.executemany("DELETE FROM sessions WHERE id = ?", [(g,) for g in gone])
            connection.executemany(UPSERT, rows)
        if gone or rows:
            log.info("session index: %d picked up or refreshed, %d removed", len(rows), len(gone))

    def _files_on_disk(self) -> dict[str, FileSignature]:
        found: dict[str, FileSignature] = {}
        try:
            entries = os.scandir(self.dir)
        except (FileNotFoundError, NotADirectoryError):
            return found
        except OSError as error:
            raise self._dir_error(error.strerror or str(error)) from None
        with entries:
            for entry in entries:
                name = entry.name
                if name.startswith(".") or not name.endswith(".json") or not ID_PATTERN.fullmatch(name[:-5]):
                    continue
                with contextlib.suppress(FileNotFoundError):
                    info = entry.stat()
                    if stat.S_ISREG(info.st_mode):
                        found[name[:-5]] = (info.st_mtime_ns, info.st_size)
        return found

    def _read_for_index(self, session_id: str) -> tuple[Any, ...] | None:
        path = self.dir / f"{session_id}.json"
        try:
            with path.open("rb") as handle:
                info = os.fstat(handle.fileno())
                data = handle.read()
        except OSError:
            return None  # gone or unreadable right now; the next scan looks again
        signature = (info.st_mtime_ns, info.st_size)
        try:
            record = decode_record(data)
            if record.id != session_id:
                raise SessionFormatError(f'it holds the id "{record.id}", which does not match its name')
        except SessionFormatError as error:
            self._skipped[session_id] = signature
            self.reporter(
                f"Skipped the session file {path} because {error.message}. It was left as it is; "
                "the other sessions are listed as usual."
            )
            return None
        self._skipped.pop(session_id, None)
        return _row(SessionSummary.of(record), signature)

    def index(self, summary: SessionSummary, signature: FileSignature) -> None:
        """Record a session file Shiro just wrote (``signature`` = its mtime and size)."""
        with db.transaction(self._db()) as connection:
            connection.execute(UPSERT, _row(summary, signature))
        self._skipped.pop(summary.id, None)

    def _db(self) -> sqlite3.Connection:
        """This thread's connection (sqlite3 connections stay in the thread that made them)."""
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._connect()
            self._local.connection = connection
        return connection

    def _connect(self) -> sqlite3.Connection:
        try:
            return db.connect(self.database)
        except (sqlite3.DatabaseError, ShiroError, OSError) as error:
            if not self._database_reported:
                self._database_reported = True
                reason = (
                    error.message
                    if isinstance(error, ShiroError)
                    else (error.strerror or str(error))
                    if isinstance(error, OSError)
                    else str(error)
                )
                self.reporter(
                    f"The session index {self.database} could not be opened ({reason}). It was left as it "
                    "is; sessions are listed from their files instead, which is slower."
                )
            return db.connect(Path(":memory:"))


# --- the live session ----------------------------------------------------------------------------


class LiveSession:
    """The session the turn engine works on. Every mutation calls ``on_change`` (the autosave).

    Change history only through ``append``/``replace`` and never edit a message dict (or its parts)
    after appending it: autosave encodes the snapshot in a thread and caches each message's JSON
    by identity. To change a message, build a new dict and ``replace`` the list.
    """

    def __init__(
        self,
        *,
        id: str,
        created_at: str,
        cwd: str,
        provider: str,
        model: str,
        messages: list[Message] | None = None,
        tasks: TaskList | None = None,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cost_usd: float | None = None,
        updated_at: str | None = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.id = id
        self.created_at = created_at
        self.updated_at = updated_at or created_at
        self.cwd = cwd
        self.provider = provider
        self.model = model
        self.messages: list[Message] = list(messages or [])
        self.tasks = tasks if tasks is not None else TaskList()
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.cost_usd = cost_usd
        self.on_change = on_change
        # `always` approval grants: per session, never saved; a new LiveSession starts with none.
        self.grants: set[str] = set()

    @classmethod
    def fresh(cls, *, cwd: str, provider: str, model: str) -> LiveSession:
        return cls(id=new_session_id(), created_at=now_iso(), cwd=cwd, provider=provider, model=model)

    @classmethod
    def from_record(cls, record: SessionRecord, *, provider: str, model: str) -> LiveSession:
        """Everything comes back from the file except the model, which is the one configured now (§3.4)."""
        return cls(
            id=record.id,
            created_at=record.created_at,
            updated_at=record.updated_at,
            cwd=record.cwd,
            provider=provider,
            model=model,
            messages=record.messages,
            tasks=TaskList(list(record.todos)),
            input_tokens=record.input_tokens,
            output_tokens=record.output_tokens,
            cost_usd=record.cost_usd,
        )

    @property
    def title(self) -> str:
        return title_of(self.messages)

    def changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def append(self, *messages: Message) -> None:
        self.messages.extend(messages)
        self.changed()

    def replace(self, messages: list[Message]) -> None:
        self.messages = list(messages)
        self.changed()

    def add_usage(self, input_tokens: int, output_tokens: int, cost_usd: float | None) -> None:
        """Add one model run's usage; ``cost_usd`` None means that run's model is unpriced."""
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        if cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost_usd
        self.changed()

    def set_todos(self, todos: list[Todo]) -> str:
        reply = self.tasks.replace(todos)
        self.changed()
        return reply

    def to_record(self) -> SessionRecord:
        """A snapshot (copies the message list, not the messages): cheap enough for the event loop."""
        return SessionRecord(
            id=self.id,
            created_at=self.created_at,
            updated_at=self.updated_at,
            cwd=self.cwd,
            provider=self.provider,
            model=self.model,
            title=self.title,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cost_usd=self.cost_usd,
            todos=list(self.tasks.todos),
            messages=list(self.messages),
        )

    def summary(self) -> SessionSummary:
        return SessionSummary.of(self.to_record())


# --- the manager ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SaveOutcome:
    id: str
    saved: bool
    reason: str | None = None


@dataclass(frozen=True)
class NewOutcome:
    session: SessionSummary
    previous: SessionSummary | None


EMPTY_REASON = "Nothing to save: this session has no messages yet."

SessionListener = Callable[[LiveSession], None]


class SessionManager:
    """The live session of one workspace and every session action. Async methods run on the loop."""

    def __init__(
        self,
        store: SessionStore,
        *,
        cwd: str,
        provider: str,
        model: Callable[[], str],
        reporter: Reporter = log_reporter,
        autosave_delay: float = AUTOSAVE_DELAY_S,
        live_lock: LiveSessionLock | None = None,
    ) -> None:
        self.store = store
        self.live_lock = live_lock
        self.cwd = cwd
        self.provider = provider
        self.model = model
        self.reporter = reporter
        self.autosave_delay = autosave_delay
        # Called on the loop after every save, new, resume and clear with the live session.
        self.on_changed: SessionListener | None = None
        self._switching = asyncio.Lock()
        self.current = self._attach(LiveSession.fresh(cwd=cwd, provider=provider, model=model()))

    def _hold(self, session_id: str) -> None:
        """Hold the live session's lock (live_lock.py): Conflict if another process works on it.

        Taken on resume and before a fresh session's first save (no other window can know it sooner),
        so a lock file exists only for sessions that exist on disk.
        """
        if self.live_lock is not None:
            self.live_lock.take(session_id)

    def _held_only(self, session_id: str) -> None:
        if self.live_lock is not None:
            self.live_lock.release_others(session_id)

    def _attach(self, session: LiveSession) -> LiveSession:
        cache = MessageCache()
        autosave: Autosave[SessionRecord] = Autosave(
            snapshot=lambda: session.to_record() if session.messages else None,
            write=lambda record: self._save_live(record, cache),
            on_saved=lambda saved: self._saved(session, saved),
            on_error=self._autosave_failed,
            delay=self.autosave_delay,
        )
        session.on_change = autosave.poke
        self._autosave = autosave
        return session

    def _save_live(self, record: SessionRecord, cache: MessageCache) -> SessionRecord:
        self._hold(record.id)
        return self.store.save(record, cache)

    def _saved(self, session: LiveSession, saved: SessionRecord) -> None:
        session.updated_at = saved.updated_at
        if session is self.current:
            self._notify()

    def _autosave_failed(self, error: Exception) -> None:
        message = error.message if isinstance(error, ShiroError) else f"{type(error).__name__}: {error}"
        self.reporter(f"Autosave failed: {message}")

    def _notify(self) -> None:
        if self.on_changed is not None:
            self.on_changed(self.current)

    def info(self) -> SessionSummary:
        return self.current.summary()

    # -- saving

    async def save(self) -> SaveOutcome:
        """`/save`: write now; an empty session is not written and the reason says so."""
        if not self.current.messages:
            return SaveOutcome(self.current.id, saved=False, reason=EMPTY_REASON)
        self._autosave.poke()
        await self._autosave.flush(raise_errors=True)
        return SaveOutcome(self.current.id, saved=True)

    async def flush(self) -> None:
        """Save pending changes now (shutdown); errors are reported, not raised."""
        await self._autosave.flush()

    def flush_sync(self) -> None:
        """The final save on `exit` or interpreter exit, when there may be no loop to wait on."""
        self._autosave.flush_sync()

    # -- switching sessions

    async def new(self) -> NewOutcome:
        """Save the live session if it has messages, then start a fresh one (new id, empty list)."""
        async with self._switching:
            previous = await self._close_current()
            fresh = LiveSession.fresh(cwd=self.cwd, provider=self.provider, model=self.model())
            self.current = self._attach(fresh)
            await asyncio.to_thread(self._held_only, fresh.id)
        self._notify()
        return NewOutcome(self.info(), previous)

    async def clear(self) -> NewOutcome:
        """`/clear` is `new`: the old session stays on disk under its id (the reference overwrote it)."""
        return await self.new()

    async def resume(self, reference: str | None = None, *, latest: bool = False) -> LiveSession:
        async with self._switching:
            session_id = await asyncio.to_thread(self._resolve_for_resume, reference, latest)
            await asyncio.to_thread(self._hold, session_id)  # another window's session: refused here
            try:
                await self._close_current()
                record = await asyncio.to_thread(self.store.load, session_id)
            except BaseException:
                if session_id != self.current.id and self.live_lock is not None:
                    await asyncio.to_thread(self.live_lock.release, session_id)
                raise
            self.current = self._attach(
                LiveSession.from_record(record, provider=self.provider, model=self.model())
            )
            await asyncio.to_thread(self._held_only, session_id)
        self._notify()
        return self.current

    def _resolve_for_resume(self, reference: str | None, latest: bool) -> str:
        if reference is not None:
            return self.store.resolve(reference)
        if not latest:
            raise BadParams("Say which session to resume: an id (or a unique prefix), or latest: true.")
        found = self.store.latest(self.cwd)
        if found is None:
            raise NotFound("No saved session for this workspace.")
        return found

    async def _close_current(self) -> SessionSummary | None:
        """Save the live session; refuse to switch away if that fails, so nothing is lost."""
        await self._autosave.flush(raise_errors=True)
        return self.current.summary() if self.current.messages else None

    # -- other sessions

    async def list(
        self, limit: int = DEFAULT_LIST_LIMIT, all_workspaces: bool = False
    ) -> list[SessionSummary]:
        cwd = None if all_workspaces else self.cwd
        return await asyncio.to_thread(self.store.list, cwd=cwd, limit=limit)

    async def record_of(self, reference: str | None) -> SessionRecord:
        """The live session's snapshot (no reference or its id), else the saved record."""
        if reference is None:
            return self.current.to_record()
        session_id = await asyncio.to_thread(self._resolve_or_live, reference)
        if session_id == self.current.id:
            return self.current.to_record()
        return await asyncio.to_thread(self.store.load, session_id)

    def _resolve_or_live(self, reference: str) -> str:
        """The live session may not be saved yet, so its id (or a prefix of it) resolves to it too."""
        live_id = self.current.id
        if not live_id.startswith(check_id(reference)):
            return self.store.resolve(reference)
        try:
            found = self.store.resolve(reference)
        except NotFound:
            return live_id
        if found != live_id:
            raise BadParams(
                f'"{reference}" matches more than one session: {live_id} (live) and {found}. '
                "Type more of the id.",
                data={"candidates": [live_id, found]},
            )
        return found

    async def export(self, reference: str | None, format: ExportFormat) -> str:
        record = await self.record_of(reference)
        return await asyncio.to_thread(export_text, record, format)

    async def branch(self, reference: str | None, at_message: int | None) -> SessionSummary:
        """A new saved session holding the history up to and including message ``at_message``."""
        source = await self.record_of(reference)
        if not source.messages:
            raise ShiroError("That session has no messages yet, so there is nothing to branch from.")
        last = len(source.messages) - 1
        if at_message is not None and at_message > last:
            raise BadParams(f"atMessage {at_message} is past the end: that session has messages 0 to {last}.")
        kept = source.messages[: (last if at_message is None else at_message) + 1]
        now = now_iso()
        branch = replace(
            source,
            id=new_session_id(),
            created_at=now,
            updated_at=now,
            input_tokens=0,
            output_tokens=0,
            cost_usd=None,
            todos=list(source.todos),
            messages=list(kept),
        )
        saved = await asyncio.to_thread(self.store.save, branch)
        return SessionSummary.of(saved)

    async def delete(self, reference: str) -> bool:
        session_id = await asyncio.to_thread(self.store.resolve, reference)
        if session_id == self.current.id:
            raise ShiroError("That is the live session. Start a new session first, then delete this one.")
        return await asyncio.to_thread(self.store.delete, session_id)


# --- Markdown export -----------------------------------------------------------------------------


def export_text(
    record: SessionRecord,
    format: ExportFormat,
    *,
    extra_json: dict[str, Any] | None = None,
    extra_markdown: str = "",
) -> str:
    """The export in one encoding pass (run it in a thread: a session can be tens of MB)."""
    if format == "json":
        return b"".join(encode_record(record, extra=extra_json)).decode("utf-8")
    text = export_markdown(record)
    return text if not extra_markdown else text.rstrip("\n") + "\n\n" + extra_markdown


def export_markdown(record: SessionRecord) -> str:
    lines = [f"# {record.title}", ""]
    lines += [
        f"- session: `{record.id}`",
        f"- workspace: `{record.cwd}`",
        f"- created: {record.created_at}, updated: {record.updated_at}",
        f"- model: `{record.model}`" + (f" ({record.provider})" if record.provider else ""),
        f"- tokens: {record.input_tokens} in / {record.output_tokens} out"
        + (f", ${record.cost_usd:.4f}" if record.cost_usd is not None else ""),
        f"- messages: {len(record.messages)}",
    ]
    if record.todos:
        lines += ["", "## Tasks", "", *(f"- {t.line}" for t in record.todos)]
    lines += ["", "## Transcript"]
    for message in record.messages:
        lines += ["", f"### {str(message.get('role', '?')).capitalize()}", ""]
        lines += _markdown_content(message.get("content"))
    return "\n".join(lines).rstrip() + "\n"


def _markdown_content(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return [_fenced(json.dumps(content, indent=2, ensure_ascii=False), "json")]
    out: list[str] = []
    for part in content:
        out += [*_markdown_part(part), ""]
    return out[:-1] if out else []


def _markdown_part(part: Any) -> list[str]:
    if not isinstance(part, dict):
        return [_fenced(json.dumps(part, ensure_ascii=False), "json")]
    kind = part.get("type")
    if kind == "text":
        return [str(part.get("text", ""))]
    if kind == "reasoning":
        return ["> " + line for line in str(part.get("text", "")).splitlines() or [""]]
    if kind == "tool-call":
        body = json.dumps(part.get("input"), indent=2, ensure_ascii=False)
        return [f"**Tool call** `{part.get('toolName')}`", "", _fenced(body, "json")]
    if kind == "tool-result":
        output = part.get("output")
        value = output.get("value") if isinstance(output, dict) else output
        body = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
        return [f"**Tool result** `{part.get('toolName')}`", "", _fenced(body, "")]
    if kind == "tool-error":
        return [f"**Tool error** `{part.get('toolName')}`", "", _fenced(str(part.get("error", "")), "")]
    if kind == "image":
        return ["*(image)*"]
    if kind == "file":
        return [f"*(file {part.get('filename') or part.get('mediaType') or ''})*".replace(" )", ")")]
    return [_fenced(json.dumps(part, indent=2, ensure_ascii=False), "json")]


def _fenced(text: str, language: str) -> str:
    """A code fence longer than any backtick run inside, so the text cannot close it early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"
