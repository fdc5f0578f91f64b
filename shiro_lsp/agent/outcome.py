"""The outcome of a turn, as Shiro saw it: which files changed, and whether that is what the turn was for.

A small model asked to fix something printed the file unchanged and ended "After making this change,
the script should work correctly"; the panel never said that no file changed. So every turn ends with
Shiro's own account (``TurnOutcome``): the files the turn changed on disk, and, when the turn was
asked to change files and none changed, or the reply claims a change to a file the turn did not
change, a notice that says so and what Shiro tried. The ``done`` event carries the same facts
(``changedFiles``, ``outcome``), for the panel and for headless ``--json``.

When a turn counts as asked to change files (the rule, general on purpose: never a task's wording):
the agent could write this turn (a file tool was offered, or is read from what the model writes),
and the turn itself showed an intent to change them: the model made a file tool call (a native call,
or one Shiro read from its text, whether it ran or not), or its reply claims a change in words
(``claims_a_change``: "I have updated …", "… has been fixed", "after making this change", "here is the
corrected code"). A question answered in words is neither, so it gets no notice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shiro_lsp.agent import events as ev
from shiro_lsp.checkpoints.rows import ChangedFile
from shiro_lsp.tools.edits import PLANNERS
from shiro_lsp.tools.shell import exit_status

Outcome = ev.TurnOutcomeKind
"""``changed``: the turn changed files; ``unchanged``: it was asked to and changed none; ``answered``:
it was not asked to change files, and did not."""

NOTHING_CHANGED = "No file was changed in this turn."
CLAIM_NOTHING = "The answer says the code was changed, but no file was changed in this turn."
CLAIM_UNMATCHED = "The answer says {claimed} changed, but this turn changed only {changed}."

_CHANGE_VERBS = (
    r"updated|changed|fixed|modified|added|corrected|edited|rewritten|rewrote|replaced|removed|renamed|"
    r"created|implemented|refactored|adjusted"
)
_CLAIM = re.compile(
    rf"\b(?:I|we)(?:'ve| have)?\s+(?:now\s+|also\s+|just\s+)?(?:{_CHANGE_VERBS})\b"
    rf"|\b(?:has|have)\s+(?:now\s+)?been\s+(?:{_CHANGE_VERBS})\b"
    r"|\bafter (?:making|applying) (?:this|these|the|that|those) (?:changes?|fix(?:es)?)\b"
    r"|\bhere(?:'s| is| are) the (?:corrected|updated|fixed|modified|revised|new) (?:code|version|files?)\b",
    re.I,
)
_PATH = re.compile(r"(?<![\w/.-])[\w./-]*\w\.[A-Za-z][A-Za-z0-9]{0,7}\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def claims_a_change(text: str) -> bool:
    """The reply says, in words, that code or files were changed."""
    return bool(_CLAIM.search(text))


def claimed_files(text: str) -> list[str]:
    """The paths named in the sentences of ``text`` that claim a change (code blocks aside)."""
    prose = re.sub(r"```.*?(?:```|$)", " ", text, flags=re.S)
    found: dict[str, None] = {}
    for sentence in _SENTENCE.split(prose):
        if claims_a_change(sentence):
            for match in _PATH.finditer(sentence):
                found.setdefault(match.group(0).strip("`'\"").lstrip("./"), None)
    return list(found)


@dataclass(frozen=True)
class TurnOutcome:
    outcome: Outcome
    changed_files: list[str]
    notice: str | None
    """What the panel says at the end of the turn (None: nothing to add)."""


@dataclass
class OutcomeWatch:
    """Follows one turn's events (``see``) and says at its end what came of it (``outcome``)."""

    changed: dict[str, None] = field(default_factory=dict)
    """The files the turn changed (the rows its calls' results carry), first change first."""
    file_calls: dict[str, tuple[str, str]] = field(default_factory=dict)
    """The file tool calls the model made (natively or in its text) still without a result: id -> (tool, path)."""
    attempts: list[str] = field(default_factory=list)
    """What came of the model's file calls that changed nothing, in words."""
    refused: int = 0
    """Of those, the calls refused (by the user or the rules): the user knows of them already."""
    written: list[str] = field(default_factory=list)
    """The paths of the model's file calls that succeeded (what changed, when no checkpoint records it)."""
    calls_made: int = 0
    tried: list[str] = field(default_factory=list)
    """What Shiro ran on its own, in words ("ran `make` (exit 1)")."""
    own_runs: dict[str, str] = field(default_factory=dict)
    reply: str = ""
    """The text of the last reply (what came after the last tool call)."""
    replies: str = ""

    def see(self, event: ev.Event) -> None:
        match event:
            case ev.Text(text=text):
                self.reply += text
                self.replies += text
            case ev.ToolCall(id=call_id, name=name, input=given, origin=origin):
                self.reply = ""
                if origin == "shiro":
                    command = given.get("command") if isinstance(given, dict) else None
                    self.own_runs[call_id] = str(command or name)
                elif name in PLANNERS:
                    path = given.get("path") if isinstance(given, dict) else None
                    self.file_calls[call_id] = (name, str(path or "a file"))
                    self.calls_made += 1
            case ev.ToolResult(id=call_id, output=output, files=files):
                self._changed(files)
                self._settled(call_id, "changed nothing" if not files else None)
                self._ran(call_id, output)
            case ev.ToolFailed(id=call_id, error=error, files=files):
                self._changed(files)
                self._settled(call_id, "failed")
                self._ran(call_id, error)
            case ev.ToolDenied(id=call_id):
                self._settled(call_id, "was refused")
                self.own_runs.pop(call_id, None)
            case _:
                pass

    def _changed(self, files: list[ChangedFile] | None) -> None:
        for row in files or []:
            self.changed.setdefault(row.path, None)

    def _settled(self, call_id: str, what: str | None) -> None:
        """A file call's result: ``what`` came of it when it changed nothing (None: it changed files)."""
        call = self.file_calls.pop(call_id, None)
        if call is None:
            return
        name, path = call
        if what == "changed nothing":
            self.written.append(path)
        if what is not None:
            self.attempts.append(f"the model's {name} of {path} {what}")
            self.refused += what == "was refused"

    def _ran(self, call_id: str, output: str) -> None:
        command = self.own_runs.pop(call_id, None)
        if command is not None:
            status = exit_status(output)
            said = f" (exit {status})" if status not in (None, "None") else ""
            self.tried.append(f"ran `{command}`{said}")

    def outcome(self, *, can_write: bool, sent_back: int, recorded: bool = True) -> TurnOutcome:
        """What came of the turn. ``can_write``: the agent could change files this turn; ``sent_back``:
        the times Shiro sent the model back to finish; ``recorded``: a checkpoint recorded what each call
        changed (else a file call that ran counts as a change)."""
        changed = list(self.changed) if recorded else list(dict.fromkeys([*self.changed, *self.written]))
        asked = can_write and (self.calls_made > 0 or claims_a_change(self.replies))
        if changed:
            return TurnOutcome("changed", changed, self._unmatched_claim(changed))
        if not asked:
            return TurnOutcome("answered", [], None)
        claims = claims_a_change(self.reply)
        if not claims and self.refused == len(self.attempts) == self.calls_made:
            return TurnOutcome("unchanged", [], None)  # every file call was refused: the card said so
        said = [CLAIM_NOTHING if claims else NOTHING_CHANGED]
        attempts = list(dict.fromkeys(self.attempts))
        if attempts:
            said.append(_sentence(_listed(attempts)))
        done = list(self.tried)
        if sent_back:
            done.append(f"sent the model back {_times(sent_back)} to finish its work")
        if done:
            said.append(f"Shiro {_listed(done)}.")
        return TurnOutcome("unchanged", [], " ".join(said))

    def _unmatched_claim(self, changed: list[str]) -> str | None:
        """The final reply names, as changed, files this turn did not change."""
        names = {path.rsplit("/", 1)[-1] for path in changed}
        missing = [
            p for p in claimed_files(self.reply) if p not in changed and p.rsplit("/", 1)[-1] not in names
        ]
        if not missing:
            return None
        claimed = _listed(missing) + (" was" if len(missing) == 1 else " were")
        return CLAIM_UNMATCHED.format(claimed=claimed, changed=_listed(changed))


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


def _times(count: int) -> str:
    return "once" if count == 1 else "twice" if count == 2 else f"{count} times"


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
