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
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from shiro_lsp.agent import events as ev
from shiro_lsp.agent.agents import AgentVariant, takes_reasoning_effort
from shiro_lsp.agent.context_window import ContextWindow, WireView
from shiro_lsp.agent.events import Emit, Event
from shiro_lsp.agent.permissions import Grants, PermissionPolicy, RepeatGuard
from shiro_lsp.agent.pricing import cost_of
from shiro_lsp.agent.providers.types import (
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
from shiro_lsp.agent.tools import ToolContext, ToolError, ToolRegistry, ToolSpec, parse_arguments, sandbox
from shiro_lsp.agent.tools.secrets import Redactor
from shiro_lsp.context.prune import detach_provider_items
from shiro_lsp.messages import Message

log = logging.getLogger(__name__)

__all__ = ["Emit", "Event"]  # re-exported: front ends took them from here
Decision = Literal["once", "always", "deny"]

STALE_NOTICE = (
    "The provider no longer had part of this session stored. Re-sent the history inline and carried on."
)
DENIED_OUTPUT = "User denied this tool call."
CANCELLED_OUTPUT = "The user cancelled the turn before this tool call finished, so its effects are unknown."


class History(Protocol):
    """What the engine needs of a live session."""

    @property
    def messages(self) -> list[Message]: ...

    def append(self, *messages: Message) -> None: ...

    def replace(self, messages: list[Message]) -> None: ...

    def add_usage(self, input_tokens: int, output_tokens: int, cost_usd: float | None) -> None: ...


@dataclass(frozen=True)
class ApprovalRequest:
    tool_name: str
    input: Any
    matched_pattern: str | None
    suggested_pattern: str
    repeated: bool
    warning: str | None = None


Approver = Callable[[ApprovalRequest], Awaitable[Decision]]
PromptBuilder = Callable[[], Awaitable[str]]
"""The system prompt from the live state (task list, memory), rebuilt before every model step
(it reads files, so builders run it off the event loop)."""
Reservation = Callable[[], AbstractAsyncContextManager[Any]]


async def deny_all(request: ApprovalRequest) -> Decision:
    """The approver when no one can answer (headless without --yolo): fail closed."""
    return "deny"


@dataclass(frozen=True)
class TurnPlan:
    """Which variant runs and which tools it is offered: decided once per turn (and per meter)."""

    variant: AgentVariant
    registry: ToolRegistry
    tools: tuple[str, ...]
    specs: tuple[ToolSpec, ...]


def plan_turn(variant: AgentVariant, registry: ToolRegistry) -> TurnPlan:
    """The read-only variants are offered the plan-safe tools, the others every registered tool."""
    tools = tuple(registry.read_only() if variant.read_only else registry.names())
    return TurnPlan(variant, registry, tools, tuple(registry.specs(tools)))


@dataclass
class TurnSetup:
    client: ModelClient
    model: str
    plan: TurnPlan
    policy: PermissionPolicy
    grants: Grants
    window: ContextWindow
    system_prompt: PromptBuilder
    workspace: Path
    approver: Approver = deny_all
    reservation: Reservation | None = None
    redactor: Redactor = field(default_factory=Redactor)
    """Cuts secrets (known key formats, the configured keys) out of every tool result."""
    sandbox: str = "off"
    sandbox_network: bool = False

    def bash_warning(self) -> str:
        """What a bash approval card says about where the command runs (sandboxed or not)."""
        return sandbox.warning(self.sandbox, self.sandbox_network)


@dataclass
class TurnOutcome:
    stop_reason: Literal["done", "cancelled", "error"]
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    error: str | None = None


@dataclass
class _StepResult:
    message: Message | None = None
    usage: Usage = field(default_factory=Usage)
    calls: list[ToolCallReady] = field(default_factory=list)
    delivered: bool = False
    partial_text: str = ""


class Turn:
    def __init__(self, setup: TurnSetup, history: History, emit: Emit) -> None:
        self.setup = setup
        self.history = history
        self.emit = emit
        self.repeat_guard = RepeatGuard()
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost: float | None = 0.0
        self.compacted_reported = False
        self.stale_repaired = False

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
        self.emit(ev.Notice(f"stopped after {self.setup.plan.variant.max_steps} steps (the step limit)"))
        self.emit(self._done())
        return self._outcome("done")

    # --- one model call ------------------------------------------------------------------------

    async def _model_step(self) -> _StepResult:
        plan = self.setup.plan
        specs = list(plan.specs)
        while True:
            instructions = await self.setup.system_prompt()
            wire = await self.setup.window.prepare(self.history.messages, instructions, specs)
            if wire.compacted and not self.compacted_reported:
                self.compacted_reported = True
                self.emit(ev.Compacted(wire.before, wire.after))
            request = ModelRequest(
                model=self.setup.model,
                instructions=instructions,
                messages=wire.messages,
                tools=specs,
                reasoning_effort=plan.variant.reasoning_effort
                if takes_reasoning_effort(self.setup.model)
                else None,
            )
            step = _StepResult()
            try:
                await self._consume(self.setup.client.stream(request), step, wire)
            except ProviderError as error:
                if error.is_stale_item and not step.delivered and not self.stale_repaired:
                    self._repair_stale_items()
                    continue
                raise
            except asyncio.CancelledError:
                self._keep_partial(step)
                raise
            return step

    async def _consume(self, events: AsyncIterator[Any], step: _StepResult, wire: WireView) -> None:
        async for event in events:
            if isinstance(event, TextDelta):
                step.delivered = True
                step.partial_text += event.text
                self.emit(ev.Text(event.text))
            elif isinstance(event, ReasoningDelta):
                step.delivered = True
                self.emit(ev.Reasoning(event.text))
            elif isinstance(event, ToolInputStart):
                step.delivered = True
                self.emit(ev.ToolStart(event.call_id, event.name))
            elif isinstance(event, ToolCallReady):
                step.calls.append(event)
            elif isinstance(event, Notice):
                self.emit(ev.Notice(event.text))
            elif isinstance(event, Retrying):
                self.emit(ev.Retry(event.attempt, event.max_attempts, event.delay_seconds, event.reason))
            elif isinstance(event, StepFinished):
                step.message, step.usage = event.message, event.usage
                self._count(event.usage)
                # before the append, so the meter it triggers already has the provider's count
                self.setup.window.measured(event.usage, wire)
                self.history.append(event.message)

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
        cost = cost_of(self.setup.model, usage.input_tokens, usage.output_tokens)
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cost = None if cost is None or self.cost is None else self.cost + cost
        self.history.add_usage(usage.input_tokens, usage.output_tokens, cost)

    # --- tool calls ----------------------------------------------------------------------------

    async def _run_tools(self, calls: list[ToolCallReady]) -> None:
        results: list[dict[str, Any]] = []
        try:
            for call in calls:
                results.append(await self._run_tool(call))
        finally:
            if results:
                self.history.append({"role": "tool", "content": results})

    async def _run_tool(self, call: ToolCallReady) -> dict[str, Any]:
        plan = self.setup.plan
        registry = plan.registry
        try:
            tool = registry.get(call.name)
            if call.name not in plan.tools:
                raise ToolError(f"{call.name} is not available to the {plan.variant.name} agent.")
            input = parse_arguments(tool.spec, call.arguments)
        except ToolError as error:
            self.emit(ev.ToolCall(call.call_id, call.name, _loose_json(call.arguments)))
            return self._tool_error(call, error.message)
        self.emit(ev.ToolCall(call.call_id, call.name, input))
        refused = await self._permitted(call, input)
        if refused is not None:
            return _result_part(call, refused, error=True)
        redact = self.setup.redactor.redact
        ctx = ToolContext(
            workspace=self.setup.workspace,
            on_output=lambda chunk: self.emit(ev.ToolOutput(call.call_id, redact(chunk))),
            call_id=call.call_id,
            redactor=self.setup.redactor,
            sandbox=self.setup.sandbox,
            sandbox_network=self.setup.sandbox_network,
        )
        try:
            async with self._reserve(call.name):
                output = redact(await registry.run(call.name, input, ctx))
        except ToolError as error:
            return self._tool_error(call, redact(error.message))
        self.emit(ev.ToolResult(call.call_id, call.name, output))
        return _result_part(call, output)

    def _tool_error(self, call: ToolCallReady, message: str) -> dict[str, Any]:
        self.emit(ev.ToolFailed(call.call_id, call.name, message))
        return _result_part(call, message, error=True)

    def _reserve(self, tool_name: str) -> AbstractAsyncContextManager[Any]:
        if self.setup.reservation is not None and self.setup.plan.registry.is_mutating(tool_name):
            return self.setup.reservation()
        return nullcontext()

    async def _permitted(self, call: ToolCallReady, input: dict[str, Any]) -> str | None:
        """None when the call may run, else what the model reads instead of a result."""
        verdict = self.setup.policy.check(call.name, input, self.setup.grants, self.repeat_guard)
        if verdict.decision == "allow":
            return None
        if verdict.decision == "deny":
            if verdict.reason:
                self.emit(ev.Notice(verdict.reason))
            self.emit(ev.ToolDenied(call.call_id, call.name))
            return verdict.reason or DENIED_OUTPUT
        request = ApprovalRequest(
            call.name,
            input,
            verdict.matched_pattern,
            verdict.suggested_pattern,
            verdict.repeated,
            await self._warning(call.name, verdict.warning),
        )
        decision = await self._ask(request)
        if decision == "always" and verdict.warning is None:
            self.setup.grants.grant(call.name, verdict.suggested_pattern)
        if decision == "deny":
            self.emit(ev.ToolDenied(call.call_id, call.name))
            return DENIED_OUTPUT
        return None

    async def _warning(self, tool_name: str, specific: str | None) -> str | None:
        parts = [specific] if specific else []
        if tool_name == "bash":  # the first call probes bubblewrap: off the loop
            parts.append(await asyncio.to_thread(self.setup.bash_warning))
        return " ".join(parts) or None

    async def _ask(self, request: ApprovalRequest) -> Decision:
        try:
            decision = await self.setup.approver(request)
        except asyncio.CancelledError:
            raise
        except Exception:  # an approver that fails is a deny: approvals fail closed
            log.exception("approval request failed; denying %s", request.tool_name)
            return "deny"
        return decision if decision in ("once", "always", "deny") else "deny"

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
        return TurnOutcome(reason, self.input_tokens, self.output_tokens, self.cost, error)


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
