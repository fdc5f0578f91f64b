"""`shiro.db`: SQLite with a versioned schema (PRAGMA user_version) and a backup before each migration.

A migration is a list of SQL statements that take the database from version N-1 to N. Add new
ones at the end of ``MIGRATIONS``; never edit one that has shipped.

How a connection is opened (the one policy: nothing else in shiro_lsp calls ``sqlite3.connect``;
``_open`` is where it is done):
- **Timeout**: ``BUSY_TIMEOUT_S`` (30 s, also as ``PRAGMA busy_timeout``). Two servers (two VS Code
  windows, the MCP server) share the file; a writer waits for the other's transaction, never fails
  at once.
- **Isolation**: autocommit (``isolation_level=None``). The sqlite3 module never opens a
  transaction on its own; a write that must be all or nothing uses ``transaction()``
  (``BEGIN IMMEDIATE``: the write lock is taken up front, so two writers queue instead of one
  failing with "database is locked" at its first write).
- **WAL** journal: readers never block the writer nor the writer the readers. Foreign keys on; rows
  are ``sqlite3.Row``.
- **Migrated** on open (``connect``): a database from a newer Shiro is refused, untouched.
- **Per thread**: a connection is used only by the thread that opened it (sqlite3's rule). A store
  that lives as long as the server keeps one per thread (``PerThread``: the session index, whose
  methods run in ``asyncio.to_thread`` workers); short-lived users open and close one per call
  (``opened``, ``opened_for_reading``: task notes, one store per workspace and front door).
- **Reading when writing is impossible** (``connect_for_reading``): read-only, then immutable, then
  an empty in-memory database, so a read on a read-only or full disk still answers.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path

from shiro_lsp.errors import ShiroError

log = logging.getLogger(__name__)

# Version 1: the session index (issue 3). Version 2: task notes (issue 6). Version 3: session text search.
MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            cwd TEXT NOT NULL,
            title TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            message_count INTEGER NOT NULL,
            model TEXT NOT NULL,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL,
            file_mtime_ns INTEGER NOT NULL,
            file_size INTEGER NOT NULL
        )""",
        "CREATE INDEX sessions_by_cwd ON sessions (cwd, updated_at DESC)",
        "CREATE INDEX sessions_by_updated ON sessions (updated_at DESC)",
        # Small facts about the index itself, e.g. the sessions directory's signature at the last scan.
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ],
    # Version 2: tasks (one per chat turn), their native notes, branch archives, the notes audit log.
    [
        """CREATE TABLE tasks (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            workspace TEXT NOT NULL,
            prompt TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX tasks_by_session ON tasks (session_id, created_at)",
        """CREATE TABLE task_notes (
            task_id TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
            text TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        """CREATE TABLE branch_notes (
            session_id TEXT NOT NULL,
            source_session_id TEXT NOT NULL,
            task_id TEXT NOT NULL,
            prompt TEXT NOT NULL,
            created_at TEXT NOT NULL,
            text TEXT NOT NULL,
            position INTEGER NOT NULL,
            PRIMARY KEY (session_id, task_id)
        )""",
        """CREATE TABLE note_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,
            workspace TEXT NOT NULL,
            scope TEXT NOT NULL,
            task_id TEXT,
            action TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            hash TEXT NOT NULL,
            actor TEXT NOT NULL
        )""",
    ],
    # Version 3: full-text search over session messages (state/sessions/search.py). The migration only
    # adds empty tables: every session starts with text_indexed = 0 and its text is indexed lazily,
    # one session per transaction, the first time a search needs it (an interrupted backfill resumes).
    [
        "ALTER TABLE sessions ADD COLUMN text_indexed INTEGER NOT NULL DEFAULT 0",
        """CREATE VIRTUAL TABLE session_text USING fts5(
            body, session_id UNINDEXED, position UNINDEXED, tokenize = 'unicode61 remove_diacritics 2'
        )""",
    ],
]

SCHEMA_VERSION = len(MIGRATIONS)


BUSY_TIMEOUT_S = 30.0


def _open(target: Path | str, *, uri: bool = False) -> sqlite3.Connection:
    """Every connection Shiro opens: the busy timeout, autocommit, rows as ``sqlite3.Row``."""
    connection = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None, uri=uri)
    connection.row_factory = sqlite3.Row
    return connection


def connect(path: Path) -> sqlite3.Connection:
    """Open for reading and writing (creating and migrating as needed), for this thread only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = _open(path)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA foreign_keys=ON")
        connection.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        migrate(connection, path)
    except BaseException:
        connection.close()
        raise
    return connection


def opened(path: Path) -> closing[sqlite3.Connection]:
    """``connect`` for one call: closed when the block ends."""
    return closing(connect(path))


def opened_for_reading(path: Path) -> closing[sqlite3.Connection]:
    """``connect_for_reading`` for one call: closed when the block ends."""
    return closing(connect_for_reading(path))


class PerThread:
    """One connection per thread, opened by ``opener`` the first time a thread asks, then kept.

    For a store that lives as long as the server. The connections are never shared between
    threads; each closes when its thread ends and its connection is collected.
    """

    def __init__(self, opener: Callable[[], sqlite3.Connection]) -> None:
        self._opener = opener
        self._local = threading.local()

    def get(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._opener()
            self._local.connection = connection
        return connection


def connect_for_reading(path: Path) -> sqlite3.Connection:
    """For reads only: the database as usual if it opens; else opened read-only (a read-only or
    full disk); else an empty in-memory one (no database can exist there: nothing to read)."""
    try:
        return connect(path)
    except (OSError, sqlite3.Error, ShiroError) as error:
        log.info("%s cannot be opened for writing (%s); reading it read-only", path, error)
    try:
        if path.is_file():
            for mode in ("mode=ro", "immutable=1"):
                try:
                    connection = _open(f"{path.absolute().as_uri()}?{mode}", uri=True)
                    if schema_version(connection) >= SCHEMA_VERSION:
                        return connection
                    connection.close()
                except sqlite3.Error:
                    continue
    except OSError:
        pass
    return connect(Path(":memory:"))


def schema_version(connection: sqlite3.Connection) -> int:
    return int(connection.execute("PRAGMA user_version").fetchone()[0])


def migrate(connection: sqlite3.Connection, path: Path, target: int = SCHEMA_VERSION) -> None:
    current = schema_version(connection)
    if current > SCHEMA_VERSION:
        raise ShiroError(
            f"{path} was written by a newer Shiro (schema {current}, this one knows {SCHEMA_VERSION}). "
            "Update Shiro; the database was left untouched."
        )
    if current >= target:
        return
    with transaction(connection):
        current = schema_version(connection)  # another server may have migrated meanwhile
        if current >= target:
            return
        if current > 0:
            backup(connection, path, current)
        for version in range(current, target):
            for statement in MIGRATIONS[version]:
                connection.execute(statement)
        connection.execute(f"PRAGMA user_version = {target}")
    log.info("migrated %s from schema %d to %d", path, current, target)


def backup(connection: sqlite3.Connection, path: Path, version: int) -> Path:
    """Copy the committed database aside.

    ``connection`` holds the migration's write transaction, and SQLite refuses (SQLITE_LOCKED,
    which Python retries forever) to back up from a connection that is writing; a second
    connection still reads the committed, pre-migration state.
    """
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.v{version}-{stamp}.bak")
    source = _open(path)
    try:
        copy = _open(target)
        try:
            source.backup(copy)
        finally:
            copy.close()
    finally:
        source.close()
    return target


@contextmanager
def transaction(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT: one writer at a time across processes, all or nothing."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield connection
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
