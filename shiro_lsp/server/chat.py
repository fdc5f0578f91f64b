"""Chat over LSP: `shiro/chat`, the queue, `shiro/event` notifications, `shiro/approve`, the meter."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from shiro_lsp.agent.chat_queue import ChatOutcome
from shiro_lsp.agent.context_window import Meter
from shiro_lsp.agent.events import (
    Delta,
    Emit,
    Event,
    Reasoning,
    Text,
    ToolOutput,
    event_json,
    joined,
    same_stream,
)
from shiro_lsp.agent.permissions import Grant, Grants
from shiro_lsp.agent.runtime import CompactionPhase
from shiro_lsp.agent.setup import Answer, ApprovalRequest, Decision
from shiro_lsp.checkpoints.rows import TurnChangesView
from shiro_lsp.server import protocol as p
from shiro_lsp.server.rpc import ShiroServer, changes_wire, compaction_wire, fs_path, request, todos_wire
from shiro_lsp.state.sessions.record import Compaction

log = logging.getLogger(__name__)

COALESCE_SECONDS = 0.03


class EventNotifier:
    """Numbers a task's events and coalesces runs of text deltas so the editor is not flooded.

    The first delta after a quiet spell goes out at once (no added latency); later ones within
    ``COALESCE_SECONDS`` are joined. Any other event flushes first, so order and every character
    are kept.
    """

    def __init__(self, send: Callable[[dict[str, Any]], None], session_id: str, task_id: str) -> None:
        self._send = send
        self._session_id = session_id
        self._task_id = task_id
        self._seq = 0
        self._pending: Delta | None = None
        self._last_flush = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def __call__(self, event: Event) -> None:
        if not isinstance(event, Text | Reasoning | ToolOutput):
            self.flush()
            self._deliver(event)
            return
        if self._pending is not None and not same_stream(self._pending, event):
            self.flush()
        self._pending = event if self._pending is None else joined(self._pending, event)
        wait = self._last_flush + COALESCE_SECONDS - time.monotonic()
        if wait <= 0:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(wait, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self._deliver(pending)
            self._last_flush = time.monotonic()  # only a delta starts a window: not a tool card, a notice

    def _deliver(self, event: Event) -> None:
        self._send(
            {
                "sessionId": self._session_id,
                "taskId": self._task_id,
                "seq": self._seq,
                "event": event_json(event),
            }
        )
        self._seq += 1


class LspFrontend:
    """What the agent runtime needs from the editor, over this connection."""

    def __init__(self, server: ShiroServer) -> None:
        self.server = server

    def emitter(self, session_id: str, task_id: str) -> Emit:
        return EventNotifier(
            lambda params: self.server.protocol.notify("shiro/event", params), session_id, task_id
        )

    async def approve(self, task_id: str, request: ApprovalRequest) -> Decision | Answer:
        previews = list(request.previews or [])
        params = p.ApproveParams(
            task_id=task_id,
            tool_name=request.tool_name,
            input=request.input,
            matched_pattern=request.matched_pattern,
            suggested_pattern=request.suggested_pattern,
            repeated=request.repeated,
            preview=previews[0] if previews else None,
            previews=previews if len(previews) > 1 else None,
            warning=request.warning,
            origin="shiro" if request.by_shiro else request.origin,
        )
        timeout = self.server.shiro.settings.approval_timeout_ms / 1000
        try:
            reply = await asyncio.wait_for(
                self.server.protocol.send_request_async(
                    "shiro/approve", params.model_dump(mode="json", by_alias=True)
                ),
                timeout,
            )
            result = p.ApproveResult.model_validate(reply)
            return Answer(result.decision, result.reason)
        except TimeoutError:
            log.warning("approval for %s denied: no answer in time", request.tool_name)
            return Answer("deny", expired=True)
        except ValidationError:
            log.warning("approval for %s denied: ValidationError", request.tool_name)
            return "deny"
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the client answered with an error: fail closed
            log.warning("approval for %s denied: client error %s", request.tool_name, error)
            return "deny"

    def todos_changed(self) -> None:
        self.server.notify("shiro/todos/changed", todos_wire(self.server.shiro.tasks))

    def context_changed(self, meter: Meter) -> None:
        self.server.notify("shiro/context/changed", p.ContextMeter.model_validate(meter.to_json()))

    def changes_changed(self, view: TurnChangesView) -> None:
        self.server.notify("shiro/changes/changed", changes_wire(view))

    def compaction_progress(
        self, phase: CompactionPhase, messages: int, marker: object | None = None
    ) -> None:
        added = compaction_wire(marker) if isinstance(marker, Compaction) else None
        self.server.notify(
            "shiro/session/compacting", p.CompactionProgress(phase=phase, messages=messages, compaction=added)
        )


def chat_result(outcome: ChatOutcome) -> p.ChatResult:
    return p.ChatResult(
        session_id=outcome.session_id,
        task_id=outcome.task_id,
        stop_reason=outcome.stop_reason,
        usage=p.ChatUsage(
            input_tokens=outcome.usage.input_tokens,
            output_tokens=outcome.usage.output_tokens,
            cost_usd=outcome.usage.cost_usd,
            cached_tokens=outcome.usage.cached_input_tokens,
        ),
        error=outcome.error,
    )


def session_grants(ls: ShiroServer) -> Grants:
    runtime = ls.shiro.runtime
    return runtime.grants(runtime.session())


def grants_wire(grants: Grants) -> list[p.GrantItem]:
    return [p.GrantItem(tool_name=g.tool_name, pattern=g.pattern, origin=g.origin) for g in grants.listed()]


def register(server: ShiroServer) -> None:
    @request(server, "shiro/chat")
    async def chat(ls: ShiroServer, params: p.ChatParams) -> p.ChatResult:
        shiro = await ls.folders.for_chat(fs_path(params.root) if params.root else None)
        runtime = shiro.runtime
        images = [(i.id, i.name) for i in params.images or []]
        ticket = runtime.submit(params.text, params.agent, params.inputs, images)
        try:
            outcome = await asyncio.shield(ticket.future)
        except asyncio.CancelledError:  # $/cancelRequest: stop the turn, answer with what it did
            runtime.queue.cancel(ticket.task_id)
            outcome = await ticket.future
        return chat_result(outcome)

    @request(server, "shiro/queue")
    async def queue(ls: ShiroServer, params: p.Empty) -> p.QueueResult:
        waiting = ls.shiro.runtime.queue.queued()
        return p.QueueResult(queued=[p.QueuedChat(task_id=t.task_id, text=t.text) for t in waiting])

    @request(server, "shiro/queue/clear")
    async def clear(ls: ShiroServer, params: p.Empty) -> p.QueueClearResult:
        return p.QueueClearResult(cleared=ls.shiro.runtime.queue.clear())

    @request(server, "shiro/grants")
    async def grants(ls: ShiroServer, params: p.Empty) -> p.GrantsResult:
        return p.GrantsResult(grants=grants_wire(session_grants(ls)))

    @request(server, "shiro/grants/revoke")
    async def revoke_grant(ls: ShiroServer, params: p.GrantRevokeParams) -> p.GrantRevokeResult:
        given = session_grants(ls)
        wanted = Grant(params.grant.tool_name, params.grant.pattern, params.grant.origin)
        revoked = given.revoke(wanted)
        return p.GrantRevokeResult(revoked=revoked, grants=grants_wire(given))

    @request(server, "shiro/context")
    async def context(ls: ShiroServer, params: p.Empty) -> p.ContextMeter:
        return p.ContextMeter.model_validate((await ls.shiro.runtime.current_meter()).to_json())
