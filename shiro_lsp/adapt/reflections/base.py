"""One loop for every reflection of a turn, with one budget and one notice (Aider's reflected
message with ``max_reflections``).

A :class:`Reflection` looks at a reply at a fixed point of the turn and says what to do: send the
model back with an instruction (:class:`SendBack`), have Shiro run the check command
(:class:`RunCheck`), or end the turn (:class:`EndTurn`). The turn's :class:`Reflector` asks them in
order and holds what they share: the facts of the turn so far (:class:`TurnFacts`, fed by the loop
after every tool step), the budget (the profile's ``max_reflections``: every instruction sent back
counts, and a failed check the model is sent back to fix), and which reflections already spoke
(each sends back once a turn, unless it ``repeats``). A reflection that sends a reply back as work
left undone (``wants_a_change``) is asked only when the user's words may ask for a change
(``prose.asks_for_change``): a question, or a request to explain, is answered, not sent back. An
instruction is a user message appended to the history (marked, so the prompt prefix the server
cached stays byte-identical), and the user sees one notice: :data:`NOTICE`.

Every reflection's docstring starts with its rule, one line, stated for any task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from shiro_lsp.adapt.formats.echoes import Shown
from shiro_lsp.adapt.reflections.commands import CheckCommand
from shiro_lsp.adapt.reflections.replies import output_text
from shiro_lsp.fs.jail import Roots
from shiro_lsp.messages import Message, succeeded
from shiro_lsp.tools.edits import PLANNERS

NUDGE_MARK_KEY = "shiroNote"
NUDGE_MARK = "nudge"
NOTICE = "Shiro sent the model back ({why})."
CHECK_FAILED = "`{command}` failed; its output is above. Change the files so that it passes."


@dataclass(frozen=True)
class SendBack:
    instruction: str
    why: str
    """What the notice says, in a few words."""


@dataclass(frozen=True)
class RunCheck:
    command: CheckCommand
    notice: str


@dataclass(frozen=True)
class EndTurn:
    notice: str


Action = SendBack | RunCheck | EndTurn


class StreamWatch(Protocol):
    keep_until: int
    """Where the reply is cut (meaningful once :meth:`feed` said so)."""

    def feed(self, text: str) -> bool:
        """True: cut the reply now."""
        ...


class Watches:
    """The watches of the reflections over one streaming reply: the first that says cut, cuts."""

    def __init__(self, watches: Sequence[tuple[Reflection, StreamWatch]]) -> None:
        self._watches = list(watches)
        self.cut_by: Reflection | None = None
        self.keep_until = 0

    def feed(self, text: str) -> bool:
        for reflection, watch in self._watches:
            if watch.feed(text):
                self.cut_by, self.keep_until = reflection, watch.keep_until
                return True
        return False


@dataclass(frozen=True)
class Reply:
    """One model step as the reflections see it."""

    text: str
    made_calls: bool = False
    reads_text_calls: bool = True
    """Calls written as text are read this step: where they are not (a model that made a native
    call), a call-shaped reply is text, never something to send back for."""
    wrote_out: bool = False
    """The step's calls are files the reply wrote out."""


