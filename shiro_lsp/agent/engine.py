"""The turn engine (spec §7.5–7.6): one user message becomes model steps, tool calls and events.

A turn pushes the user's message, then loops: rebuild the system prompt, prepare the wire view of
the history (pruned to fit, §4.1), stream one model call, append what it said, run the tool calls
it made (asking the user where the policy says so), and go again until the model stops calling
tools, the step limit is hit, an error ends it, or the user cancels.

Events go to ``emit`` as the typed events of ``agent/events.py``, in order; front ends (LSP,
headless) only translate them. A turn ends with ``Done`` or, on failure, with ``Failed`` and no
``Done``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, Protocol

from shiro_lsp.agent import events as ev
from shiro_lsp.agent.agents import AgentVariant, takes_reasoning_effort
from shiro_lsp.agent.context_window import ContextWindow, WireView
from shiro_lsp.agent.events import Emit, Event
from shiro_lsp.agent.permissions import Grants, Origin, PermissionPolicy, RepeatGuard
from shiro_lsp.agent.pricing import cost_of
from shiro_lsp.agent.prompt import COMPACT_OMITTED, compact_spec
from shiro_lsp.agent.text_tools import (
    TextHold,
    ToolCallFormat,
    as_text_protocol,
    echoes_tool_output,
    parse_text_tool_calls,
    split_tagged_calls,
    text_call_notice,
    tool_outputs,
    tools_prompt,
)
from shiro_lsp.context.prune import detach_provider_items
from shiro_lsp.errors import ToolError
from shiro_lsp.fs.secrets import Redactor
from shiro_lsp.messages import Message
from shiro_lsp.providers.types import (
    ModelClient,
    ModelRequest,
    Notice,
    ProviderError,
    ReasoningDelta,
    Retrying,
    StepFinished,
    TextDelta,
    ToolCallReady,
    ToolInputStart,
    Usage,
)
from shiro_lsp.tools import ToolContext, ToolRegistry, ToolSpec, parse_arguments, sandbox
from shiro_lsp.tools.base import WriteRecorder

log = logging.getLogger(__name__)

__all__ = ["Emit", "Event"]  # re-exported: front ends took them from here
Decision = Literal["once", "always", "deny"]

STALE_NOTICE = (
    "The provider no longer had part of this session stored. Re-sent the history inline and carried on."
)
TEXT_FORMAT_NOTICE = (
    "The model server cannot take native tool calls for {model}; Shiro describes the tools in the prompt "
    'instead (toolCallFormat "text") for the rest of this session.'
)
DENIED_OUTPUT = "User denied this tool call."
MAX_REASON = 2_000
NO_APPROVER_OUTPUT = (
    "Not run: {name} needs the user's approval, and no one can give it in this run{hint}. "
    "Do not retry it: finish without it, or tell the user what to run."
)
REPEAT_UNAPPROVED_OUTPUT = (
    "Not run: this is identical call number {count} to {name} in this turn, and a repeat needs the "
    "user's approval, which no one can give in this run. Use the result you already have."
)
ALREADY_REFUSED_OUTPUT = (
    "Not run: this exact {name} call was already refused earlier in this turn (this is identical call "
    "number {count}). Do not repeat it: do something else, or answer the user."
)
REPEAT_NOTE = "[Note: you already made this exact {name} call {times} in this turn; the result is below.]\n"
REPEAT_STOP_OUTPUT = "Not run: the turn was ended because this exact call was repeated {count} times."
REPEAT_STOP_NOTICE = (
    "Stopped: the model made the same {name} call {count} times with the same arguments, so the turn "
    "was ended. Rephrase the request or give it more to go on."
)
REPEAT_STOP_AT = 5
"""The identical call (same name and arguments, allowed or refused) that ends the turn."""
DEFAULT_MAX_OUTPUT_TOKENS = 16_384
MIN_OUTPUT_TOKENS = 256
CANCELLED_OUTPUT = "The user cancelled the turn before this tool call finished, so its effects are unknown."


class History(Protocol):
    """What the engine needs of a live session."""

    @property
    def messages(self) -> list[Message]: ...

    def append(self, *messages: Message) -> None: ...

    def replace(self, messages: list[Message]) -> None: ...

    def add_usage(
        self, input_tokens: int, output_tokens: int, cost_usd: float | None, cached_input_tokens: int = 0
    ) -> None: ...


@dataclass(frozen=True)
class ApprovalRequest:
    tool_name: str
    input: Any
    matched_pattern: str | None
    suggested_pattern: str
    repeated: bool
    warning: str | None = None
    previews: list[dict[str, Any]] | None = None
    """File tools: ``FilePreview`` objects (wire shape), one per file the call would change."""
    call_id: str | None = None
    """The tool call asked about (the id its ``tool-start``/``tool-call`` events carry)."""
    origin: Origin = "native"
    """``text``: Shiro read the call from the model's text; the card says so."""


