"""state/db.py is the one place a SQLite connection is opened, and it opens them all the same way."""

from __future__ import annotations

import re
import sqlite3
import threading
from pathlib import Path

import pytest

from shiro_lsp.state import db

PACKAGE = Path(db.__file__).resolve().parents[1]


def test_a_connection_is_wal_autocommit_with_foreign_keys_and_a_busy_timeout(tmp_path: Path) -> None:
    with db.opened(tmp_path / "deep" / "shiro.db") as connection:
        assert connection.isolation_level is None  # transactions only through db.transaction
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert connection.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert connection.execute("PRAGMA busy_timeout").fetchone()[0] == db.BUSY_TIMEOUT_S * 1000
        assert db.schema_version(connection) == db.SCHEMA_VERSION
        row = connection.execute("SELECT 1 AS one").fetchone()
        assert isinstance(row, sqlite3.Row) and row["one"] == 1
    with pytest.raises(sqlite3.ProgrammingError):  # opened() closed it
        connection.execute("SELECT 1")


def test_per_thread_keeps_one_connection_for_each_thread(tmp_path: Path) -> None:
    opened: list[sqlite3.Connection] = []

    def opener() -> sqlite3.Connection:
        connection = db.connect(tmp_path / "shiro.db")
        opened.append(connection)
        return connection

    connections = db.PerThread(opener)
    mine = connections.get()
    assert connections.get() is mine
    theirs: list[sqlite3.Connection] = []

    def in_a_worker() -> None:
        connection = connections.get()
        connection.execute("SELECT 1")  # usable in the thread that opened it
        theirs.append(connection)

    worker = threading.Thread(target=in_a_worker)
    worker.start()
    worker.join()
    assert len(opened) == 2 and theirs[0] is not mine and theirs[0] is opened[1]


def test_writes_commit_through_transaction_and_a_failure_rolls_back(tmp_path: Path) -> None:
    path = tmp_path / "shiro.db"
    with db.opened(path) as connection:
        with db.transaction(connection):
            connection.execute("INSERT INTO meta (key, value) VALUES ('a', '1')")
        with pytest.raises(RuntimeError), db.transaction(connection):
            connection.execute("INSERT INTO meta (key, value) VALUES ('b', '2')")
            raise RuntimeError("crash mid-write")
    with db.opened_for_reading(path) as reader:
        assert [tuple(row) for row in reader.execute("SELECT key, value FROM meta")] == [("a", "1")]


def test_nothing_else_in_shiro_lsp_opens_sqlite_itself() -> None:
    offenders = [
        str(source.relative_to(PACKAGE))
        for source in PACKAGE.rglob("*.py")
        if source != Path(db.__file__).resolve() and re.search(r"sqlite3\.connect\(", source.read_text())
    ]
    assert offenders == []