@dataclass
class TurnFacts:
    """What the reflections know of the turn, fed by the loop after every tool step."""

    words: str
    """What the user typed this turn (``user_words``)."""
    workspace: Roots
    tools: frozenset[str] = frozenset()
    """The tools offered this turn: a reply that names one as a call's name tried to call it."""
    can_run_commands: bool = False
    shows_tools: bool = True
    """False: the model is told of no tool, so Shiro runs the check itself."""
    writes_out: bool = False
    """The model writes files out in its reply, so that is what it is told to do."""
    check: CheckCommand | None = None
    """The command that checks the work (``checks.py``), if any."""
    first: CheckCommand | None = None
    """The command the user said to run, or says fails: Shiro runs it before the first step."""
    used_tools: bool = False
    changed: bool = False
    changed_since_check: bool = False
    check_refused: bool = False
    check_output: str = ""
    """What the check command printed when it last ran."""
    check_failed: bool = False
    """The check command ran this turn and failed."""
    keeps: Callable[[str], bool] = field(default=lambda _path: False)
    """Whether the turn keeps a file as it is: a write to it would be refused (the tool runner says)."""
    written: list[str] = field(default_factory=list)
    """Files written with ``write_file`` this turn, in order."""
    change_asked: bool = True
    """The user's words may ask for files to change (``Profile.reflector`` sets it from them)."""

    def saw_tools(self, results: list[dict[str, Any]], inputs: dict[str, Any]) -> None:
        """A tool step ran: ``results`` are its result parts, ``inputs`` each call's input by id."""
        self.used_tools = True
        check = self.check
        keys = [command.key for command in (self.first, check) if command is not None]
        for part in results:
            ok, name = succeeded(part), part.get("toolName")
            given = inputs.get(str(part.get("toolCallId")), {})
            given = given if isinstance(given, dict) else {}
            if name in PLANNERS and ok:
                self.changed = self.changed_since_check = True
            if name == "write_file" and ok and isinstance(given.get("path"), str):
                self.written += [given["path"]] if given["path"] not in self.written else []
            if name == "bash":
                ran = str(given.get("command", ""))
                if not ok and "Not run" in output_text(part):
                    self.check_refused = True
                elif any(key in ran for key in keys):
                    self.check_output = output_text(part)
                    if check is not None and check.key in ran:
                        self.changed_since_check = False
                        self.check_failed = self.check_failed or check.verdict(part) == "failed"

    def check_due(self) -> bool:
        """There is a check, files changed since it last ran, and it may run."""
        return (
            self.check is not None
            and self.can_run_commands
            and not self.check_refused
            and self.changed_since_check
        )


class Reflection:
    """A reflection: its first docstring line is its rule."""

    name = ""
    group = ""
    """A name that switches it off with its siblings (the module's)."""
    after_calls = False
    """It looks at a step that made calls too (else only at one that would end the turn)."""
    exclusive = False
    """Among the exclusive ones, only the first that matches a reply is considered."""
    repeats = False
    """It may send back more than once a turn (each time counted)."""
    hides_reply = False
    """A reply it sends back is never shown as an answer."""
    wants_a_change = False
    """It sends a reply back as a change left undone: only when the user may have asked for one."""
    last_resort = False
    """It sends back only in a turn nothing else sent back (a second reminder of the same work
    undone only costs a step: a small model answers it as it answered the first)."""
    cut_notice = ""
    """What the user is told when its watch cut a reply and the cut reply stands."""

    def before_first_step(self, facts: TurnFacts) -> RunCheck | None:
        """The turn starts: a command for Shiro to run before the model's first step."""
        return None

    def watch(self, facts: TurnFacts, shown: Callable[[], Shown]) -> StreamWatch | None:
        """A watch over each streaming reply that says when to cut it (``shown``: what the model was
        shown, read when asked)."""
        return None

    def after_cut(self) -> SendBack | None:
        """The reply was cut where its watch said."""
        return None

    def answer(self, reply: Reply, facts: TurnFacts) -> SendBack | RunCheck | None:
        """The turn would end after ``reply`` (blocking: it may read files)."""
        return None

    def tools_ran(self, reply: Reply, results: list[dict[str, Any]], facts: TurnFacts) -> Action | None:
        """A step's calls ran with these results (every reflection hears of it, in order)."""
        return None


