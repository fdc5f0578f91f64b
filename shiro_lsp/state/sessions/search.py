"""Full-text search over session messages: the ``session_text`` FTS5 table of ``shiro.db``.

One FTS row per message (user and assistant text; tool calls, tool results and system text are
not indexed: they are mostly file contents and command output) plus one for a title the user
gave. Rows are written lazily: a session's index row has ``text_indexed = 0`` until its text has
been indexed for the file it describes (every write of the row resets it), and a search first
indexes what is pending, one session per transaction, so an interrupted backfill loses nothing
and resumes where it stopped. Everything here blocks: call it from a thread.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from shiro_lsp.messages import Message
from shiro_lsp.state import db
from shiro_lsp.state.sessions.index import COLUMNS, SessionSummary
from shiro_lsp.state.sessions.record import SessionRecord

TITLE_POSITION = -1
SNIPPET_TOKENS = 14
MAX_QUERY_WORDS = 12
WORD = re.compile(r"\w+")
SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class SearchHit:
    summary: SessionSummary
    snippet: str


def message_text(message: Message) -> str:
    """The searchable text of one message: user and assistant text, nothing else."""
    if message.get("role") not in ("user", "assistant"):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [
        part["text"]
        for part in content
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
    ]
    return "\n".join(texts)


def text_rows(record: SessionRecord) -> list[tuple[str, str, int]]:
    """(body, session id, position) rows for ``session_text``."""
    rows = [
        (text, record.id, position)
        for position, message in enumerate(record.messages)
        if (text := message_text(message)).strip()
    ]
    if record.custom_title:
        rows.append((record.custom_title, record.id, TITLE_POSITION))
    return rows


def match_expression(query: str) -> str | None:
    """The FTS5 query for what a person typed: every word, each as a prefix (type-ahead).

    Words are quoted, so FTS5 syntax (AND, NEAR, ``*``, quotes, column filters) typed by the user
    is searched for as text, never interpreted. None when the query has no word to search for.
    """
    words = WORD.findall(query)[:MAX_QUERY_WORDS]
    if not words:
        return None
    return " ".join(f'"{word}"*' for word in words)


def replace_text(
    connection: sqlite3.Connection, session_id: str, rows: Iterable[tuple[str, str, int]]
) -> None:
    """Inside the caller's transaction: this session's FTS rows become ``rows``."""
    connection.execute("DELETE FROM session_text WHERE session_id = ?", (session_id,))
    connection.executemany("INSERT INTO session_text (body, session_id, position) VALUES (?, ?, ?)", rows)


def forget_text(connection: sqlite3.Connection, session_ids: Iterable[str]) -> None:
    """Inside the caller's transaction: drop the FTS rows of deleted sessions."""
    connection.executemany("DELETE FROM session_text WHERE session_id = ?", [(s,) for s in session_ids])


def pending(connection: sqlite3.Connection) -> list[tuple[str, int, int]]:
    """(id, file mtime, file size) of every indexed session whose text is not indexed yet."""
    rows = connection.execute("SELECT id, file_mtime_ns, file_size FROM sessions WHERE text_indexed = 0")
    return [(row[0], row[1], row[2]) for row in rows]


def store_text(connection: sqlite3.Connection, record: SessionRecord, signature: tuple[int, int]) -> bool:
    """Index ``record`` read from a file with ``signature``; False (nothing written) when the index
    row meanwhile describes another version of the file (a newer save indexes that one)."""
    rows = text_rows(record)
    with db.transaction(connection):
        updated = connection.execute(
            "UPDATE sessions SET text_indexed = 1 WHERE id = ? AND file_mtime_ns = ? AND file_size = ?",
            (record.id, *signature),
        ).rowcount
        if not updated:
            return False
        replace_text(connection, record.id, rows)
    return True


def search(connection: sqlite3.Connection, query: str, *, cwd: str | None, limit: int) -> list[SearchHit]:
    """Sessions whose text matches, best first (BM25 of their best message), with its snippet."""
    expression = match_expression(query)
    if expression is None:
        return []
    where, args = ("AND s.cwd = ?", [cwd]) if cwd is not None else ("", [])
    columns = ", ".join(f"s.{c.strip()}" for c in COLUMNS.split(","))
    # MATERIALIZED: bm25() and snippet() only work in a query on the FTS table itself, not one
    # SQLite flattens into the join. A bare column next to min() comes from the row holding the minimum.
    sql = f"""WITH h AS MATERIALIZED (
            SELECT session_id, bm25(session_text) AS score,
                snippet(session_text, 0, '', '', '…', {SNIPPET_TOKENS}) AS snip
            FROM session_text WHERE session_text MATCH ?
        )
        SELECT {columns}, min(h.score) AS best, h.snip AS snip
        FROM h JOIN sessions AS s ON s.id = h.session_id
        WHERE 1 {where}
        GROUP BY s.id ORDER BY best, s.updated_at DESC LIMIT ?"""
    rows: list[Any] = connection.execute(sql, (expression, *args, limit)).fetchall()
    return [SearchHit(SessionSummary.from_row(row), SPACE.sub(" ", row["snip"]).strip()) for row in rows]
