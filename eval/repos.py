"""Tasks in real public repositories (filled in the next slice)."""

from __future__ import annotations

from eval.taskset import Task


def load() -> list[Task]:
    return []