class Reflector:
    """The reflections of one turn, their one budget, and what was sent."""

    def __init__(self, reflections: Sequence[Reflection], facts: TurnFacts, budget: int) -> None:
        self.reflections = list(reflections)
        self.facts = facts
        self.left = budget
        self.sent: set[str] = set()
        self._watches: Watches | None = None

    def has(self, name: str) -> bool:
        return any(r.name == name for r in self.reflections)

    def may_send(self, reflection: Reflection) -> bool:
        if reflection.last_resort and self.sent:
            return False
        return self.left > 0 and (reflection.repeats or reflection.name not in self.sent)

    def before_first_step(self) -> RunCheck | None:
        """A command for Shiro to run before the model's first step (not counted: nothing is sent back)."""
        return next(filter(None, (r.before_first_step(self.facts) for r in self.reflections)), None)

    def holds_back(self, text: str) -> bool:
        """Whether a reply will be sent back unshown (a tool result the model wrote itself)."""
        reply = Reply(text)
        return any(
            r.hides_reply and self.may_send(r) and r.answer(reply, self.facts) is not None
            for r in self.reflections
        )

    def watch(self, shown: Callable[[], Shown]) -> Watches | None:
        """What watches a streaming reply (None: nothing cuts it)."""
        watches = [(r, w) for r in self.reflections if (w := r.watch(self.facts, shown)) is not None]
        self._watches = Watches(watches) if watches else None
        return self._watches

    def after_cut(self) -> SendBack | None:
        """A reply was cut by a watch: the model asked to write it again, or None (the cut reply stands)."""
        reflection = self._watches.cut_by if self._watches else None
        if reflection is None:
            return None
        action = reflection.after_cut()
        if action is not None and self.may_send(reflection):
            self._count(reflection)
            return action
        return None

    def cut_notice(self) -> str:
        """What the user is told of a cut reply that stands."""
        reflection = self._watches.cut_by if self._watches else None
        return reflection.cut_notice if reflection else ""

    def after_answer(self, reply: Reply) -> SendBack | RunCheck | None:
        """What to do before a turn ends after ``reply``: an instruction, a check to run, or None
        (the turn ends). Blocking (reads files): run it in a thread."""
        exclusive_matched = False
        for reflection in self.reflections:
            if (
                (reply.made_calls and not reflection.after_calls)
                or (exclusive_matched and reflection.exclusive)
                or (reflection.wants_a_change and not self.facts.change_asked)
            ):
                continue
            action = reflection.answer(reply, self.facts)
            if action is None:
                continue
            exclusive_matched = exclusive_matched or reflection.exclusive
            if isinstance(action, RunCheck):
                return action
            if self.may_send(reflection):
                self._count(reflection)
                return action
        return None

    def after_tools(self, reply: Reply, results: list[dict[str, Any]]) -> SendBack | EndTurn | None:
        """What to do after a step's calls ran: an instruction, the turn's end, or nothing."""
        chosen: SendBack | EndTurn | None = None
        for reflection in self.reflections:
            action = reflection.tools_ran(reply, results, self.facts)  # each keeps its own count
            if chosen is not None or action is None or isinstance(action, RunCheck):
                continue
            if isinstance(action, EndTurn):
                chosen = action
            elif self.may_send(reflection):
                self._count(reflection)
                chosen = action
        return chosen

    def check_failed(self, check: RunCheck, result: dict[str, Any] | None) -> SendBack | None:
        """Shiro ran the check: the instruction to fix what it reports when it failed (counted),
        else None. The output rides above it in the history, as the check's result."""
        verdict = check.command.verdict(result)
        if verdict == "cannot run":
            self.facts.check_refused = True  # nothing the model can fix by reading its output
        if verdict != "failed" or self.left <= 0:
            return None
        self.left -= 1
        return SendBack(CHECK_FAILED.format(command=check.command.shown), "the check failed")

    def _count(self, reflection: Reflection) -> None:
        self.sent.add(reflection.name)
        self.left -= 1


def nudge_message(instruction: str) -> Message:
    """The instruction as the user message appended to the history (marked: Shiro wrote it)."""
    return {"role": "user", "content": instruction, NUDGE_MARK_KEY: NUDGE_MARK}
