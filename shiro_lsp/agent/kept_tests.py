"""Once the turn's check failed, the tests that were there before the turn are kept as they are: they
say what the code must do. Shown a failure, a small model rewrites the tests to agree with its code,
or writes the same test file out again every step. A write to such a file is refused with a result
that says to change the code instead, and the user is told once. A test file this turn changed
before the check failed (the work started there: the tests were what to change), and a new one, stay
writable. Naming a file says nothing of whether to change it ("the tests are in ..."), so a name does
not free it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shiro_lsp.adapt import is_test_path
from shiro_lsp.agent.write_limit import file_key
from shiro_lsp.fs.jail import Roots

REFUSED_OUTPUT = (
    "Not written: {path} holds the tests, which were there before this turn, and `{command}` failed. "
    "The tests say what the code must do: change the code so that they pass."
)
REFUSED_NOTICE = (
    "Shiro kept {path} as it was: after `{command}` failed, the model tried to change the tests "
    "instead of the code. If the tests are what is wrong, say so in a new message."
)


class KeptTests:
    """The test files a turn may no longer change, once its check failed (``on`` False: none)."""

    def __init__(self, workspace: Roots, *, on: bool) -> None:
        self.workspace = workspace
        self.on = on
        self._failed: str | None = None
        """The check command that failed, once one did."""
        self._written: set[str] = set()
        self._told: set[str] = set()

    def check_failed(self, command: str) -> None:
        """The turn's check ``command`` failed."""
        self._failed = command

    def keeps(self, path: str) -> bool:
        """Whether a write to ``path`` would be refused."""
        return self._kept_key("write_file", {"path": path}) is not None

    def refusal(self, tool: str, input: Mapping[str, Any]) -> tuple[str, str | None] | None:
        """Why this call may not run (its result, and the notice when it is the first said of the
        file), or None: it may."""
        key = self._kept_key(tool, input)
        command = self._failed
        if key is None or command is None:
            return None
        path = str(input["path"])
        notice = None if key in self._told else REFUSED_NOTICE.format(path=path, command=command)
        self._told.add(key)
        return REFUSED_OUTPUT.format(path=path, command=command), notice

    def _kept_key(self, tool: str, input: Mapping[str, Any]) -> str | None:
        """The key of the file the call writes, when the turn keeps it (else None). Blocking (a stat)."""
        key = file_key(self.workspace, tool, input)
        if not self.on or self._failed is None or key is None or key in self._written:
            return None
        return key if is_test_path(str(input["path"])) and Path(key).is_file() else None

    def wrote(self, tool: str, input: Mapping[str, Any]) -> None:
        key = file_key(self.workspace, tool, input)
        if key is not None:
            self._written.add(key)
