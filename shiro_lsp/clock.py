"""The one clock format of Shiro's state: ISO-8601 UTC with milliseconds and Z."""

from __future__ import annotations

from datetime import UTC, datetime


def now_iso() -> str:
    """``2026-11-30T09:06:13.123Z``, the format of JavaScript's ``toISOString`` (the reference)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
