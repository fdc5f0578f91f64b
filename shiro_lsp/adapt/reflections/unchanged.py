"""Replies whose files change nothing: a file shown as its own fix, a file written out exactly as it
is, a turn asked to change files that ends having tried no change, written-out files that change
nothing step after step, and a file refused for setting a secret.
"""

from __future__ import annotations

import re
from typing import Any

from shiro_lsp.adapt.prose import requests_a_change
from shiro_lsp.adapt.reflections.base import Action, EndTurn, Reflection, Reply, SendBack, TurnFacts
from shiro_lsp.adapt.reflections.replies import (
    FENCED,
    MAX_QUOTED_FILE,
    asks_the_user,
    code_blocks,
    file_lines,
    is_the_file,
    listed_file,
    named_paths,
)
from shiro_lsp.adapt.reflections.unfinished import unrun
from shiro_lsp.bounded import small_int
from shiro_lsp.errors import ToolError
from shiro_lsp.fs.jail import Roots, relative_posix, resolve_in_workspace
from shiro_lsp.messages import succeeded
from shiro_lsp.providers.wire import tool_output_text
from shiro_lsp.tools.files import SECRETS_HIDDEN, open_text

UNCHANGED_QUOTE = (
    "The code you showed is {path} as it already is: nothing was changed. Find the cause first, "
    "then change the file that holds it."
)
UNCHANGED_LISTING = (
    "{path} as you wrote it out is the file as it already is: nothing was changed. Write out the "
    "file with its change, or, if the workspace does not show what to change, say what you need to know."
)
UNCHANGED_BESIDE_THE_ERROR = (
    "{path} as you wrote it out is the file as it already is: nothing was changed. `{command}` fails "
    "in {file}, line {line}: `{code}`. Write out the file that must change, with its change."
)
WRITE_THE_FILE = (
    "Nothing was changed. Write out {path} now with its change: its path alone on one line, then its "
    "whole new content in a fenced code block. If no file needs a change, give your final answer."
)
IDLE_WRITES = (
    "Your files changed nothing, twice. Stop writing files out: tell the user in a few sentences what "
    "you could not do, and why."
)
IDLE_WRITES_NOTICE = (
    "The model's written-out files changed nothing {count} times in a row, so the turn was ended."
)
SECRET_WRITE_ANSWER = (
    "No file you write can do this. Reply to the user in one or two sentences, without a code block: "
    "say what you cannot do, and why."
)
MAX_IDLE_WRITE_STEPS = 2
"""Steps in a row whose written-out files all failed to change anything, before the model is told to
answer instead; one more ends the turn."""

_CLAIMS_FIX = re.compile(r"\b(?:corrected|fixed|updated|modified|changed|new) (?:version|code|file)\b", re.I)
_RAISED_AT = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)', re.M)


class UnchangedQuote(Reflection):
    """A reply that shows a file exactly as it is and calls it fixed is sent back: nothing changed."""

    name, group, exclusive, wants_a_change = "unchanged_quote", "unchanged", True, True

    def answer(self, reply: Reply, facts: TurnFacts) -> SendBack | None:
        if facts.changed or not _CLAIMS_FIX.search(reply.text):
            return None
        blocks = [set(block) for block in code_blocks(reply.text)]
        for path in named_paths(facts.words + "\n" + reply.text):
            lines = file_lines(facts.workspace, path)
            if lines is not None and any(is_the_file(block, lines) for block in blocks):
                return SendBack(UNCHANGED_QUOTE.format(path=path), "an unchanged file shown as a fix")
        return None


