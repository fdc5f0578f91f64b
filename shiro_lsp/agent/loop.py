"""The turn loop (spec §7.5–7.6): one user message becomes model steps, tool calls and events.

A turn pushes the user's message, then loops: rebuild the system prompt, prepare the wire view of
the history (pruned to fit, §4.1), stream one model call, append what it said, hand the tool calls
it made to a ``ToolCallRunner`` (``agent/tool_calls.py``: permissions, approvals, checkpoints), and
go again until the model stops calling tools, the step limit is hit, an error ends it, or the user
cancels.

Events go to ``emit`` as the typed events of ``agent/events.py``, in order; front ends (LSP,
headless) only translate them. A turn ends with ``Done`` or, on failure, with ``Failed`` and no
``Done``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from shiro_lsp.adapt import (
    MAX_SHOWN_FILES,
    VIEW_KEY,
    VIEW_NOTE_KEY,
    WRITTEN_AS_KEY,
    Listing,
    TextCall,
    TextHold,
    ToolCallFormat,
    as_text_protocol,
    as_written,
    block_calls,
    echoes_tool_output,
    file_listings,
    has_edit_blocks,
    listing_call,
    listing_notice,
    overview,
    parse_text_tool_calls,
    split_tagged_calls,
    text_call_notice,
    tool_outputs,
    with_workspace_views,
    without_code,
    without_listings,
    writes_a_result,
)
from shiro_lsp.agent import events as ev
from shiro_lsp.agent.agents import takes_reasoning_effort
from shiro_lsp.agent.context_window import WireView
from shiro_lsp.agent.events import Emit
from shiro_lsp.agent.pricing import cost_of
from shiro_lsp.agent.python_check import (
    fix_instruction,
    python_problems,
    with_missing_imports,
    without_standard_library,
)
from shiro_lsp.agent.repetition import CUT_NOTICE, WRITE_AGAIN, RepetitionWatch
from shiro_lsp.agent.setup import History, TurnSetup
from shiro_lsp.agent.tool_calls import ToolCallRunner, result_part, succeeded
from shiro_lsp.agent.turn_guards import NOTICE as NUDGE_NOTICE
from shiro_lsp.agent.turn_guards import WROTE_A_RESULT, TurnGuard, nudge_message, reply_text
from shiro_lsp.context.prune import detach_provider_items
from shiro_lsp.messages import Message
from shiro_lsp.providers.types import (
    ModelRequest,
    ProviderError,
    ProviderNotice,
    ReasoningDelta,
    Retrying,
    StepFinished,
    TextDelta,
    ToolCallReady,
    ToolInputStart,
)
from shiro_lsp.providers.wire import loose_tool_input, tool_output_text
from shiro_lsp.tools import ToolSpec
from shiro_lsp.tools.files import SECRETS_HIDDEN
from shiro_lsp.tools.shell import exit_status
from shiro_lsp.usage import Usage

log = logging.getLogger(__name__)
CONCLUSION_WORDS = 4
MAX_COMMAND_CHECKS = 2
"""Runs per turn of the command the user named, by Shiro, for a model shown no tools."""
RUN_NAMED_NOTICE = "Shiro runs `{command}`, which you named, to check the model's change."
RUN_FIRST_NOTICE = "Shiro runs `{command}` first, so that the model reads what it does."
RUN_TEST_NOTICE = "Shiro runs `{command}` to check the test file the model wrote."
NO_TEST_RUNNER = "No module named pytest"
MAX_IDLE_WRITE_STEPS = 2
"""Steps in a row whose written-out files all failed to change anything, before the model is told to
answer instead; one more ends the turn (a 1.5B model copies its refused listing again and again)."""
IDLE_WRITES = (
    "Your files changed nothing, twice. Stop writing files out: tell the user in a few sentences what "
    "you could not do, and why."
)
SECRET_WRITE_ANSWER = (
    "No file you write can do this. Reply to the user in one or two sentences, without a code block: "
    "say what you cannot do, and why."
)
"""After a written-out file was refused for setting a secret: told only the refusal, a 1.5B model asked
for "our production password" wrote the file out again and again; told this, it says it cannot."""
IDLE_WRITES_NOTICE = (
    "The model's written-out files changed nothing {count} times in a row, so the turn was ended."
)
STALE_NOTICE = (
    "The provider no longer had part of this session stored. Re-sent the history inline and carried on."
)
TEXT_FORMAT_NOTICE = (
    "The model server cannot take native tool calls for {model}; Shiro describes the tools in the prompt "
    'instead (toolCallFormat "text") for the rest of this session.'
)
MIN_OUTPUT_TOKENS = 256
CANCELLED_OUTPUT = "The user cancelled the turn before this tool call finished, so its effects are unknown."


def with_reminder(messages: list[Message], reminder: str) -> list[Message]:
    """The wire messages with the task list as a trailing user message.

    The task list changes at every ``todo_write``; at the end of the system prompt it would come
    before the tool schemas in most chat templates and void the provider's whole prompt cache. At
    the tail, everything before it stays byte-identical from one step to the next.
    """
    if not reminder.strip():
        return messages
    return [*messages, {"role": "user", "content": reminder.strip()}]


def output_budget(setup: TurnSetup, prompt_tokens: int) -> int:
    """``max_tokens`` for a step: the configured cap, and no more than what the window has left."""
    if setup.context_window is None:
        return setup.max_output_tokens
    room = setup.context_window - prompt_tokens - MIN_OUTPUT_TOKENS
    return max(MIN_OUTPUT_TOKENS, min(setup.max_output_tokens, room))


@dataclass
class TurnOutcome:
    stop_reason: Literal["done", "cancelled", "error"]
    usage: Usage = field(default_factory=Usage)
    error: str | None = None


def _call_part(call: ToolCallReady, input: dict[str, Any]) -> dict[str, Any]:
    """The tool-call part of the assistant message for a call read from text."""
    return {
        "type": "tool-call",
        "toolCallId": call.call_id,
        "toolName": call.name,
        "input": input,
        "providerOptions": {"shiro": {"fromText": True}},
    }


def _exited_zero(result: dict[str, Any]) -> bool:
    """A bash result that says the command exited 0."""
    value = str(result.get("output", {}).get("value", ""))
    return succeeded(result) and exit_status(value) == "0"


def _tests_failed(result: dict[str, Any]) -> bool:
    """A pytest run that found failing tests (exit 1) or a test file that does not import (exit 2);
    not one that found no pytest, no such file (4) or no tests (5)."""
    value = str(result.get("output", {}).get("value", ""))
    return exit_status(value) in ("1", "2") and NO_TEST_RUNNER not in value


def _concludes(reply: str, listings: list[Listing]) -> bool:
    """Whether the reply says something, in prose, after the last file it wrote out (what it did)."""
    after = without_code(reply[max(listing.span[1] for listing in listings) :])
    return len(re.findall(r"[A-Za-z]\w*", after)) >= CONCLUSION_WORDS


async def _close(events: AsyncIterator[Any]) -> None:
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()


@dataclass
class _StepResult:
    message: Message | None = None
    usage: Usage = field(default_factory=Usage)
    calls: list[ToolCallReady] = field(default_factory=list)
    delivered: bool = False
    partial_text: str = ""
    stop: bool = False
    text_calls_declined: bool = False
    """Calls were read from the text and not taken (echoes of a tool's output): text, by the rules."""
    looped_at: int | None = None
    """The reply was cut in a loop that began at this offset of its text (repetition.py)."""
    answered_with_files: bool = False
    """The reply wrote files out and said what it did: the turn's answer, as with Aider."""
    wrote_out: bool = False
    """The step's calls are the files the reply wrote out (adapt/formats/whole_file.py)."""


class Turn:
    def __init__(self, setup: TurnSetup, history: History, emit: Emit) -> None:
        self.setup = setup
        self.history = history
        self.emit = emit
        self.tool_calls = ToolCallRunner(setup, emit, self._keep_results)
        self.usage = Usage()
        self.compacted_reported = False
        self.stale_repaired = False
        self.problems_sent = False
        self.written: list[str] = []
        self.command_checks = 0
        self.idle_write_steps = 0
        self.loop_cut = False
        self.secret_write_answered = False
        self.tool_call_format: ToolCallFormat = setup.tool_call_format
        self.native_calls_seen = False
        """auto: the model made a native call, so its text is text from then on (adapt/formats/text_calls.py)."""
        self.guard = TurnGuard("", setup.workspace, can_run_commands=False)
        """Whether a step without tool calls may end the turn (set up by ``run``)."""

    async def run(self, text: str) -> TurnOutcome:
        message: Message = {"role": "user", "content": text}
        if self.setup.workspace_view:
            message[VIEW_KEY] = self.setup.workspace_view
        if self.setup.workspace_note:
            message[VIEW_NOTE_KEY] = self.setup.workspace_note
        self.history.append(message)
        plan = self.setup.plan
        can_run = "bash" in plan.tools and "bash" not in plan.hidden
        self.guard = TurnGuard(
            text,
            self.setup.workspace,
            can_run_commands=can_run,
            tools=frozenset(plan.tools),
            writes_out=plan.writes_out,
            asks_to_run=bool(plan.specs),
        )
        try:
            return await self._loop()
        except asyncio.CancelledError:
            self._close_open_calls()
            self.emit(self._done())
            return self._outcome("cancelled")

    async def _loop(self) -> TurnOutcome:
        await self._run_command_first()
        for _ in range(self.setup.plan.variant.max_steps):
            try:
                step = await self._model_step()
            except ProviderError as error:
                self.emit(ev.Failed(error.message))
                return self._outcome("error", error.message)
            if not step.calls:
                if (
                    await self._send_back_problems()
                    or await self._run_named_command()
                    or await self._send_back(step)
                ):
                    continue
                self.emit(self._done())
                return self._outcome("done")
            results = await self.tool_calls.run(step.calls)
            self.guard.saw_tools(results, {c.call_id: loose_tool_input(c.arguments) for c in step.calls})
            self._note_written(step.calls, results)
            if self._writes_idle(step, results):
                self.emit(ev.Notice(IDLE_WRITES_NOTICE.format(count=self.idle_write_steps)))
                self.emit(self._done())
                return self._outcome("done")
            if step.answered_with_files and all(map(succeeded, results)):
                if await self._send_back_problems() or await self._run_named_command():
                    continue
                self.emit(self._done())
                return self._outcome("done")
            if self.tool_calls.stopped:
                self.emit(self._done())
                return self._outcome("done")
        self.emit(ev.Notice(f"stopped after {self.setup.plan.variant.max_steps} steps (the step limit)"))
        self.emit(self._done())
        return self._outcome("done")

    def _writes_idle(self, step: _StepResult, results: list[dict[str, Any]]) -> bool:
        """The files a reply wrote out changed nothing, again: after :data:`MAX_IDLE_WRITE_STEPS`
        such steps the model is told to answer; True: one more, the turn ends."""
        if not step.wrote_out or any(map(succeeded, results)):
            self.idle_write_steps = 0
            return False
        self.idle_write_steps += 1
        if self._told_to_answer_for_a_secret(results):
            return False
        if self.idle_write_steps == MAX_IDLE_WRITE_STEPS:
            self.emit(ev.Notice(NUDGE_NOTICE.format(why="its files changed nothing")))
            self.history.append(nudge_message(IDLE_WRITES))
        return self.idle_write_steps > MAX_IDLE_WRITE_STEPS

    def _told_to_answer_for_a_secret(self, results: list[dict[str, Any]]) -> bool:
        """A written-out file was refused for setting a secret: the model is told, once a turn, to
        answer instead (:data:`SECRET_WRITE_ANSWER`)."""
        if self.secret_write_answered or not any(SECRETS_HIDDEN in tool_output_text(r) for r in results):
            return False
        self.secret_write_answered = True
        self.emit(ev.Notice(NUDGE_NOTICE.format(why="a secret it cannot set")))
        self.history.append(nudge_message(SECRET_WRITE_ANSWER))
        return True

    def _note_written(self, calls: list[ToolCallReady], results: list[dict[str, Any]]) -> None:
        """The files a model that writes files out wrote this turn (checked when the turn would end)."""
        if not self.setup.plan.writes_out:
            return
        ok = {str(r.get("toolCallId")) for r in results if succeeded(r)}
        for call in calls:
            input = loose_tool_input(call.arguments)
            path = input.get("path") if call.name == "write_file" and isinstance(input, dict) else None
            if call.call_id in ok and isinstance(path, str) and path not in self.written:
                self.written.append(path)

    async def _send_back_problems(self) -> bool:
        """Files written out this turn with syntax errors or undefined names go back to the model once."""
        if self.problems_sent or not self.written or not isinstance(self.setup.workspace, Path):
            return False
        problems = await asyncio.to_thread(python_problems, self.setup.workspace, self.written)
        if not problems:
            return False
        self.problems_sent = True
        self.emit(ev.Notice(NUDGE_NOTICE.format(why="errors in the files it wrote")))
        self.history.append(nudge_message(fix_instruction(problems)))
        return True

    async def _run_named_command(self) -> bool:
        """A model shown no tools changed files, and the user named a command to check them with:
        Shiro runs it (as a call read from text: the same approvals, sandbox and checkpoint), at most
        :data:`MAX_COMMAND_CHECKS` times a turn. True when it failed: the model gets its output and
        goes on. A 1.5B model asked to run it invents the output instead."""
        command = self.guard.command
        if (
            self.guard.asks_to_run
            or command is None
            or not command.shiro_may_run
            or not self.guard.check_due()
        ):
            return False
        if self.command_checks >= MAX_COMMAND_CHECKS:
            return False
        self.command_checks += 1
        result = await self._run_command(
            command.shown, RUN_NAMED_NOTICE if command.named else RUN_TEST_NOTICE
        )
        if result is None or _exited_zero(result):
            return False
        if not command.named and not _tests_failed(result):
            self.command_checks = MAX_COMMAND_CHECKS  # no pytest, no such file: nothing the model can fix
            return False
        return True

    async def _run_command_first(self) -> None:
        """The user told to run a command, or said it fails ("Run python3 report.py. It crashes.",
        "python3 main.py fails with an ImportError"), and the model is shown no tools: Shiro runs it
        before the model's first step, so the model reads the error. A 1.5B model that could not run it
        guessed: a file was missing, a module was to install. Not for a command the user says prints
        something wrong: shown the output it was told of, the model explained instead of fixing."""
        command = self.guard.command
        if self.guard.asks_to_run or command is None or not command.shiro_may_run or not command.run_first:
            return
        await self._run_command(command.shown, RUN_FIRST_NOTICE)

    async def _run_command(self, command: str, notice: str) -> dict[str, Any] | None:
        """``command`` run as a call read from text (the same approvals, sandbox and checkpoint) and
        kept in the history with its result, which is returned."""
        input = {"command": command}
        call = ToolCallReady(f"call_shiro_{uuid.uuid4().hex[:16]}", "bash", json.dumps(input))
        self.tool_calls.made_by_shiro(call.call_id)
        self.emit(ev.Notice(notice.format(command=command)))
        self.history.append({"role": "assistant", "content": [_call_part(call, input)]})
        results = await self.tool_calls.run([call])
        self.guard.saw_tools(results, {call.call_id: input})
        return results[0] if results else None

    async def _send_back(self, step: _StepResult) -> bool:
        """A step ended without tool calls but with the work undone: send the model back once."""
        self.guard.reads_text_calls = self.tool_call_format != "native" and not step.text_calls_declined
        nudge = await asyncio.to_thread(self.guard.after_answer, step.message)  # it may read named files
        if nudge is None:
            return False
        instruction, why = nudge
        self.emit(ev.Notice(NUDGE_NOTICE.format(why=why)))
        self.history.append(nudge_message(instruction))
        return True

    # --- one model call ------------------------------------------------------------------------

    async def _model_step(self) -> _StepResult:
        plan = self.setup.plan
        specs = list(plan.specs)
        while True:
            instructions = await self.setup.system_prompt()
            reminder = self.setup.reminder() if self.setup.reminder is not None else ""
            text_format = self.tool_call_format == "text"
            # Measured as sent: in the text format the tools ride in the instructions, not as specs.
            sent_instructions, offered = (
                (instructions + plan.text_tools_prompt, []) if text_format else (instructions, specs)
            )
            wire = await self.setup.window.prepare(
                self.history.messages, sent_instructions + reminder, offered
            )
            if wire.compacted and not self.compacted_reported:
                self.compacted_reported = True
                self.emit(ev.Compacted(wire.before, wire.after))
            messages = with_reminder(with_workspace_views(wire.messages), reminder)
            request = ModelRequest(
                model=self.setup.model,
                instructions=sent_instructions,
                messages=as_text_protocol(messages) if text_format else as_written(messages),
                tools=offered,
                reasoning_effort=plan.variant.reasoning_effort
                if takes_reasoning_effort(self.setup.model)
                else None,
                max_output_tokens=output_budget(self.setup, wire.tokens),
                temperature=self.setup.temperature,
            )
            step = _StepResult()
            hold = TextHold(enabled=self.tool_call_format != "native", tagged=text_format)
            try:
                await self._consume(self.setup.client.stream(request), step, wire, hold, specs)
                if step.looped_at is not None:
                    self._show(hold.release())
                    if self._cut_loop(step):
                        continue
            except ProviderError as error:
                if error.is_stale_item and not step.delivered and not self.stale_repaired:
                    self._repair_stale_items()
                    continue
                if error.is_tools_unsupported and self.tool_call_format == "auto" and not step.delivered:
                    self.tool_call_format = "text"
                    self.emit(ev.Notice(TEXT_FORMAT_NOTICE.format(model=self.setup.model)))
                    continue
                raise
            except asyncio.CancelledError:
                self._show(hold.release())
                self._keep_partial(step)
                raise
            return step

    def _cut_loop(self, step: _StepResult) -> bool:
        """A reply cut in a loop: kept up to the loop's first lines (``RepetitionWatch.keep_until``);
        the model asked once to write it again (True: ask the model again), after that the cut reply is
        the step's answer."""
        self.emit(ev.Notice(CUT_NOTICE))
        kept = step.partial_text[: step.looped_at].rstrip() or "…"
        step.message = {"role": "assistant", "content": [{"type": "text", "text": kept}]}
        self.history.append(step.message)
        if self.loop_cut:
            return False
        self.loop_cut = True
        self.history.append(nudge_message(WRITE_AGAIN))
        return True

    def _show(self, text: str) -> None:
        if text:
            self.emit(ev.Text(text))

    async def _consume(
        self,
        events: AsyncIterator[Any],
        step: _StepResult,
        wire: WireView,
        hold: TextHold,
        specs: list[ToolSpec],
    ) -> None:
        repeats = RepetitionWatch()
        async for event in events:
            if isinstance(event, TextDelta):
                step.delivered = True
                step.partial_text += event.text
                self._show(hold.feed(event.text))
                if repeats.feed(event.text):
                    step.looped_at = repeats.keep_until
                    await _close(events)  # the request ends: the server stops generating
                    return
            elif isinstance(event, ReasoningDelta):
                step.delivered = True
                self.emit(ev.Reasoning(event.text))
            elif isinstance(event, ToolInputStart):
                step.delivered = True
                self.emit(ev.ToolStart(event.call_id, event.name))
            elif isinstance(event, ToolCallReady):
                step.calls.append(event)
                self._native_call_seen()
            elif isinstance(event, ProviderNotice):
                self.emit(ev.Notice(event.text))
            elif isinstance(event, Retrying):
                self.emit(ev.Retry(event.attempt, event.max_attempts, event.delay_seconds, event.reason))
            elif isinstance(event, StepFinished):
                message = event.message
                if not step.calls and hold.enabled:
                    message = await self._calls_from_text(message, step, hold, specs)
                if not step.calls and hold.enabled and self._invented_result(message):
                    hold.drop()  # sent back, never shown (turn_guards.py)
                self._show(hold.release())
                step.message, step.usage = message, event.usage
                self._count(event.usage)
                # before the append, so the meter it triggers already has the provider's count
                self.setup.window.measured(event.usage, wire)
                self.history.append(message)

    def _native_call_seen(self) -> None:
        self.native_calls_seen = True
        if self.tool_call_format == "auto":
            self.tool_call_format = "native"

    async def _calls_from_text(
        self, message: Message, step: _StepResult, hold: TextHold, specs: list[ToolSpec]
    ) -> Message:
        """A message that is wholly tool calls written as text becomes those calls (adapt/formats/text_calls.py);
        in a small window, files written out in it become ``write_file`` calls (adapt/formats/whole_file.py)."""
        parts = message.get("content")
        if not isinstance(parts, list):
            return message
        text = reply_text(message)
        tools = {spec.name: spec for spec in specs} | self.setup.plan.readable_specs
        prose, calls = "", parse_text_tool_calls(text, tools, self.setup.plan.unoffered_specs)
        listings: list[Listing] = []
        if not calls and hold.tagged:
            prose, calls = split_tagged_calls(text, tools) or ("", None)
        notice = text_call_notice(calls) if calls and not hold.tagged else ""
        if not calls and self.setup.plan.writes_out and has_edit_blocks(text):  # a long file changed
            found, prose, notice = await asyncio.to_thread(block_calls, text, self.setup.workspace)
            calls = [TextCall(name, input) for name, input in found]
        if not calls and self.setup.plan.writes_out and "```" in text:
            listings, added = await asyncio.to_thread(self._file_listings, text)
            prose, calls = without_listings(text, listings), [listing_call(item) for item in listings]
            notice = listing_notice([item.path for item in listings]) + added if listings else ""
            # a small model sent back after its files were written rewrote them worse (a 1.5B model
            # copied diff lines in): a reply that writes files and says what it did ends the turn
            step.answered_with_files = bool(listings) and _concludes(text, listings)
            step.wrote_out = bool(listings)
        outputs = tool_outputs(self.history.messages) if calls else []
        if not calls:
            return message
        if any(echoes_tool_output(call, outputs) for call in calls):
            step.text_calls_declined = True
            return message
        hold.drop()  # the call is not shown as an answer
        if notice:  # the text format asked for calls as text: nothing to tell
            self.emit(ev.Notice(notice))
        kept = [p for p in parts if p.get("type") != "text"]
        said = [{"type": "text", "text": prose}] if prose else []
        written = {WRITTEN_AS_KEY: text} if listings else {}
        return {**message, "content": kept + said + self._read_calls(calls, step), **written}

    def _file_listings(self, text: str) -> tuple[list[Listing], str]:
        """The files the reply writes out, each with the imports it lacks added, and what was added."""
        root = self.setup.workspace if isinstance(self.setup.workspace, Path) else None
        shown = overview(root, MAX_SHOWN_FILES)[0] if root is not None else []
        listings = file_listings(text, self.setup.workspace, self.guard.prompt, shown)
        if root is None:
            return listings, ""
        imported = with_missing_imports(root, {item.path: item.content for item in listings})
        mended, added, notes = [], [], []
        for item in listings:
            content, lines = imported.get(item.path, (item.content, []))
            content, dropped = without_standard_library(item.path, content)
            mended.append(replace(item, content=content))
            added += [f"`{line}` to {item.path}" for line in lines]
            if dropped:
                notes.append(
                    f" Shiro left {', '.join(dropped)} out of {item.path} (Python's standard library)."
                )
        if added:
            notes.insert(0, f" Shiro added {', '.join(added)} (a name used but never imported).")
        return mended, "".join(notes)

    def _invented_result(self, message: Message) -> bool:
        return writes_a_result(reply_text(message)) and WROTE_A_RESULT not in self.guard.sent

    def _read_calls(self, calls: list[TextCall], step: _StepResult) -> list[dict[str, Any]]:
        """The step's calls read from text, as tool-call parts of the assistant message."""
        ready = [self._text_call(call.name, call.input) for call in calls]
        step.calls += ready
        return [_call_part(item, call.input) for item, call in zip(ready, calls, strict=True)]

    def _text_call(self, name: str, input: dict[str, Any]) -> ToolCallReady:
        """A call run as one the model wrote as text (never more trusted than a native one)."""
        call_id = f"call_text_{uuid.uuid4().hex[:16]}"
        self.tool_calls.read_from_text(call_id)
        return ToolCallReady(call_id, name, json.dumps(input))

    def _repair_stale_items(self) -> None:
        """§5.6: rewrite the history inline (and save it), say so, and try once more."""
        self.stale_repaired = True
        self.history.replace(detach_provider_items(self.history.messages))
        self.emit(ev.Notice(STALE_NOTICE))

    def _keep_partial(self, step: _StepResult) -> None:
        """A cancelled stream keeps what the user already saw."""
        if step.message is None and step.partial_text:
            self.history.append(
                {"role": "assistant", "content": [{"type": "text", "text": step.partial_text}]}
            )

    def _count(self, usage: Usage) -> None:
        priced = replace(usage, cost_usd=cost_of(self.setup.model, usage))
        self.usage += priced
        self.history.add_usage(priced)

    def _keep_results(self, parts: list[dict[str, Any]]) -> None:
        self.history.append({"role": "tool", "content": parts})

    def _close_open_calls(self) -> None:
        """After a cancel, give every tool call without a result one, so the next request is valid."""
        messages = self.history.messages
        last_assistant = next(
            (i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "assistant"), None
        )
        if last_assistant is None or not isinstance(messages[last_assistant].get("content"), list):
            return
        answered = {
            part.get("toolCallId")
            for message in messages[last_assistant + 1 :]
            if message.get("role") == "tool" and isinstance(message.get("content"), list)
            for part in message["content"]
        }
        open_calls = [
            part
            for part in messages[last_assistant]["content"]
            if part.get("type") == "tool-call" and part.get("toolCallId") not in answered
        ]
        if open_calls:
            closing = [
                result_part(ToolCallReady(p["toolCallId"], p["toolName"], ""), CANCELLED_OUTPUT, error=True)
                for p in open_calls
            ]
            self.history.append({"role": "tool", "content": closing})

    # --- results -------------------------------------------------------------------------------

    def _done(self) -> ev.Done:
        return ev.Done(self.usage.input_tokens, self.usage.output_tokens, self.usage.cost_usd)

    def _outcome(
        self, reason: Literal["done", "cancelled", "error"], error: str | None = None
    ) -> TurnOutcome:
        return TurnOutcome(reason, self.usage, error)
