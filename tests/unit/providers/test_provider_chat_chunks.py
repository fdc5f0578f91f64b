"""Chat chunk shapes that OpenAI-compatible servers other than OpenAI send."""

from __future__ import annotations

from collections.abc import Callable

from provider_helpers import collect, finished, request

from fakes.fake_openai import FakeOpenAI, Reasoning, Step, ToolCall
from shiro_lsp.providers import ModelClient, ReasoningDelta, ToolCallReady, ToolInputStart


async def test_tool_calls_without_an_index_are_told_apart_by_id(
    fake: FakeOpenAI, make: Callable[..., ModelClient]
) -> None:
    fake.chat_dialect = "ollama-legacy"
    fake.script.append(
        Step(
            Reasoning("hmm"),
            ToolCall("read_file", {"path": "a"}, call_id="call_a", chunks=3),
            ToolCall("grep", {"pattern": "x"}, call_id="call_b", chunks=2),
            finish_reason="stop",  # some servers say "stop" after tool calls
        )
    )
    events = await collect(make("chat"), request([{"role": "user", "content": "x"}]))
    assert events[0] == ReasoningDelta("hmm")
    assert [e for e in events if isinstance(e, ToolInputStart)] == [
        ToolInputStart("call_a", "read_file"),
        ToolInputStart("call_b", "grep"),
    ]
    assert [e for e in events if isinstance(e, ToolCallReady)] == [
        ToolCallReady("call_a", "read_file", '{"path": "a"}'),
        ToolCallReady("call_b", "grep", '{"pattern": "x"}'),
    ]
    step = finished(events)
    assert step.finish_reason == "tool-calls"
    assert [p["type"] for p in step.message["content"]] == ["reasoning", "tool-call", "tool-call"]
