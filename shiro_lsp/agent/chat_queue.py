"""Chats: the FIFO queue of turns and their task ids (the runtime builds each turn: ``runtime.py``).

A chat sent while a turn runs waits its turn (strict order). Cancelling the running chat aborts
its turn (the partial answer stays in history); cancelling a queued one just removes it;
clearing the queue resolves every waiting chat with ``queue-cleared``.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal

from shiro_lsp.agent.loop import TurnOutcome
from shiro_lsp.ids import new_id
from shiro_lsp.usage import NOT_RUN, Usage

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 5.0  # how long a shutdown waits for the running turn to end
StopReason = Literal["done", "cancelled", "error", "queue-cleared"]


@dataclass
class ChatOutcome:
    session_id: str
    task_id: str
    stop_reason: StopReason
    usage: Usage = NOT_RUN
    error: str | None = None


@dataclass
class Ticket:
    task_id: str
    text: str
    agent: str | None
    future: asyncio.Future[ChatOutcome] = field(repr=False)
    inputs: dict[str, str] | None = None
    """Values for a custom command's ``${input:name}`` variables (the panel's form, ``--input``)."""
    images: tuple[tuple[str, str], ...] = ()
    """The images sent with the prompt: (id in the image store, name)."""


# Runs one chat to its end; raises nothing (failures become outcomes).
TurnRunner = Callable[[Ticket], Coroutine[Any, Any, ChatOutcome]]


def new_task_id() -> str:
    return new_id()


class ChatQueue:
    def __init__(self, run: TurnRunner, session_id: Callable[[], str]) -> None:
        self._run = run
        self._session_id = session_id
        self._waiting: collections.deque[Ticket] = collections.deque()
        self._running: tuple[Ticket, asyncio.Task[ChatOutcome]] | None = None
        self._worker: asyncio.Task[None] | None = None

    @property
    def busy(self) -> bool:
        return self._running is not None or bool(self._waiting)

    def submit(
        self,
        text: str,
        agent: str | None = None,
        inputs: dict[str, str] | None = None,
        images: tuple[tuple[str, str], ...] = (),
    ) -> Ticket:
        future = asyncio.get_running_loop().create_future()
        ticket = Ticket(new_task_id(), text, agent, future, inputs, images)
        self._waiting.append(ticket)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return ticket

    def queued(self) -> list[Ticket]:
        return list(self._waiting)

    def clear(self) -> int:
        cleared = 0
        while self._waiting:
            self._resolve(self._waiting.popleft(), "queue-cleared")
            cleared += 1
        return cleared

    def cancel(self, task_id: str) -> None:
        if self._running and self._running[0].task_id == task_id:
            self._running[1].cancel()
            return
        for ticket in list(self._waiting):
            if ticket.task_id == task_id:
                self._waiting.remove(ticket)
                self._resolve(ticket, "cancelled")

    async def stop(self, timeout: float = STOP_TIMEOUT_S) -> bool:
        """Shutdown: clear the queue and cancel the running turn (it keeps its partial answer).

        Waits at most ``timeout`` seconds for the turn to end, so a turn that does not stop (a tool
        that ignores cancellation) cannot hold up the shutdown. Returns whether it ended.
        """
        self.clear()
        if self._running:
            self._running[1].cancel()
        worker = self._worker
        if worker is None or worker.done():
            return True
        done, _ = await asyncio.wait({worker}, timeout=timeout)
        if not done:
            log.warning("the running turn did not stop within %.0f s of the shutdown", timeout)
        return bool(done)

    def _resolve(self, ticket: Ticket, reason: StopReason) -> None:
        if not ticket.future.done():
            ticket.future.set_result(ChatOutcome(self._session_id(), ticket.task_id, reason))

    async def _drain(self) -> None:
        while self._waiting:
            ticket = self._waiting.popleft()
            task = asyncio.create_task(self._run(ticket))
            self._running = (ticket, task)
            try:
                outcome = await task
            except asyncio.CancelledError:  # cancelled before the turn could catch it
                outcome = ChatOutcome(self._session_id(), ticket.task_id, "cancelled")
            except Exception as error:  # a bug must not strand the chats queued behind it
                log.exception("turn %s failed", ticket.task_id)
                outcome = ChatOutcome(
                    self._session_id(), ticket.task_id, "error", error=f"Internal error: {error}"
                )
            finally:
                self._running = None
            if not ticket.future.done():
                ticket.future.set_result(outcome)


def chat_outcome(session_id: str, task_id: str, outcome: TurnOutcome) -> ChatOutcome:
    return ChatOutcome(session_id, task_id, outcome.stop_reason, outcome.usage, outcome.error)