@dataclass(frozen=True)
class Answer:
    """The user's answer with the reason they gave for a deny (the model reads it)."""

    decision: Decision
    reason: str | None = None


class ChangeTracker(Protocol):
    """Records what the turn's tool calls change (the checkpoint); see ``agent.changes``."""

    async def preview(self, tool_name: str, input: dict[str, Any]) -> list[dict[str, Any]] | None: ...

    async def before(self, tool_name: str, input: dict[str, Any]) -> Any: ...

    def recorder(self, watch: Any) -> WriteRecorder | None:
        """What the tool itself tells about its writes (``ToolContext.recorder``), if anything."""
        ...

    async def after(self, watch: Any, prepare: str | None = None) -> ToolChangesLike | None:
        """What the call changed. ``prepare``: the next call's tool, whose :meth:`before` may then
        be made in the same thread hop (valid until :meth:`drop_prepared`)."""
        ...

    def drop_prepared(self) -> None:
        """The workspace reservation was given back: a prepared ``before`` may be out of date."""
        ...


class ToolChangesLike(Protocol):
    @property
    def diff(self) -> str: ...

    def files_json(self) -> list[dict[str, Any]]: ...


Approver = Callable[[ApprovalRequest], Awaitable[Decision | Answer]]
PromptBuilder = Callable[[], Awaitable[str]]
"""The system prompt from the live state (task list, memory), rebuilt before every model step
(it reads files, so builders run it off the event loop)."""
Reservation = Callable[[], AbstractAsyncContextManager[Any]]


async def deny_all(request: ApprovalRequest) -> Decision | Answer:
    """The approver when no one can answer (headless without --yolo): fail closed."""
    return "deny"


@dataclass(frozen=True)
class TurnPlan:
    """Which variant runs and which tools it is offered: decided once per turn (and per meter)."""

    variant: AgentVariant
    registry: ToolRegistry
    tools: tuple[str, ...]
    specs: tuple[ToolSpec, ...]
    hidden: frozenset[str] = frozenset()
    """Registered tools not offered (never approvable in this front door, or git outside a repository)."""
    compact: bool = False
    """A small context window: the compact prompt, fewer tools, short descriptions (prompt.py)."""

    @cached_property
    def text_tools_prompt(self) -> str:
        """The system prompt's tool section when tool calls are written as text: built once per plan."""
        return tools_prompt(list(self.specs))


def plan_turn(
    variant: AgentVariant,
    registry: ToolRegistry,
    hidden: frozenset[str] = frozenset(),
    *,
    compact: bool = False,
) -> TurnPlan:
    """The read-only variants are offered the plan-safe tools, the others every registered tool."""
    offered = registry.read_only() if variant.read_only else registry.names()
    left_out = hidden | COMPACT_OMITTED if compact else hidden
    tools = tuple(name for name in offered if name not in left_out)
    specs = registry.specs(tools)
    if compact:
        specs = [compact_spec(spec) for spec in specs]
    return TurnPlan(variant, registry, tools, tuple(specs), hidden, compact)


