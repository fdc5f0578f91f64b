"""ChatQueue: strict order, cancel and clear, and a shutdown that stops the running turn without hanging."""

from __future__ import annotations

import asyncio

from shiro_lsp.agent.chat_queue import ChatOutcome, ChatQueue, Ticket

SESSION = "session-1"


class Runner:
    """Turns that finish when released (or end as cancelled), recording the order they start in."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.release: dict[str, asyncio.Event] = {}

    async def __call__(self, ticket: Ticket) -> ChatOutcome:
        self.started.append(ticket.text)
        gate = self.release.setdefault(ticket.text, asyncio.Event())
        try:
            await gate.wait()
        except asyncio.CancelledError:
            return ChatOutcome(SESSION, ticket.task_id, "cancelled")
        return ChatOutcome(SESSION, ticket.task_id, "done")

    def finish(self, text: str) -> None:
        self.release.setdefault(text, asyncio.Event()).set()


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_chats_run_one_at_a_time_in_the_order_they_were_sent() -> None:
    runner = Runner()
    queue = ChatQueue(runner, lambda: SESSION)
    first, second = queue.submit("one"), queue.submit("two")
    await settle()
    assert runner.started == ["one"] and queue.busy and queue.queued() == [second]
    runner.finish("one")
    assert (await first.future).stop_reason == "done"
    await settle()
    assert runner.started == ["one", "two"]
    runner.finish("two")
    assert (await second.future).stop_reason == "done"
    await settle()
    assert not queue.busy


async def test_cancelling_the_running_chat_ends_it_and_the_next_one_starts() -> None:
    runner = Runner()
    queue = ChatQueue(runner, lambda: SESSION)
    first, second = queue.submit("one"), queue.submit("two")
    await settle()
    queue.cancel(first.task_id)
    assert (await first.future).stop_reason == "cancelled"
    await settle()
    assert runner.started == ["one", "two"]
    runner.finish("two")
    assert (await second.future).stop_reason == "done"


async def test_a_cancelled_or_cleared_queued_chat_never_runs() -> None:
    runner = Runner()
    queue = ChatQueue(runner, lambda: SESSION)
    first, second, third = queue.submit("one"), queue.submit("two"), queue.submit("three")
    await settle()
    queue.cancel(second.task_id)
    assert (await second.future).stop_reason == "cancelled"
    assert queue.clear() == 1
    assert (await third.future).stop_reason == "queue-cleared"
    runner.finish("one")
    assert (await first.future).stop_reason == "done"
    await settle()
    assert runner.started == ["one"]


async def test_a_turn_that_raises_becomes_an_error_and_the_queue_goes_on() -> None:
    calls: list[str] = []

    async def run(ticket: Ticket) -> ChatOutcome:
        calls.append(ticket.text)
        if ticket.text == "bad":
            raise RuntimeError("a bug")
        return ChatOutcome(SESSION, ticket.task_id, "done")

    queue = ChatQueue(run, lambda: SESSION)
    bad, good = queue.submit("bad"), queue.submit("good")
    failed = await bad.future
    assert failed.stop_reason == "error" and failed.error == "Internal error: a bug"
    assert (await good.future).stop_reason == "done" and calls == ["bad", "good"]


async def test_stop_cancels_the_running_turn_and_clears_the_waiting_ones() -> None:
    runner = Runner()
    queue = ChatQueue(runner, lambda: SESSION)
    running, waiting = queue.submit("one"), queue.submit("two")
    await settle()
    assert await queue.stop(timeout=5) is True
    assert (await running.future).stop_reason == "cancelled"
    assert (await waiting.future).stop_reason == "queue-cleared"
    assert runner.started == ["one"] and not queue.busy


async def test_stop_returns_after_its_timeout_when_a_turn_ignores_the_cancel() -> None:
    stubborn = asyncio.Event()

    async def run(ticket: Ticket) -> ChatOutcome:
        while not stubborn.is_set():  # a tool that swallows cancellation
            try:
                await stubborn.wait()
            except asyncio.CancelledError:
                continue
        return ChatOutcome(SESSION, ticket.task_id, "done")

    queue = ChatQueue(run, lambda: SESSION)
    ticket = queue.submit("stuck")
    await settle()
    assert await asyncio.wait_for(queue.stop(timeout=0.05), 5) is False
    assert not ticket.future.done()
    stubborn.set()
    assert (await ticket.future).stop_reason == "done"


async def test_stop_with_nothing_running_returns_at_once() -> None:
    queue = ChatQueue(Runner(), lambda: SESSION)
    assert await queue.stop(timeout=5) is True
