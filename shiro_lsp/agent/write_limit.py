"""How many steps of one turn may write one file: a model that writes the same file again and again
(a small model rewrote a correct solution every step for 300 s, worse each time) is stopped at the
limit: further writes of that file are refused with a result that says so, and the user is told once.
The user's next message starts a new turn, and so a new count.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shiro_lsp.errors import ShiroError, ToolError
from shiro_lsp.fs.jail import Roots, locate

FILE_WRITERS = frozenset({"write_file", "edit_file", "multi_edit"})
REFUSED_OUTPUT = (
    "Not written: {path} was already changed in {count} steps of this turn, the most one turn may "
    "without the user's word. Do not change it again: tell the user what you changed and what is left."
)
REFUSED_NOTICE = (
    "Shiro refused a further change to {path}: the model had already changed it in {count} steps of "
    "this turn. Send another message to let it go on."
)


class WriteLimit:
    """The steps of a turn that wrote each file, against the limit (None: no limit)."""

    def __init__(self, workspace: Roots, limit: int | None) -> None:
        self.workspace = workspace
        self.limit = limit
        self._step = 0
        self._steps: dict[str, set[int]] = {}
        self._told: set[str] = set()

    def next_step(self) -> None:
        self._step += 1

    def refusal(self, tool: str, input: Mapping[str, Any]) -> tuple[str, str | None] | None:
        """Why this call may not run (its result, and the notice when it is the first said of the
        file), or None: it may."""
        key = file_key(self.workspace, tool, input)
        if key is None or self.limit is None:
            return None
        steps = self._steps.get(key, set())
        if self._step in steps or len(steps) < self.limit:
            return None
        path = str(input["path"])
        notice = None if key in self._told else REFUSED_NOTICE.format(path=path, count=len(steps))
        self._told.add(key)
        return REFUSED_OUTPUT.format(path=path, count=len(steps)), notice

    def wrote(self, tool: str, input: Mapping[str, Any]) -> None:
        key = file_key(self.workspace, tool, input)
        if key is not None:
            self._steps.setdefault(key, set()).add(self._step)


def file_key(workspace: Roots, tool: str, input: Mapping[str, Any]) -> str | None:
    """The file a call writes, one key however its path is spelled (None: the call writes no file)."""
    path = input.get("path")
    if tool not in FILE_WRITERS or not isinstance(path, str):
        return None
    try:
        return str(locate(workspace, path)[1])  # ./a.py, a.py and its absolute path are one
    except (ShiroError, ToolError, OSError, ValueError):
        return str(Path(path))