@dataclass
class TurnSetup:
    client: ModelClient
    model: str
    plan: TurnPlan
    policy: PermissionPolicy
    grants: Grants
    window: ContextWindow
    system_prompt: PromptBuilder
    workspace: Path | Sequence[Path]
    """What the tools see: the session's root, or every workspace folder (``jail.Folders``)."""
    approver: Approver = deny_all
    reservation: Reservation | None = None
    changes: ChangeTracker | None = None
    redactor: Redactor = field(default_factory=Redactor)
    """Cuts secrets (known key formats, the configured keys) out of every tool result."""
    sandbox: str = "off"
    sandbox_network: bool = False
    reminder: Callable[[], str] | None = None
    """The task list, sent after the conversation (not in the system prompt: see ``with_reminder``)."""
    can_ask: bool = True
    yolo: bool = False
    tool_call_format: ToolCallFormat = "auto"
    context_window: int | None = None
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS

    def bash_warning(self) -> str:
        """What a bash approval card says about where the command runs (sandboxed or not)."""
        return sandbox.warning(self.sandbox, self.sandbox_network)


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
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    error: str | None = None
    cached_input_tokens: int = 0


@dataclass
class _StepResult:
    message: Message | None = None
    usage: Usage = field(default_factory=Usage)
    calls: list[ToolCallReady] = field(default_factory=list)
    delivered: bool = False
    partial_text: str = ""
    stop: bool = False


