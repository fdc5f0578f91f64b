"""What a tool call's result tells the model besides the tool's own output: the per-call hook of a
profile. The pipeline (``agent/tool_calls.py``) asks it three things and never which model it runs:
which offered tool does the work of one that was not offered, whether a call is refused before it
runs, and what to add to a result.

:class:`CallHints` adds nothing. :class:`SmallModelHints` is what a small model gets: the name of the
tool to use instead, a call that writes literal text into a file refused with how to write it out
(where the model writes files out), the diff of what a call changed, and a note when an in-place
edit changed nothing (exit 0 alone reads as success).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from shiro_lsp.adapt.formats.whole_file import WRITE_IT_OUT, writes_literal_file

CHANGES_CHARS = 1_500
NOTHING_EDITED = "\n(No file changed: the command's pattern matched nothing.)"
_IN_PLACE = re.compile(r"\b(?:sed|perl)\s+(?:-[\w]*\s+)*-[\w]*i")


class CallHints:
    """No hints: the tool's own output is the result."""

    def instead_of(self, tool: str) -> str | None:
        """The offered tool that does the work of ``tool``, which was not offered (None: none)."""
        return None

    def refusal(self, tool: str, input: Any) -> str | None:
        """Why the call is not run, before it runs (None: it runs)."""
        return None

    def result(self, tool: str, input: Any, output: str, diff: str | None, recorded: bool) -> str:
        """The result the model reads. ``diff``: what the call changed (redacted); ``recorded``: the
        call's changes were recorded (so an empty ``diff`` means it changed nothing)."""
        return output


class SmallModelHints(CallHints):
    def __init__(self, instead: Mapping[str, str], *, writes_out: bool) -> None:
        self._instead = instead
        self._writes_out = writes_out

    def instead_of(self, tool: str) -> str | None:
        return self._instead.get(tool)

    def refusal(self, tool: str, input: Any) -> str | None:
        return WRITE_IT_OUT if self._writes_out and writes_literal_file(tool, input) else None

    def result(self, tool: str, input: Any, output: str, diff: str | None, recorded: bool) -> str:
        # not after a whole file the model wrote out itself: it then copied the diff's lines into
        # its next write of the file
        if diff and not (self._writes_out and tool == "write_file"):
            return with_changes(output, diff)
        if not diff and recorded and edits_in_place(tool, input):
            return output + NOTHING_EDITED
        return output


def edits_in_place(tool: str, inputs: object) -> bool:
    """A bash call that edits files in place (``sed -i``, ``perl -pi``)."""
    command = inputs.get("command") if isinstance(inputs, dict) else None
    return tool == "bash" and isinstance(command, str) and bool(_IN_PLACE.search(command))


def with_changes(output: str, diff: str) -> str:
    """A tool result with the diff of what the call changed (bash included), cut at CHANGES_CHARS."""
    if len(diff) > CHANGES_CHARS:
        diff = diff[: diff.rfind("\n", 0, CHANGES_CHARS) + 1] + "(diff cut here)\n"
    return f"{output}\n\nWhat this changed:\n{diff.rstrip()}"
