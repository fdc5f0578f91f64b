"""``SessionStore``: session files plus the ``sessions`` table of ``shiro.db`` kept in step.

Listing never parses session files. Files the index does not know (copied in, written by an older
Shiro, or saved by a process that died before updating the index) are picked up by comparing the
directory against the index; a corrupt file is skipped, reported and left alone.
"""

from __future__ import annotations

import builtins
import contextlib
import logging
import os
import sqlite3
import stat
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from shiro_lsp.errors import BadParams, NotFound, ShiroError
from shiro_lsp.messages import title_of
from shiro_lsp.state import db
from shiro_lsp.state.jsonstore import Reporter, log_reporter
from shiro_lsp.state.paths import StatePaths
from shiro_lsp.state.sessions import search as text_search
from shiro_lsp.state.sessions.files import FileSignature, write_chunks_durable
from shiro_lsp.state.sessions.index import COLUMNS, UPSERT, SessionSummary, _row
from shiro_lsp.state.sessions.record import (
    ID_PATTERN,
    MessageCache,
    SessionFormatError,
    SessionRecord,
    check_id,
    decode_record,
    encode_record,
    now_iso,
)

log = logging.getLogger(__name__)

DEFAULT_LIST_LIMIT = 15
# A directory whose mtime is this recent may still change within the same timestamp tick, so the
# index does not trust it as "unchanged since the last scan" (the racy-git rule).
SETTLED_AFTER_NS = 2_000_000_000
DIR_SIGNATURE_KEY = "sessions_dir_signature"


class SessionStore:
    """Session files plus their index. Thread-safe; every method may block on I/O."""

    def __init__(self, paths: StatePaths, reporter: Reporter = log_reporter) -> None:
        self.dir = paths.sessions_dir
        self.database = paths.database
        self.reporter = reporter
        self._connections = db.PerThread(self._connect)
        self._scan_lock = threading.Lock()
        self._text_lock = threading.Lock()
        self._skipped: dict[str, FileSignature] = {}
        self._database_reported = False

    def path_of(self, session_id: str) -> Path:
        return self.dir / f"{check_id(session_id)}.json"

    # -- writing

    def save(
        self, record: SessionRecord, cache: MessageCache | None = None, *, touch: bool = True
    ) -> SessionRecord:
        """Write the record with ``updatedAt`` = now (kept as it is if not ``touch``); return what was written.

        ``cache`` (one per live session) skips re-encoding messages an earlier save encoded.
        """
        stamped = replace(
            record,
            updated_at=now_iso() if touch else record.updated_at,
            title=record.custom_title or title_of(record.messages),
        )
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
            text_search.forget_text(connection, [session_id])
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

    def search(
        self, query: str, *, cwd: str | None = None, limit: int = DEFAULT_LIST_LIMIT
    ) -> builtins.list[text_search.SearchHit]:
        """Sessions whose messages (or given title) contain every word of ``query``, best match first."""
        self.sync()
        self.index_pending_text()
        return text_search.search(self._db(), query, cwd=cwd, limit=limit)

    def index_pending_text(self) -> int:
        """Index the text of every session not indexed yet (after the migration, or changed since);
        one session per transaction. Returns how many were indexed."""
        done = 0
        with self._text_lock:
            connection = self._db()
            for session_id, *signature in text_search.pending(connection):
                found = self._read_record(session_id)
                if found is None:
                    continue
                record, read_signature = found
                if read_signature == tuple(signature) and text_search.store_text(
                    connection, record, read_signature
                ):
                    done += 1
        if done:
            log.info("session search: indexed the text of %d sessions", done)
        return done

    def _read_record(self, session_id: str) -> tuple[SessionRecord, FileSignature] | None:
        """The record and the signature of the file it was read from; None if unreadable or corrupt."""
        path = self.dir / f"{session_id}.json"
        try:
            with path.open("rb") as handle:
                info = os.fstat(handle.fileno())
                data = handle.read()
            record = decode_record(data)
        except (OSError, SessionFormatError):
            return None  # the listing scan reports corrupt files; gone or unreadable: try next time
        if record.id != session_id:
            return None
        return record, (info.st_mtime_ns, info.st_size)

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
            text_search.forget_text(connection, gone)
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
        """This thread's connection (``db.PerThread``: sqlite3 connections stay in the thread that made them)."""
        return self._connections.get()

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
