"""One step's tool calls, from the model's call to the result part it reads (spec §7.5–7.6).

For each call: look the tool up, check it is offered, count repeats, ask the permission rules and,
where they say so, the user; hold the workspace reservation, record the checkpoint around the run,
redact the output, and build the result part. ``loop.Turn`` runs the steps and hands each step's
calls to a :class:`ToolCallRunner`, which lives as long as the turn (the repeat counts and the
refused calls are per turn).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal

from shiro_lsp.agent import events as ev
from shiro_lsp.agent.events import Emit
from shiro_lsp.agent.kept_tests import KeptTests
from shiro_lsp.agent.permissions import Origin, RepeatGuard
from shiro_lsp.agent.setup import (
    Answer,
    ApprovalRequest,
    ToolChangesLike,
    TurnSetup,
)
from shiro_lsp.agent.write_limit import WriteLimit
from shiro_lsp.checkpoints.rows import ChangedFile, FilePreview
from shiro_lsp.errors import ShiroError, ToolError, os_error_text
from shiro_lsp.hooks import ALLOWED
from shiro_lsp.images.parts import TOOL_IMAGES, image_part
from shiro_lsp.messages import succeeded as succeeded
from shiro_lsp.providers.types import ToolCallReady
from shiro_lsp.providers.wire import loose_tool_input
from shiro_lsp.tools import ToolContext, parse_arguments, sandbox

log = logging.getLogger(__name__)

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
HEADLESS_HINT = " (headless mode; run with --yolo to allow it)"


class ToolCallRunner:
    """Runs a turn's tool calls: one per turn, :meth:`run` once per step."""

    def __init__(self, setup: TurnSetup, emit: Emit, keep: Callable[[list[dict[str, Any]]], None]) -> None:
        self.setup = setup
        self.emit = emit
        self.keep = keep
        """Where a step's result parts go (the history's tool message), even when it is cancelled."""
        self.repeat_guard = RepeatGuard()
        self.repeats: dict[str, int] = {}
        self.refused: set[str] = set()
        self.stopped = False
        """A call was repeated :data:`REPEAT_STOP_AT` times: the turn ends after this step."""
        self.text_calls: set[str] = set()
        """The ids of the calls read from the model's text (their approval cards say so)."""
        self.shiros_own: set[str] = set()
        """The ids of the calls Shiro makes itself (a command the user named): trusted no more than
        a text call, but never a repeat of the model's."""
        self.for_the_user: set[str] = set()
        """The ids of calls Shiro makes for the user's own words (a URL pasted in a small window): asked
        about as native calls, run though the model is not offered the tool, never a repeat."""
        self._held: AbstractAsyncContextManager[Any] | None = None
        """The workspace reservation kept from one mutating call to the next (:meth:`run`)."""
        self.write_limit = WriteLimit(setup.workspace, setup.max_writes_per_file)
        self.kept_tests = KeptTests(setup.workspace, on=setup.keeps_tests)

    def read_from_text(self, call_id: str) -> None:
        self.text_calls.add(call_id)

    def made_by_shiro(self, call_id: str) -> None:
        self.text_calls.add(call_id)
        self.shiros_own.add(call_id)

    def made_for_the_user(self, call_id: str) -> None:
        self.for_the_user.add(call_id)
        self.shiros_own.add(call_id)

    async def run(self, calls: list[ToolCallReady]) -> list[dict[str, Any]]:
        """The step's calls, one after the other; their result parts go to ``keep`` (also when the
        step is cancelled half-way) and are returned. The workspace reservation taken for a mutating
        call is kept for the next one when that one is mutating too and needs no approval, so the
        checkpoint's look after a call also serves as the next call's look before it."""
        results: list[dict[str, Any]] = []
        self.write_limit.next_step()
        try:
            for i, call in enumerate(calls):
                following = calls[i + 1].name if i + 1 < len(calls) else None
                results.append(await self._run_guarded(call, following))
        finally:
            await self._give_back()
            if results:
                self.keep(results)
        return results

    async def _run_guarded(self, call: ToolCallReady, following: str | None) -> dict[str, Any]:
        """One call; an OS, jail or state error anywhere in its pipeline (permission, preview,
        checkpoint, the tool) is that call's tool error, and the step's other calls still run."""
        try:
            return await self._run_tool(call, following)
        except (OSError, ShiroError, ToolError) as error:
            log.warning("%s failed outside its tool: %s", call.name, error)
            return self._tool_error(call, self.setup.redactor.redact(_message_of(error)))

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
                self.emit(ev.ToolCall(call.call_id, call.name, input, self._text_tag(call)))
                hint = "" if self.setup.yolo else HEADLESS_HINT
                return self._refuse(call, NO_APPROVER_OUTPUT.format(name=call.name, hint=hint))
            if call.name not in plan.tools and call.call_id not in self.for_the_user:
                raise ToolError(self._not_offered(call.name))
            input = parse_arguments(tool.spec, call.arguments)
            refusal = plan.hints.refusal(call.name, input)
            if refusal is not None:
                raise ToolError(refusal)
        except ToolError as error:
            self.emit(
                ev.ToolCall(call.call_id, call.name, loose_tool_input(call.arguments), self._text_tag(call))
            )
            return self._tool_error(call, error.message)
        self.emit(ev.ToolCall(call.call_id, call.name, input, self._text_tag(call)))
        key = RepeatGuard.key(call.name, input)
        own = call.call_id in self.shiros_own
        count = 1 if own else self.repeats.get(key, 0) + 1
        if not own:
            self.repeats[key] = count
        if count >= REPEAT_STOP_AT:
            self.stopped = True
            self.emit(ev.Notice(REPEAT_STOP_NOTICE.format(name=call.name, count=count)))
            return self._refuse(call, REPEAT_STOP_OUTPUT.format(count=count))
        if key in self.refused:
            return self._refuse(call, ALREADY_REFUSED_OUTPUT.format(name=call.name, count=count))
        too_often = self.write_limit.refusal(call.name, input) or self.kept_tests.refusal(call.name, input)
        if too_often is not None:
            output, notice = too_often
            if notice is not None:
                self.emit(ev.Notice(notice))
            return self._refuse(call, output)
        screened = tool.spec.screen(input, self.setup.redactor) if tool.spec.screen is not None else None
        if screened is not None:
            self.refused.add(key)
            self.emit(ev.Notice(screened))
            return self._refuse(call, screened)
        checked = (
            await self.setup.screen.before(call.call_id, call.name, input) if self.setup.screen else ALLOWED
        )
        if checked.stop is not None:
            self.stopped = True
        if checked.refusal is not None:
            return self._refuse(call, checked.refusal)
        refusal = await self._permitted(call, input, checked.permission)
        if refusal is not None:
            self.refused.add(key)
            return result_part(call, refusal, error=True)
        if call.name == "bash":  # no sandbox to be had: said once, with how to get one
            unsandboxed = await asyncio.to_thread(sandbox.unavailable_notice, self.setup.sandbox)
            if unsandboxed is not None:
                self.emit(ev.Notice(unsandboxed))
        redact = self.setup.redactor.redact
        ctx = ToolContext(
            workspace=self.setup.workspace,
            on_output=lambda chunk: self.emit(ev.ToolOutput(call.call_id, redact(chunk))),
            call_id=call.call_id,
            redactor=self.setup.redactor,
            sandbox=self.setup.sandbox,
            sandbox_network=self.setup.sandbox_network,
            web_allow_hosts=self.setup.web_allow_hosts,
            images=self.setup.images.store
            if self.setup.images is not None and self.setup.images.send
            else None,
        )
        changed: ToolChangesLike | None = None
        watch = None
        try:
            await self._hold(call.name)
            watch = await self._watch(call.name, input)
            if watch is not None and self.setup.changes is not None:
                ctx.recorder = self.setup.changes.recorder(watch)
            try:
                output = redact(await registry.run_parsed(call.name, input, tool.spec, ctx))
            finally:
                keep = self._held is not None and self._mutating(following)
                changed = await self._settle(watch, following if keep else None)
                if not keep:
                    await self._give_back()
        except ToolError as error:
            return self._tool_error(call, redact(error.message), changed)
        self.write_limit.wrote(call.name, input)
        self.kept_tests.wrote(call.name, input)
        diff, files = _change_fields(changed)
        shown = redact(diff) if diff else None
        self.emit(ev.ToolResult(call.call_id, call.name, output, shown, files))
        if self.setup.screen is not None:
            output += await self.setup.screen.after(call.call_id, call.name, input, output)
        output = plan.hints.result(call.name, input, output, shown, recorded=watch is not None)
        if count > 1:
            times = "once before" if count == 2 else f"{count - 1} times before"
            output = REPEAT_NOTE.format(name=call.name, times=times) + output
        part = result_part(call, output)
        if ctx.shown_images:
            part[TOOL_IMAGES] = [image_part(image) for image in ctx.shown_images]
        return part

    def _not_offered(self, tool: str) -> str:
        """The tool error for a call to a tool the turn did not offer (it never runs)."""
        instead = self.setup.plan.hints.instead_of(tool)
        hint = f" Use {instead} instead." if instead else ""
        return f"{tool} is not available to the {self.setup.plan.variant.name} agent.{hint}"

    def _refuse(self, call: ToolCallReady, reason: str) -> dict[str, Any]:
        """A call that is not run: the event says why, and so does the result the model reads."""
        self.emit(ev.ToolDenied(call.call_id, call.name, reason))
        return result_part(call, reason, error=True)

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
        except ShiroError as error:  # the jail refused a path: the call is not run unrecorded
            raise ToolError(error.message) from error

    async def _settle(self, watch: Any, prepare: str | None = None) -> ToolChangesLike | None:
        changes = self.setup.changes
        if changes is None or watch is None:
            return None
        try:
            return await changes.after(watch, prepare)
        except (OSError, ValueError, ShiroError, ToolError) as error:  # the call itself did run
            log.warning("checkpoint after a tool failed: %s", error)
            self.emit(ev.Notice(f"Could not record what the call changed: {_message_of(error)}"))
            return None

    def _tool_error(
        self, call: ToolCallReady, message: str, changed: ToolChangesLike | None = None
    ) -> dict[str, Any]:
        diff, files = _change_fields(changed)
        redact = self.setup.redactor.redact
        self.emit(ev.ToolFailed(call.call_id, call.name, message, redact(diff) if diff else None, files))
        return result_part(call, message, error=True)

    async def _permitted(
        self, call: ToolCallReady, input: dict[str, Any], hook: Literal["allow", "ask"] | None = None
    ) -> str | None:
        """None when the call may run; else what the model is told (the event says the same).
        ``hook``: a hook's ``allow`` skips the question (not a refusal, not a warning's question);
        its ``ask`` asks even when a rule allows the call."""
        origin = self._origin_of(call)
        repeats = RepeatGuard() if call.call_id in self.shiros_own else self.repeat_guard
        verdict = self.setup.policy.check(call.name, input, self.setup.grants, repeats, origin)
        if verdict.decision == "allow" and hook != "ask":
            return None
        if verdict.decision == "ask" and hook == "allow" and verdict.warning is None:
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
                hint = "" if self.setup.yolo else HEADLESS_HINT
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
            call.call_id in self.shiros_own,
        )
        answer = await self._ask(request)
        self.emit(
            ev.ToolApproval(
                call.call_id,
                call.name,
                answer.decision,
                verdict.suggested_pattern,
                answer.reason,
                verdict.matched_pattern,
                self._text_tag(call),
                answer.expired,
                [preview.row() for preview in request.previews] if request.previews else None,
            )
        )
        if answer.decision == "always" and verdict.warning is None:
            self.setup.grants.grant(call.name, verdict.suggested_pattern, origin)
        if answer.decision == "deny":
            told = f"{DENIED_OUTPUT} Their reason: {answer.reason}" if answer.reason else DENIED_OUTPUT
            self.emit(ev.ToolDenied(call.call_id, call.name, told))
            return told
        return None

    def _origin_of(self, call: ToolCallReady) -> Origin:
        return "text" if call.call_id in self.text_calls else "native"

    def _text_tag(self, call: ToolCallReady) -> ev.CallOrigin:
        """Who made the call, as its events say."""
        if call.call_id in self.shiros_own:
            return "shiro"
        return "text" if call.call_id in self.text_calls else "model"

    async def _warning(self, tool_name: str, specific: str | None) -> str | None:
        parts = [specific] if specific else []
        if tool_name == "bash":  # the first call probes bubblewrap: off the loop
            parts.append(await asyncio.to_thread(self.setup.bash_warning))
        return " ".join(parts) or None

    async def _previews(self, tool_name: str, input: dict[str, Any]) -> list[FilePreview] | None:
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
        return Answer(answer.decision, reason or None, answer.expired)


def _change_fields(changed: ToolChangesLike | None) -> tuple[str | None, list[ChangedFile] | None]:
    """The ``diff`` and ``files`` a tool card shows for a call that changed files."""
    if changed is None:
        return None, None
    return changed.diff, changed.files


def result_part(call: ToolCallReady, text: str, *, error: bool = False) -> dict[str, Any]:
    return {
        "type": "tool-result",
        "toolCallId": call.call_id,
        "toolName": call.name,
        "output": {"type": "error-text" if error else "text", "value": text},
    }


def _message_of(error: BaseException) -> str:
    """What the model and the user read of an error: its message, or an OS error's text and file."""
    if isinstance(error, ShiroError | ToolError):
        return error.message
    if isinstance(error, OSError):
        return os_error_text(error)
    return str(error)