class UnchangedListing(Reflection):
    """A file written out exactly as it is, for a request that may ask for a change, is sent back to
    change it or say what is missing (told where a failing check raised its error, when known)."""

    name, group, exclusive, wants_a_change = "unchanged_listing", "unchanged", True, True

    def answer(self, reply: Reply, facts: TurnFacts) -> SendBack | None:
        if not facts.writes_out or facts.changed:
            return None
        path = unchanged_listing(reply.text, facts.workspace)
        if path is None:
            return None
        return SendBack(self._instruction(path, facts), "an unchanged file written out")

    def _instruction(self, path: str, facts: TurnFacts) -> str:
        command = facts.first or facts.check
        raised = raised_at(facts.check_output, facts.workspace)
        if command is None or raised is None:
            return UNCHANGED_LISTING.format(path=path)
        file, line, code = raised
        return UNCHANGED_BESIDE_THE_ERROR.format(
            path=path, command=command.shown, file=file, line=line, code=code
        )


class NothingWritten(Reflection):
    """A turn the user asked in words to change files, that would end having called no tool and asked
    the user nothing, is sent back once to make the change or say why it makes none."""

    name, group, wants_a_change, last_resort = "nothing_written", "unchanged", True, True

    def answer(self, reply: Reply, facts: TurnFacts) -> SendBack | None:
        if facts.used_tools or not requests_a_change(facts.words):
            return None  # a turn that used a tool acted on its own terms (a task list, a read)
        if asks_the_user(reply.text):  # what it needs to know: an answer, not work left undone
            return None
        named = next((p for p in named_paths(reply.text) if file_lines(facts.workspace, p) is not None), None)
        if named is None or not facts.writes_out:
            return SendBack(unrun(facts), "no file changed")
        # a small model sent back in general terms repeats its reply: the file it named first is
        # something to act on
        return SendBack(WRITE_THE_FILE.format(path=named), "no file changed")


class SecretWrite(Reflection):
    """A written-out file refused for setting a secret gets one instruction to say what cannot be
    done, and why."""

    name, group = "secret_write", "unchanged"

    def tools_ran(self, reply: Reply, results: list[dict[str, Any]], facts: TurnFacts) -> Action | None:
        if not reply.wrote_out or any(map(succeeded, results)):
            return None
        if not any(SECRETS_HIDDEN in tool_output_text(r) for r in results):
            return None
        return SendBack(SECRET_WRITE_ANSWER, "a secret it cannot set")


class IdleWrites(Reflection):
    """Written-out files that change nothing two steps running get an instruction to answer instead;
    a third such step ends the turn."""

    name, group, repeats = "idle_writes", "unchanged", True

    def __init__(self) -> None:
        self.streak = 0

    def tools_ran(self, reply: Reply, results: list[dict[str, Any]], facts: TurnFacts) -> Action | None:
        if not reply.wrote_out or any(map(succeeded, results)):
            self.streak = 0
            return None
        self.streak += 1
        if self.streak > MAX_IDLE_WRITE_STEPS:
            return EndTurn(IDLE_WRITES_NOTICE.format(count=self.streak))
        if self.streak == MAX_IDLE_WRITE_STEPS:
            return SendBack(IDLE_WRITES, "its files changed nothing")
        return None


def unchanged_listing(text: str, workspace: Roots) -> str | None:
    """The file a reply writes out (named alone on the line before the block) exactly as it is."""
    after_previous = 0
    for match in FENCED.finditer(text):
        path = listed_file(text[after_previous : match.start()])
        after_previous = match.end()
        if path is None:
            continue
        block = {line.strip() for line in match.group("body").splitlines() if line.strip()}
        lines = file_lines(workspace, path)
        if lines is not None and is_the_file(block, lines):
            return path
    return None


def raised_at(output: str, workspace: Roots) -> tuple[str, int, str] | None:
    """(file, line, code) of the last frame of a Python traceback in ``output`` that lies in the
    workspace: where the error was raised in the user's code. None when there is none."""
    for match in reversed(list(_RAISED_AT.finditer(output))):
        try:
            path = relative_posix(workspace, resolve_in_workspace(workspace, match.group("path")))
            with open_text(workspace, path) as f:
                lines = f.read(MAX_QUOTED_FILE).splitlines()
        except (ToolError, OSError):
            continue
        number = small_int(match.group("line")) or 0
        if 0 < number <= len(lines) and lines[number - 1].strip():
            return path, number, lines[number - 1].strip()
    return None
