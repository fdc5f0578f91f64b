"""The typed event stream: each event's wire JSON is exactly what front ends read, and documented."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from shiro_lsp.agent import events as ev
from shiro_lsp.server import protocol as p

WIRE: list[tuple[ev.Event, dict[str, Any]]] = [
    (ev.Text("hi"), {"type": "text", "text": "hi"}),
    (ev.Reasoning("hm"), {"type": "reasoning", "text": "hm"}),
    (ev.ToolStart("c1", "bash"), {"type": "tool-start", "id": "c1", "name": "bash"}),
    (
        ev.ToolCall("c1", "bash", {"command": "ls"}),
        {"type": "tool-call", "id": "c1", "name": "bash", "input": {"command": "ls"}, "origin": "model"},
    ),
    (
        ev.ToolCall("c2", "bash", {"command": "make"}, "shiro"),
        {"type": "tool-call", "id": "c2", "name": "bash", "input": {"command": "make"}, "origin": "shiro"},
    ),
    (ev.ToolOutput("c1", "a\n"), {"type": "tool-output", "id": "c1", "chunk": "a\n"}),
    (
        ev.ToolResult("c1", "bash", "exit: 0"),
        {"type": "tool-result", "id": "c1", "name": "bash", "output": "exit: 0"},
    ),
    (
        ev.ToolFailed("c1", "bash", "boom"),
        {"type": "tool-error", "id": "c1", "name": "bash", "error": "boom"},
    ),
    (
        ev.ToolDenied("c1", "bash", "User denied this tool call."),
        {"type": "tool-denied", "id": "c1", "name": "bash", "reason": "User denied this tool call."},
    ),
    (
        ev.ToolApproval("c1", "bash", "deny", "ls *", "not now"),
        {
            "type": "approval",
            "id": "c1",
            "name": "bash",
            "decision": "deny",
            "suggestedPattern": "ls *",
            "reason": "not now",
            "origin": "model",
            "expired": False,
        },
    ),
    (ev.Compacted(40, 12), {"type": "compacted", "before": 40, "after": 12}),
    (ev.Notice("careful"), {"type": "notice", "text": "careful"}),
    (
        ev.Retry(2, 4, 3.0, "Rate limited by the provider (429); retry after 3 s."),
        {
            "type": "retry",
            "attempt": 2,
            "maxAttempts": 4,
            "delaySeconds": 3.0,
            "reason": "Rate limited by the provider (429); retry after 3 s.",
        },
    ),
    (ev.Failed("no key"), {"type": "error", "error": "no key"}),
    (
        ev.Done(9, 4, None),
        {"type": "done", "inputTokens": 9, "outputTokens": 4, "costUsd": None},
    ),
]


def test_every_event_kind_is_covered_here() -> None:
    assert {type(event) for event, _ in WIRE} == set(ev.EVENT_TYPES)


@pytest.mark.parametrize(("event", "wire"), WIRE, ids=[w["type"] for _, w in WIRE])
def test_an_event_keeps_its_wire_json_key_for_key(event: ev.Event, wire: dict[str, Any]) -> None:
    assert ev.event_json(event) == wire
    assert list(ev.event_json(event)) == list(wire)  # "type" first, then the fields in order


@pytest.mark.parametrize(("event", "wire"), WIRE, ids=[w["type"] for _, w in WIRE])
def test_the_documented_union_accepts_exactly_what_is_sent(event: ev.Event, wire: dict[str, Any]) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(p.ChatEvent)
    parsed = adapter.validate_python(wire)
    assert parsed.type == wire["type"]
    assert adapter.dump_python(parsed, by_alias=True, exclude_unset=True) == wire


def test_the_documented_union_refuses_an_event_missing_a_field() -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(p.ChatEvent)
    with pytest.raises(ValueError, match="inputTokens"):
        adapter.validate_python({"type": "done", "outputTokens": 1, "costUsd": None})


def test_deltas_of_one_stream_join_and_others_do_not() -> None:
    assert ev.joined(ev.Text("a"), ev.Text("b")) == ev.Text("ab")
    assert ev.joined(ev.ToolOutput("c1", "x"), ev.ToolOutput("c1", "y")) == ev.ToolOutput("c1", "xy")
    assert ev.same_stream(ev.ToolOutput("c1", "x"), ev.ToolOutput("c1", "y"))
    assert not ev.same_stream(ev.ToolOutput("c1", "x"), ev.ToolOutput("c2", "y"))
    assert not ev.same_stream(ev.Text("a"), ev.Reasoning("b"))
