"""What the index knows about a session: its summary and its row in the ``sessions`` table."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from shiro_lsp.state.sessions.files import FileSignature
from shiro_lsp.state.sessions.record import SessionRecord


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
    cached_input_tokens: int | None = None
    """Known from the session itself (current, resume), not from the index (listings)."""

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
            cached_input_tokens=record.cached_input_tokens,
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
