"""The turn loop (spec §7.5–7.6): one user message becomes model steps, tool calls and events.

A turn pushes the user's message, then loops: rebuild the system prompt, prepare the wire view of
the history (pruned to fit, §4.1), stream one model call, append what it said, hand the tool calls
it made to a ``ToolCallRunner`` (``agent/tool_calls.py``: permissions, approvals, checkpoints), and
go again until the model stops calling tools, the step limit is hit, an error ends it, or the user
cancels.

The loop knows no model. How the tools are put to the model and its reply read back is the plan's
reply format (``adapt.ReplyFormat``); what sends the model back before the turn ends, or after a
step's calls, or when a reply loops, is the turn's ``adapt.Reflector``, asked at fixed points: before
the first step, while a reply streams, when a step's calls have run, and when the turn would end.

Events go to ``emit`` as the typed events of ``agent/events.py``, in order; front ends (LSP,
headless) only translate them. A turn ends with ``Done`` or, on failure, with ``Failed`` and no
``Done``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from shiro_lsp.adapt import (
    NOTICE,
    VIEW_KEY,
    VIEW_NOTE_KEY,
    EndTurn,
    Hold,
    Reply,
    ReplyContext,
    ReplyFormat,
    RunCheck,
    SendBack,
    Shown,
    TextCall,
    ToolCallFormat,
    TurnFacts,
    nudge_message,
    user_words,
    with_workspace_views,
)
from shiro_lsp.agent import events as ev
from shiro_lsp.agent.agents import takes_reasoning_effort
from shiro_lsp.agent.context_window import WireView
from shiro_lsp.agent.events import Emit
from shiro_lsp.agent.pricing import cost_of
from shiro_lsp.agent.setup import History, TurnSetup
from shiro_lsp.agent.tool_calls import ToolCallRunner, result_part
from shiro_lsp.context.prune import detach_provider_items
from shiro_lsp.images.parts import has_images
from shiro_lsp.messages import Message, Part, succeeded
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
    close_stream,
)
from shiro_lsp.providers.wire import content_text, loose_tool_input
from shiro_lsp.usage import Usage

log = logging.getLogger(__name__)

STALE_NOTICE = (
    "The provider no longer had part of this session stored. Re-sent the history inline and carried on."
)
IMAGES_REFUSED_NOTICE = (
    "{model} did not take the images ({why}); they are described to it in words instead, and the turn "
    "goes on with the text."
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


def _call_part(call: ToolCallReady, input: dict[str, Any], *, by_shiro: bool = False) -> dict[str, Any]:
    """The tool-call part of the assistant message for a call read from text (``by_shiro``: one Shiro
    made itself; a resumed transcript labels it so)."""
    mark = {"fromText": True, "byShiro": True} if by_shiro else {"fromText": True}
    return {
        "type": "tool-call",
        "toolCallId": call.call_id,
        "toolName": call.name,
        "input": input,
        "providerOptions": {"shiro": mark},
    }


@dataclass
class _StepResult:
    message: Message | None = None
    usage: Usage = field(default_factory=Usage)
    calls: list[ToolCallReady] = field(default_factory=list)
    delivered: bool = False
    partial_text: str = ""
    text_calls_declined: bool = False
    """Calls were read from the text and not taken (echoes of a tool's output): text, by the rules."""
    looped_at: int | None = None
    """The reply was cut in a loop: it is kept up to this offset of its text."""
    answered_with_files: bool = False
    """The reply wrote files out and said what it did: the turn's answer, as with Aider."""
    wrote_out: bool = False
    """The step's calls are the files the reply wrote out."""


class Turn:
    def __init__(self, setup: TurnSetup, history: History, emit: Emit) -> None:
        self.setup = setup
        self.history = history
        self.emit = emit
        self.tool_calls = ToolCallRunner(setup, emit, self._keep_results)
        self.usage = Usage()
        self.compacted_reported = False
        self.stale_repaired = False
        self.sent_back = False
        """Shiro sent the model back since its last step (the next step samples at the retry temperature)."""
        self.reply_format: ReplyFormat = setup.plan.reply_format
        """How the model's calls travel now: it may change during the turn (a native call, a refusal)."""
        self.native_calls_seen = False
        """The model made a native call (the runtime remembers it for the endpoint and model)."""
        self.words = ""
        """What the user typed this turn (attached documents left out)."""
        self.system_text = ""
        """The last step's system prompt (project instructions included): text the model was shown."""
        self.reflector = setup.plan.profile.reflector(TurnFacts("", setup.workspace))
        """What may send the model back (set up by ``run``)."""

    @property
    def tool_call_format(self) -> ToolCallFormat:
        return self.reply_format.name

    async def run(self, text: str, images: Sequence[Part] = ()) -> TurnOutcome:
        """The turn of the user's message ``text``, with the images they sent (stored image parts)."""
        content = [*([{"type": "text", "text": text}] if text else []), *images] if images else text
        message: Message = {"role": "user", "content": content}
        if self.setup.workspace_view:
            message[VIEW_KEY] = self.setup.workspace_view
        if self.setup.workspace_note:
            message[VIEW_NOTE_KEY] = self.setup.workspace_note
        self.history.append(message)
        self.words = user_words(text)
        self.reflector = self.setup.plan.profile.reflector(self._facts())
        self.reflector.facts.keeps = self.tool_calls.kept_tests.keeps
        try:
            return await self._loop()
        except asyncio.CancelledError:
            self._close_open_calls()
            self.emit(self._done())
            return self._outcome("cancelled")

    def _facts(self) -> TurnFacts:
        plan = self.setup.plan
        return TurnFacts(
            self.words,
            self.setup.workspace,
            tools=frozenset(plan.tools),
            can_run_commands="bash" in plan.tools and "bash" not in plan.hidden,
            shows_tools=bool(plan.specs),
            writes_out=plan.reply_format.writes_out,
            check=self.setup.checks.check,
            first=self.setup.checks.first,
        )

    async def _loop(self) -> TurnOutcome:
        first = self.reflector.before_first_step()
        if first is not None:
            await self._run_own(first)
        for _ in range(self.setup.plan.variant.max_steps):
            try:
                step = await self._model_step()
            except ProviderError as error:
                self.emit(ev.Failed(error.message))
                return self._outcome("error", error.message)
            if not step.calls:
                if await self._reflect(step) or await self._stop_checked(step):
                    continue
                return self._finished()
            results = await self.tool_calls.run(step.calls)
            self._saw_tools(results, {c.call_id: loose_tool_input(c.arguments) for c in step.calls})
            action = self.reflector.after_tools(self._reply(step), results)
            if isinstance(action, EndTurn):
                self.emit(ev.Notice(action.notice))
                return self._finished()
            if action is not None:
                self._send_back(action)
            if step.answered_with_files and all(map(succeeded, results)):
                if await self._reflect(step):
                    continue
                return self._finished()
            if self.tool_calls.stopped:
                return self._finished()
        self.emit(ev.Notice(f"stopped after {self.setup.plan.variant.max_steps} steps (the step limit)"))
        return self._finished()

    def _finished(self) -> TurnOutcome:
        self.emit(self._done())
        return self._outcome("done")

    def _reply(self, step: _StepResult) -> Reply:
        return Reply(
            content_text(step.message.get("content")) if step.message else "",
            made_calls=bool(step.calls),
            reads_text_calls=self.reply_format.name != "native" and not step.text_calls_declined,
            wrote_out=step.wrote_out,
        )

    async def _reflect(self, step: _StepResult) -> bool:
        """The turn would end after ``step``: True when the model is sent back for another step
        (with an instruction, or with the output of a check that failed)."""
        reply = self._reply(step)
        while (action := await asyncio.to_thread(self.reflector.after_answer, reply)) is not None:
            if isinstance(action, SendBack):
                self._send_back(action)
                return True
            fix = self.reflector.check_failed(action, await self._run_own(action))
            if fix is not None:
                self._send_back(fix)
                return True
        return False

    def _send_back(self, action: SendBack) -> None:
        self.emit(ev.Notice(NOTICE.format(why=action.why)))
        self.history.append(nudge_message(action.instruction))
        self.sent_back = True

    def _temperature(self) -> float | None:
        """This step's temperature: the retry temperature in the step after a send-back."""
        setup = self.setup
        retry = self.sent_back and setup.retry_temperature is not None
        return setup.retry_temperature if retry else setup.temperature

    async def _run_own(self, check: RunCheck) -> dict[str, Any] | None:
        """The check command run as Shiro's own call (the same approvals, sandbox and checkpoint as a
        call read from text; never the model's repeat), kept in the history with its result."""
        input = {"command": check.command.shown}
        call = ToolCallReady(f"call_shiro_{uuid.uuid4().hex[:16]}", "bash", json.dumps(input))
        self.tool_calls.made_by_shiro(call.call_id)
        self.emit(ev.Notice(check.notice))
        self.history.append({"role": "assistant", "content": [_call_part(call, input, by_shiro=True)]})
        results = await self.tool_calls.run([call])
        self._saw_tools(results, {call.call_id: input})
        return results[0] if results else None

    def _saw_tools(self, results: list[dict[str, Any]], inputs: dict[str, Any]) -> None:
        """What a step's calls did goes to the reflections; a failed check keeps the tests as they are."""
        facts = self.reflector.facts
        facts.saw_tools(results, inputs)
        if facts.check_failed and facts.check is not None:
            self.tool_calls.kept_tests.check_failed(facts.check.shown)

    async def _stop_checked(self, step: _StepResult) -> bool:
        """The model answered: a Stop hook may send it back with an instruction (``TurnSetup.stop_check``)."""
        if self.setup.stop_check is None:
            return False
        instruction = await self.setup.stop_check(self._reply(step).text)
        if instruction is None:
            return False
        self.history.append(nudge_message(instruction))
        return True

    # --- one model call ------------------------------------------------------------------------

    async def _model_step(self) -> _StepResult:
        plan = self.setup.plan
        while True:
            instructions = self.system_text = await self.setup.system_prompt()
            reminder = self.setup.reminder() if self.setup.reminder is not None else ""
            reply_format = self.reply_format
            # Measured as sent: where the tools ride in the instructions, they are not sent as specs.
            sent_instructions, offered = (
                (instructions + plan.text_tools_prompt, [])
                if reply_format.tools_in_prompt
                else (instructions, list(plan.specs))
            )
            wire = await self.setup.window.prepare(
                self.history.messages, sent_instructions + reminder, offered
            )
            if wire.compacted and not self.compacted_reported:
                self.compacted_reported = True
                self.emit(ev.Compacted(wire.before, wire.after))
            messages = with_reminder(with_workspace_views(wire.messages), reminder)
            images = self.setup.images
            if images is not None and has_images(messages):
                messages = await asyncio.to_thread(images.for_the_model, messages)
            request = ModelRequest(
                model=self.setup.model,
                instructions=sent_instructions,
                messages=reply_format.render(messages),
                tools=offered,
                reasoning_effort=plan.variant.reasoning_effort
                if takes_reasoning_effort(self.setup.model)
                else None,
                max_output_tokens=output_budget(self.setup, wire.tokens),
                temperature=self._temperature(),
            )
            step = _StepResult()
            hold = reply_format.hold()
            try:
                await self._consume(self.setup.client.stream(request), step, wire, hold)
                if step.looped_at is not None:
                    self._show(hold.release())
                    if await self._cut_reply(step, hold):
                        continue
            except ProviderError as error:
                if error.is_stale_item and not step.delivered and not self.stale_repaired:
                    self._repair_stale_items()
                    continue
                if error.is_images_unsupported and not step.delivered and self._stop_sending_images():
                    self.emit(
                        ev.Notice(IMAGES_REFUSED_NOTICE.format(model=self.setup.model, why=error.message))
                    )
                    continue
                refused = reply_format.when_tools_refused() if error.is_tools_unsupported else None
                if refused is not None and not step.delivered:
                    self.reply_format = refused
                    self.emit(ev.Notice(TEXT_FORMAT_NOTICE.format(model=self.setup.model)))
                    continue
                raise
            except asyncio.CancelledError:
                self._show(hold.release())
                self._keep_partial(step)
                raise
            self.sent_back = False
            return step

    def _stop_sending_images(self) -> bool:
        """After the model refused images: the rest of the turn goes without them (True: it sent some)."""
        images = self.setup.images
        if images is None or not images.send or not has_images(self.history.messages):
            return False
        images.send = False
        return True

    async def _cut_reply(self, step: _StepResult, hold: Hold) -> bool:
        """A reply a watch cut is kept up to where it said; True: the model is asked again, else the
        cut reply is the step's answer, the files it wrote out read as from any reply."""
        kept = step.partial_text[: step.looped_at].rstrip() or "…"
        message: Message = {"role": "assistant", "content": [{"type": "text", "text": kept}]}
        again = self.reflector.after_cut()
        if again is None:
            message = await self._calls_from_text(message, step, hold)
        step.message = message
        self.history.append(message)
        if again is None:
            self.emit(ev.Notice(self.reflector.cut_notice()))
            return False
        self._send_back(again)
        return True

    def _show(self, text: str) -> None:
        if text:
            self.emit(ev.Text(text))

    async def _consume(
        self, events: AsyncIterator[Any], step: _StepResult, wire: WireView, hold: Hold
    ) -> None:
        watch = self.reflector.watch(lambda: Shown.of(self.history.messages, self.system_text))
        async for event in events:
            if isinstance(event, TextDelta):
                step.delivered = True
                step.partial_text += event.text
                self._show(hold.feed(event.text))
                if watch is not None and watch.feed(event.text):
                    step.looped_at = watch.keep_until
                    await close_stream(events)  # the request ends: the server stops generating
                    return
            elif isinstance(event, ReasoningDelta):
                step.delivered = True
                self.emit(ev.Reasoning(event.text))
            elif isinstance(event, ToolInputStart):
                step.delivered = True
                self.emit(ev.ToolStart(event.call_id, event.name))
            elif isinstance(event, ToolCallReady):
                step.calls.append(event)
                self.native_calls_seen = True
                self.reply_format = self.reply_format.after_native_call()
            elif isinstance(event, ProviderNotice):
                self.emit(ev.Notice(event.text))
            elif isinstance(event, Retrying):
                self.emit(ev.Retry(event.attempt, event.max_attempts, event.delay_seconds, event.reason))
            elif isinstance(event, StepFinished):
                message = event.message
                if not step.calls:
                    message = await self._calls_from_text(message, step, hold)
                if not step.calls and self.reflector.holds_back(content_text(message.get("content"))):
                    hold.drop()  # sent back, never shown
                self._show(hold.release())
                step.message, step.usage = message, event.usage
                self._count(event.usage)
                # before the append, so the meter it triggers already has the provider's count
                self.setup.window.measured(event.usage, wire)
                self.history.append(message)

    async def _calls_from_text(self, message: Message, step: _StepResult, hold: Hold) -> Message:
        """A reply that made no native call, with the calls the reply format reads in its text
        (calls written as text, files written out) as tool-call parts."""
        parts = message.get("content")
        if not isinstance(parts, list):
            return message
        plan = self.setup.plan
        context = ReplyContext(
            plan.readable_specs,
            plan.unoffered_specs,
            self.history.messages,
            self.setup.workspace,
            self.words,
            self.system_text,
            self.setup.redactor,
        )
        parsed = await self.reply_format.parse(content_text(parts), context)
        if parsed is None:
            return message
        if parsed.declined:
            step.text_calls_declined = True
            return message
        hold.drop()  # the calls are not shown as an answer
        if parsed.notice:
            self.emit(ev.Notice(parsed.notice))
        step.answered_with_files, step.wrote_out = parsed.answered_with_files, parsed.wrote_out
        kept = [p for p in parts if p.get("type") != "text"]
        said = [{"type": "text", "text": parsed.prose}] if parsed.prose else []
        return {**message, "content": kept + said + self._read_calls(parsed.calls, step), **parsed.carried()}

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
        priced = replace(usage, cost_usd=cost_of(self.setup.model, usage) if self.setup.billed else None)
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
