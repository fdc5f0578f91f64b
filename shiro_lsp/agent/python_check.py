"""The check Aider runs after an edit, for the same reason: a Python file a small model wrote out that
does not compile, or uses a name it never defined or imported (``is_palindrome`` used in ``main.py``,
defined in ``textutils.py``), is sent back once with pyflakes' words, before the turn ends."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pyflakes import api, messages
from pyflakes.reporter import Reporter

MAX_PROBLEMS = 5
_NAMES = (messages.UndefinedName, messages.UndefinedExport)


class _Collector(Reporter):
    def __init__(self) -> None:
        self.problems: list[str] = []

    def unexpectedError(self, filename: str, msg: str) -> None:
        pass  # unreadable: not the model's mistake

    def syntaxError(self, filename: str, msg: str, lineno: int, offset: int | None, text: str | None) -> None:
        self.problems.append(f"{filename}:{lineno}: {msg}")

    def flake(self, message: messages.Message) -> None:
        if isinstance(message, _NAMES):
            self.problems.append(
                f"{message.filename}:{message.lineno}: {message.message % message.message_args}"
            )


def python_problems(workspace: Path, paths: Sequence[str]) -> list[str]:
    """Syntax errors and undefined names in the ``.py`` files among ``paths`` (relative to ``workspace``).
    Blocking: reads the files."""
    collector = _Collector()
    for rel in paths:
        if not rel.endswith(".py"):
            continue
        try:
            source = (workspace / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        api.check(source, rel, collector)
    return collector.problems[:MAX_PROBLEMS]


def fix_instruction(problems: Sequence[str]) -> str:
    return "\n".join(["The files you wrote have errors:", *problems, "Write the files out again, fixed."])
