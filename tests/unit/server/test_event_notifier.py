"""EventNotifier: numbers a task's events and joins bursts of deltas without losing order or text."""

from __future__ import annotations

import asyncio
from typing import Any

from shiro_lsp.agent import events as ev
from shiro_lsp.server.chat import COALESCE_SECONDS, EventNotifier


async def test_bursts_are_joined_and_order_and_every_character_are_kept() -> None:
    sent: list[dict[str, Any]] = []
    notify = EventNotifier(sent.append, "s1", "t1")
    notify(ev.Text("Hel"))  # the first delta after a quiet spell goes at once
    for piece in ["lo", ", ", "world"]:
        notify(ev.Text(piece))
    notify(ev.ToolOutput("c1", "a"))
    notify(ev.ToolOutput("c1", "b"))
    notify(ev.ToolOutput("c2", "z"))
    notify(ev.Done(3, 2, 0.5))
    await asyncio.sleep(COALESCE_SECONDS * 2)

    assert [m["seq"] for m in sent] == list(range(len(sent)))
    assert all(m["sessionId"] == "s1" and m["taskId"] == "t1" for m in sent)
    wire = [m["event"] for m in sent]
    assert "".join(e["text"] for e in wire if e["type"] == "text") == "Hello, world"
    assert wire[0] == {"type": "text", "text": "Hel"}
    outputs = [(e["id"], e["chunk"]) for e in wire if e["type"] == "tool-output"]
    assert "".join(chunk for cid, chunk in outputs if cid == "c1") == "ab"
    assert outputs[-1] == ("c2", "z")
    assert wire[-1] == {"type": "done", "inputTokens": 3, "outputTokens": 2, "costUsd": 0.5}


async def test_a_held_delta_is_sent_without_waiting_for_another_event() -> None:
    sent: list[dict[str, Any]] = []
    notify = EventNotifier(sent.append, "s", "t")
    notify(ev.Text("a"))
    notify(ev.Text("b"))  # held for the coalescing window; no later event comes to flush it
    await asyncio.sleep(COALESCE_SECONDS * 3)
    assert [m["event"]["text"] for m in sent] == ["a", "b"]


async def test_a_delta_right_after_another_event_goes_at_once() -> None:
    """A notice, a retry or a tool card is not a delta: the answer that follows is not held back."""
    sent: list[dict[str, Any]] = []
    notify = EventNotifier(sent.append, "s", "t")
    notify(ev.Notice("Your message held a secret"))
    notify(ev.Text("Hel"))
    assert [m["event"]["type"] for m in sent] == ["notice", "text"]
    notify(ev.Text("lo"))  # a burst: this one waits for the window
    assert len(sent) == 2
    await asyncio.sleep(COALESCE_SECONDS * 3)
    assert [(m["event"]["type"], m["event"]["text"]) for m in sent][1:] == [("text", "Hel"), ("text", "lo")]