class Turn:
    def __init__(self, setup: TurnSetup, history: History, emit: Emit) -> None:
        self.setup = setup
        self.history = history
        self.emit = emit
        self.repeat_guard = RepeatGuard()
        self.repeats: dict[str, int] = {}
        self.refused: set[str] = set()
        self.stopped_by_repeat = False
        self._held: AbstractAsyncContextManager[Any] | None = None
        """The workspace reservation kept from one mutating call to the next (``_run_tools``)."""
        self.input_tokens = 0
        self.output_tokens = 0
        self.cached_input_tokens = 0
        self.cost: float | None = 0.0
        self.compacted_reported = False
        self.stale_repaired = False
        self.tool_call_format: ToolCallFormat = setup.tool_call_format
        self.native_calls_seen = False
        """auto: the model made a native call, so its text is text from then on (text_tools.py)."""
        self.text_calls: set[str] = set()
        """The ids of the calls read from the model's text."""

    async def run(self, text: str) -> TurnOutcome:
        self.history.append({"role": "user", "content": text})
        try:
            return await self._loop()
        except asyncio.CancelledError:
            self._close_open_calls()
            self.emit(self._done())
            return self._outcome("cancelled")

    async def _loop(self) -> TurnOutcome:
        for _ in range(self.setup.plan.variant.max_steps):
            try:
                step = await self._model_step()
            except ProviderError as error:
                self.emit(ev.Failed(error.message))
                return self._outcome("error", error.message)
            if not step.calls:
                self.emit(self._done())
                return self._outcome("done")
            await self._run_tools(step.calls)
            if self.stopped_by_repeat:
                self.emit(self._done())
                return self._outcome("done")
        self.emit(ev.Notice(f"stopped after {self.setup.plan.variant.max_steps} steps (the step limit)"))
        self.emit(self._done())
        return self._outcome("done")

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
            messages = with_reminder(wire.messages, reminder)
            request = ModelRequest(
                model=self.setup.model,
                instructions=sent_instructions,
                messages=as_text_protocol(messages) if text_format else messages,
                tools=offered,
                reasoning_effort=plan.variant.reasoning_effort
                if takes_reasoning_effort(self.setup.model)
                else None,
                max_output_tokens=output_budget(self.setup, wire.tokens),
            )
            step = _StepResult()
            hold = TextHold(enabled=self.tool_call_format != "native", tagged=text_format)
            try:
                await self._consume(self.setup.client.stream(request), step, wire, hold, specs)
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
        async for event in events:
            if isinstance(event, TextDelta):
                step.delivered = True
                step.partial_text += event.text
                self._show(hold.feed(event.text))
            elif isinstance(event, ReasoningDelta):
                step.delivered = True
                self.emit(ev.Reasoning(event.text))
            elif isinstance(event, ToolInputStart):
                step.delivered = True
                self.emit(ev.ToolStart(event.call_id, event.name))
            elif isinstance(event, ToolCallReady):
                step.calls.append(event)
                self._native_call_seen()
            elif isinstance(event, Notice):
                self.emit(ev.Notice(event.text))
            elif isinstance(event, Retrying):
                self.emit(ev.Retry(event.attempt, event.max_attempts, event.delay_seconds, event.reason))
            elif isinstance(event, StepFinished):
                message = event.message
                if not step.calls and hold.enabled:
                    message = self._calls_from_text(message, step, hold, specs)
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

    def _calls_from_text(
        self, message: Message, step: _StepResult, hold: TextHold, specs: list[ToolSpec]
    ) -> Message:
        """A message that is wholly tool calls written as text becomes those calls (text_tools.py)."""
        parts = message.get("content")
        if not isinstance(parts, list):
            return message
        text = "".join(p.get("text", "") for p in parts if p.get("type") == "text")
        tools = {spec.name: spec for spec in specs}
        prose, calls = "", parse_text_tool_calls(text, tools)
        if not calls and hold.tagged:
            prose, calls = split_tagged_calls(text, tools) or ("", None)
        outputs = tool_outputs(self.history.messages) if calls else []
        if not calls or any(echoes_tool_output(call, outputs) for call in calls):
            return message
        hold.drop()  # the call is not shown as an answer
        if not hold.tagged:  # the text format asked for calls as text: nothing to tell
            self.emit(ev.Notice(text_call_notice(calls)))
        tool_parts: list[dict[str, Any]] = []
        for call in calls:
            call_id = f"call_text_{uuid.uuid4().hex[:16]}"
            self.text_calls.add(call_id)
            step.calls.append(ToolCallReady(call_id, call.name, json.dumps(call.input)))
            tool_parts.append(
                {
                    "type": "tool-call",
                    "toolCallId": call_id,
                    "toolName": call.name,
                    "input": call.input,
                    "providerOptions": {"shiro": {"fromText": True}},
                }
            )
        kept = [p for p in parts if p.get("type") != "text"]
        said = [{"type": "text", "text": prose}] if prose else []
        return {**message, "content": kept + said + tool_parts}

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
        cost = cost_of(self.setup.model, usage.input_tokens, usage.output_tokens, usage.cached_input_tokens)
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cached_input_tokens += usage.cached_input_tokens
        self.cost = None if cost is None or self.cost is None else self.cost + cost
        self.history.add_usage(usage.input_tokens, usage.output_tokens, cost, usage.cached_input_tokens)

    # --- tool calls ----------------------------------------------------------------------------

    async def _run_tools(self, calls: list[ToolCallReady]) -> None:
        """The step's calls, one after the other. The workspace reservation taken for a mutating
        call is kept for the next one when that one is mutating too and needs no approval, so
        the checkpoint's look after a call also serves as the next call's look before it."""
        results: list[dict[str, Any]] = []
        try:
            for i, call in enumerate(calls):
                following = calls[i + 1].name if i + 1 < len(calls) else None
                results.append(await self._run_tool(call, following))
        finally:
            await self._give_back()
            if results:
                self.history.append({"role": "tool", "content": results})

    def _mutating(self, tool_name: str | None) -> bool:
        return tool_name is not None and self.setup.plan.registry.is_mutating(tool_name)

    async def _hold(self, tool_name: str) -> None:
        """The reservation for a mutating call: the one kept from the call before, or a new one."""
        if self.setup.reservation is None or not self._mutating(tool_name):
            await self._give_back()
            return
        if self._held is None:
            held = self.setup.reservation()
            await held.__aenter__()
            self._held = held

    async def _give_back(self) -> None:
        held, self._held = self._held, None
        if held is None:
            return
        if self.setup.changes is not None:
            self.setup.changes.drop_prepared()
        await held.__aexit__(None, None, None)

    async def _run_tool(self, call: ToolCallReady, following: str | None = None) -> dict[str, Any]:
        plan = self.setup.plan
        registry = plan.registry
        try:
            tool = registry.get(call.name)
            if call.name in plan.hidden and not self.setup.can_ask:
                input = parse_arguments(tool.spec, call.arguments)
                self.emit(ev.ToolCall(call.call_id, call.name, input, self._origin_tag(call)))
                hint = "" if self.setup.yolo else " (headless mode; run with --yolo to allow it)"
                return self._refuse(call, NO_APPROVER_OUTPUT.format(name=call.name, hint=hint))
            if call.name not in plan.tools:
                raise ToolError(f"{call.name} is not available to the {plan.variant.name} agent.")
            input = parse_arguments(tool.spec, call.arguments)
        except ToolError as error:
            self.emit(
                ev.ToolCall(call.call_id, call.name, _loose_json(call.arguments), self._origin_tag(call))
            )
            return self._tool_error(call, error.message)
        self.emit(ev.ToolCall(call.call_id, call.name, input, self._origin_tag(call)))
        key = RepeatGuard.key(call.name, input)
        count = self.repeats[key] = self.repeats.get(key, 0) + 1
        if count >= REPEAT_STOP_AT:
            self.stopped_by_repeat = True
            self.emit(ev.Notice(REPEAT_STOP_NOTICE.format(name=call.name, count=count)))
            return self._refuse(call, REPEAT_STOP_OUTPUT.format(count=count), notice=False)
        if key in self.refused:
            return self._refuse(call, ALREADY_REFUSED_OUTPUT.format(name=call.name, count=count))
        refusal = await self._permitted(call, input)
        if refusal is not None:
            self.refused.add(key)
            return _result_part(call, refusal, error=True)
        redact = self.setup.redactor.redact
        ctx = ToolContext(
            workspace=self.setup.workspace,
            on_output=lambda chunk: self.emit(ev.ToolOutput(call.call_id, redact(chunk))),
            call_id=call.call_id,
            redactor=self.setup.redactor,
            sandbox=self.setup.sandbox,
            sandbox_network=self.setup.sandbox_network,
        )
        changed: ToolChangesLike | None = None
        try:
            await self._hold(call.name)
            watch = await self._watch(call.name, input)
            if watch is not None and self.setup.changes is not None:
                ctx.recorder = self.setup.changes.recorder(watch)
            try:
                output = redact(await registry.run(call.name, input, ctx))
            finally:
                keep = self._held is not None and self._mutating(following)
                changed = await self._settle(watch, following if keep else None)
                if not keep:
                    await self._give_back()
        except ToolError as error:
            return self._tool_error(call, redact(error.message), changed)
        diff, files = _change_fields(changed)
        self.emit(ev.ToolResult(call.call_id, call.name, output, redact(diff) if diff else None, files))
        if count > 1:
            times = "once before" if count == 2 else f"{count - 1} times before"
            return _result_part(call, REPEAT_NOTE.format(name=call.name, times=times) + output)
        return _result_part(call, output)

    def _refuse(self, call: ToolCallReady, reason: str, *, notice: bool = True) -> dict[str, Any]:
        """A call that is not run: the event says why, and so does the result the model reads."""
        self.emit(ev.ToolDenied(call.call_id, call.name, reason))
        return _result_part(call, reason, error=True)

    async def _watch(self, tool_name: str, input: dict[str, Any]) -> Any:
        """Before a call that may change files: record what it is about to change."""
        changes = self.setup.changes
        if changes is None or not self.setup.plan.registry.is_mutating(tool_name):
            return None
        try:
            return await changes.before(tool_name, input)
        except (OSError, ValueError) as error:
            log.warning("checkpoint before %s failed: %s", tool_name, error)
            self.emit(ev.Notice(f"Could not record a checkpoint before {tool_name}: {error}"))
            return None

    async def _settle(self, watch: Any, prepare: str | None = None) -> ToolChangesLike | None:
        changes = self.setup.changes
        if changes is None or watch is None:
            return None
        try:
            return await changes.after(watch, prepare)
        except (OSError, ValueError) as error:
            log.warning("checkpoint after a tool failed: %s", error)
            return None

    def _tool_error(
        self, call: ToolCallReady, message: str, changed: ToolChangesLike | None = None
    ) -> dict[str, Any]:
        diff, files = _change_fields(changed)
        redact = self.setup.redactor.redact
        self.emit(ev.ToolFailed(call.call_id, call.name, message, redact(diff) if diff else None, files))
        return _result_part(call, message, error=True)

    async def _permitted(self, call: ToolCallReady, input: dict[str, Any]) -> str | None:
        """None when the call may run; else what the model is told (the event says the same)."""
        origin = self._origin(call)
        verdict = self.setup.policy.check(call.name, input, self.setup.grants, self.repeat_guard, origin)
        if verdict.decision == "allow":
            return None
        if verdict.decision == "deny":
            reason = verdict.reason or f"Refused by the permission rules: {call.name} is denied."
            self.emit(ev.Notice(reason))
            self.emit(ev.ToolDenied(call.call_id, call.name, reason))
            return reason
        if not self.setup.can_ask:
            if verdict.repeated:
                count = self.repeats.get(RepeatGuard.key(call.name, input), 0)
                reason = REPEAT_UNAPPROVED_OUTPUT.format(name=call.name, count=count)
            else:
                hint = "" if self.setup.yolo else " (headless mode; run with --yolo to allow it)"
                reason = NO_APPROVER_OUTPUT.format(name=call.name, hint=hint)
            self.emit(ev.ToolDenied(call.call_id, call.name, reason))
            return reason
        await self._give_back()  # nobody waits for the workspace while the user decides
        request = ApprovalRequest(
            call.name,
            input,
            verdict.matched_pattern,
            verdict.suggested_pattern,
            verdict.repeated,
            await self._warning(call.name, verdict.warning),
            await self._previews(call.name, input),
            call.call_id,
            origin,
        )
        answer = await self._ask(request)
        if answer.decision == "always" and verdict.warning is None:
            self.setup.grants.grant(call.name, verdict.suggested_pattern, origin)
        if answer.decision == "deny":
            told = f"{DENIED_OUTPUT} Their reason: {answer.reason}" if answer.reason else DENIED_OUTPUT
            self.emit(ev.ToolDenied(call.call_id, call.name, told))
            return told
        return None

    def _origin(self, call: ToolCallReady) -> Origin:
        return "text" if call.call_id in self.text_calls else "native"

    def _origin_tag(self, call: ToolCallReady) -> Literal["text"] | None:
        return "text" if call.call_id in self.text_calls else None

    async def _warning(self, tool_name: str, specific: str | None) -> str | None:
        parts = [specific] if specific else []
        if tool_name == "bash":  # the first call probes bubblewrap: off the loop
            parts.append(await asyncio.to_thread(self.setup.bash_warning))
        return " ".join(parts) or None

    async def _previews(self, tool_name: str, input: dict[str, Any]) -> list[dict[str, Any]] | None:
        changes = self.setup.changes
        if changes is None:
            return None
        try:
            return await changes.preview(tool_name, input)
        except (OSError, ValueError) as error:
            log.warning("preview of %s failed: %s", tool_name, error)
            return None

    async def _ask(self, request: ApprovalRequest) -> Answer:
        try:
            reply = await self.setup.approver(request)
        except asyncio.CancelledError:
            raise
        except Exception:  # an approver that fails is a deny: approvals fail closed
            log.exception("approval request failed; denying %s", request.tool_name)
            return Answer("deny")
        answer = reply if isinstance(reply, Answer) else Answer(reply)
        if answer.decision not in ("once", "always", "deny"):
            return Answer("deny")
        reason = answer.reason.strip()[:MAX_REASON] if isinstance(answer.reason, str) else None
        return Answer(answer.decision, reason or None)

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
                _result_part(ToolCallReady(p["toolCallId"], p["toolName"], ""), CANCELLED_OUTPUT, error=True)
                for p in open_calls
            ]
            self.history.append({"role": "tool", "content": closing})

    # --- results -------------------------------------------------------------------------------

    def _done(self) -> ev.Done:
        return ev.Done(self.input_tokens, self.output_tokens, self.cost)

    def _outcome(
        self, reason: Literal["done", "cancelled", "error"], error: str | None = None
    ) -> TurnOutcome:
        return TurnOutcome(
            reason, self.input_tokens, self.output_tokens, self.cost, error, self.cached_input_tokens
        )


def _change_fields(changed: ToolChangesLike | None) -> tuple[str | None, list[dict[str, Any]] | None]:
    """The ``diff`` and ``files`` a tool card shows for a call that changed files."""
    if changed is None:
        return None, None
    return changed.diff, changed.files_json()


def _result_part(call: ToolCallReady, text: str, *, error: bool = False) -> dict[str, Any]:
    return {
        "type": "tool-result",
        "toolCallId": call.call_id,
        "toolName": call.name,
        "output": {"type": "error-text" if error else "text", "value": text},
    }


def _loose_json(text: str) -> Any:
    try:
        return json.loads(text) if text else {}
    except json.JSONDecodeError:
        return text
