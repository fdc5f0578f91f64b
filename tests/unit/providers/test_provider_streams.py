"""Both adapters against the fake server through the real SDK: events out, request bodies in."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from provider_helpers import READ_FILE, collect, finished, request

from fakes.fake_openai import FakeOpenAI, Reasoning, Step, Text, ToolCall, Usage
from shiro_lsp.providers import (
    ModelClient,
    ReasoningDelta,
    StepFinished,
    TextDelta,
    ToolCallReady,
    ToolInputStart,
)
from shiro_lsp.usage import Usage as ProviderUsage

Make = Callable[..., ModelClient]

STEP = Step(
    Reasoning("I should read it", id="rs_1", chunks=2, encrypted_content="enc_1"),
    Text("Reading a.py", id="msg_1", chunks=3),
    ToolCall("read_file", {"path": "a.py"}, call_id="call_1", id="fc_1", chunks=3),
    usage=Usage(100, 20, cached_tokens=40, reasoning_tokens=8),
)


async def test_responses_stream_gives_deltas_tool_events_and_the_assistant_message(
    fake: FakeOpenAI, make: Make
) -> None:
    fake.script.append(STEP)
    events = await collect(make("responses"), request([{"role": "user", "content": "read a.py"}]))

    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "I should read it"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Reading a.py"
    assert [e for e in events if isinstance(e, ToolInputStart)] == [ToolInputStart("call_1", "read_file")]
    assert [e for e in events if isinstance(e, ToolCallReady)] == [
        ToolCallReady("call_1", "read_file", '{"path": "a.py"}')
    ]
    step = finished(events)
    assert step.finish_reason == "tool-calls"
    assert step.usage == ProviderUsage(100, 20, cached_input_tokens=40, reasoning_tokens=8)
    assert step.message == {
        "role": "assistant",
        "content": [
            {
                "type": "reasoning",
                "text": "I should read it",
                "providerOptions": {"openai": {"itemId": "rs_1", "reasoningEncryptedContent": "enc_1"}},
            },
            {"type": "text", "text": "Reading a.py", "providerOptions": {"openai": {"itemId": "msg_1"}}},
            {
                "type": "tool-call",
                "toolCallId": "call_1",
                "toolName": "read_file",
                "input": {"path": "a.py"},
                "providerOptions": {"openai": {"itemId": "fc_1"}},
            },
        ],
    }
    events_order = [type(e).__name__ for e in events]
    assert events_order.index("ToolInputStart") < events_order.index("ToolCallReady") < len(events) - 1


async def test_responses_request_body(fake: FakeOpenAI, make: Make) -> None:
    fake.script.append(Step(Text("ok")))
    req = request([{"role": "user", "content": "hi"}], tools=[READ_FILE], reasoning_effort="high")
    await collect(make("responses"), req)
    body = fake.requests[0]["body"]
    assert fake.requests[0]["path"] == "/v1/responses"
    assert body["stream"] is True and body["store"] is False
    assert body["instructions"] == "You are Shiro."
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "read_file",
            "description": READ_FILE.description,
            "parameters": READ_FILE.parameters,
            "strict": False,
        }
    ]
    assert body["input"] == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    ]


async def test_responses_without_reasoning_sends_no_reasoning_options(fake: FakeOpenAI, make: Make) -> None:
    fake.script.append(Step(Text("ok")))
    await collect(make("responses"), request([{"role": "user", "content": "hi"}], max_output_tokens=50))
    body = fake.requests[0]["body"]
    assert "reasoning" not in body and "include" not in body and "tools" not in body
    assert body["max_output_tokens"] == 50


async def test_chat_stream_gives_deltas_tool_events_and_the_assistant_message(
    fake: FakeOpenAI, make: Make
) -> None:
    fake.script.append(STEP)
    events = await collect(make("chat"), request([{"role": "user", "content": "read a.py"}]))

    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "I should read it"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Reading a.py"
    assert [e for e in events if isinstance(e, ToolInputStart)] == [ToolInputStart("call_1", "read_file")]
    assert [e for e in events if isinstance(e, ToolCallReady)] == [
        ToolCallReady("call_1", "read_file", '{"path": "a.py"}')
    ]
    step = finished(events)
    assert step.finish_reason == "tool-calls"
    assert step.usage == ProviderUsage(100, 20, cached_input_tokens=40, reasoning_tokens=8)
    assert step.message["content"] == [
        {"type": "reasoning", "text": "I should read it"},
        {"type": "text", "text": "Reading a.py"},
        {"type": "tool-call", "toolCallId": "call_1", "toolName": "read_file", "input": {"path": "a.py"}},
    ]


async def test_chat_request_body(fake: FakeOpenAI, make: Make) -> None:
    fake.script.append(Step(Text("ok")))
    req = request(
        [{"role": "user", "content": "hi"}], tools=[READ_FILE], reasoning_effort="low", max_output_tokens=9
    )
    await collect(make("chat"), req)
    body = fake.requests[0]["body"]
    assert fake.requests[0]["path"] == "/v1/chat/completions"
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "You are Shiro."},
        {"role": "user", "content": "hi"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": READ_FILE.description,
                "parameters": READ_FILE.parameters,
            },
        }
    ]
    assert body["reasoning_effort"] == "low"
    assert body["max_tokens"] == 9  # a local server; the official endpoint gets max_completion_tokens


async def test_chat_streams_several_tool_calls_in_index_order(fake: FakeOpenAI, make: Make) -> None:
    fake.script.append(
        Step(
            ToolCall("read_file", {"path": "a"}, call_id="c_a", chunks=5),
            ToolCall("grep", "{bad json", call_id="c_b"),
        )
    )
    events = await collect(make("chat"), request([{"role": "user", "content": "x"}]))
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert ready == [
        ToolCallReady("c_a", "read_file", '{"path": "a"}'),
        ToolCallReady("c_b", "grep", "{bad json"),
    ]
    calls = finished(events).message["content"]
    assert [c["input"] for c in calls] == [{"path": "a"}, "{bad json"]  # raw text kept when it is not JSON


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_plain_answer_finishes_with_stop(fake: FakeOpenAI, make: Make, api: str) -> None:
    fake.script.append(Step(Text("Hello!", chunks=3), usage=Usage(3, 2)))
    events = await collect(make(api), request([{"role": "user", "content": "hi"}]))
    step = finished(events)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["He", "ll", "o!"]
    assert step.finish_reason == "stop"
    assert step.usage.input_tokens == 3 and step.usage.output_tokens == 2
    assert [p["text"] for p in step.message["content"]] == ["Hello!"]


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_a_truncated_answer_finishes_with_length(fake: FakeOpenAI, make: Make, api: str) -> None:
    fake.script.append(Step(Text("Hel"), finish_reason="length"))
    events = await collect(make(api), request([{"role": "user", "content": "hi"}]))
    assert finished(events).finish_reason == "length"


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_generate_returns_text_and_usage_without_tools(fake: FakeOpenAI, make: Make, api: str) -> None:
    fake.script.append(Step(Text("A summary."), usage=Usage(50, 5)))
    result = await make(api).generate(request([{"role": "user", "content": "summarise"}], tools=[READ_FILE]))
    assert result.text == "A summary."
    assert (result.usage.input_tokens, result.usage.output_tokens) == (50, 5)
    body = fake.requests[0]["body"]
    assert "tools" not in body and not body.get("stream")


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_every_stream_ends_with_exactly_one_step_finished(
    fake: FakeOpenAI, make: Make, api: str
) -> None:
    fake.script.append(STEP)
    events = await collect(make(api), request([{"role": "user", "content": "x"}]))
    assert sum(isinstance(e, StepFinished) for e in events) == 1
    assert isinstance(events[-1], StepFinished)


def tool_turn(result: Any = "print('a')") -> list[dict[str, Any]]:
    """A history: user asks, the assistant (Responses, with item ids) calls a tool, the tool answers."""
    return [
        {"role": "user", "content": "read a.py"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "reasoning",
                    "text": "I should read it",
                    "providerOptions": {"openai": {"itemId": "rs_1", "reasoningEncryptedContent": "enc_1"}},
                },
                {"type": "text", "text": "Reading.", "providerOptions": {"openai": {"itemId": "msg_1"}}},
                {
                    "type": "tool-call",
                    "toolCallId": "call_1",
                    "toolName": "read_file",
                    "input": {"path": "a.py"},
                    "providerOptions": {"openai": {"itemId": "fc_1"}},
                },
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "call_1",
                    "toolName": "read_file",
                    "output": {"type": "text", "value": result},
                }
            ],
        },
    ]


async def test_responses_replays_reasoning_inline_when_nothing_is_stored(
    fake: FakeOpenAI, make: Make
) -> None:
    fake.script.append(Step(Text("done")))
    await collect(make("responses"), request(tool_turn()))
    assert fake.requests[0]["body"]["input"][1:] == [
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "I should read it"}],
            "encrypted_content": "enc_1",
        },
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_1",
            "content": [{"type": "output_text", "text": "Reading.", "annotations": []}],
        },
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "read_file",
            "arguments": '{"path": "a.py"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "print('a')"},
    ]


async def test_responses_sends_plain_items_when_reasoning_cannot_be_replayed(
    fake: FakeOpenAI, make: Make
) -> None:
    history = tool_turn()
    del history[1]["content"][0]["providerOptions"]["openai"]["reasoningEncryptedContent"]
    fake.script.append(Step(Text("done")))
    await collect(make("responses"), request(history))
    items = fake.requests[0]["body"]["input"][1:]
    assert [i["type"] for i in items] == ["message", "function_call", "function_call_output"]
    assert all("id" not in i for i in items)  # an id without its reasoning item would be a 400


async def test_responses_with_store_points_at_stored_items(fake: FakeOpenAI, make: Make) -> None:
    fake.script += [STEP, Step(Text("done"))]
    client = make("responses", store=True)
    first = finished(await collect(client, request([{"role": "user", "content": "read a.py"}])))
    tool = {
        "role": "tool",
        "content": [
            {
                "type": "tool-result",
                "toolCallId": "call_1",
                "toolName": "read_file",
                "output": {"type": "json", "value": {"ok": True}},
            }
        ],
    }
    history = [{"role": "user", "content": "read a.py"}, first.message, tool]
    events = await collect(client, request(history))
    assert finished(events).message["content"][0]["text"] == "done"
    body = fake.requests[1]["body"]
    assert body["store"] is True and "include" not in body
    assert body["input"][1:] == [
        {"type": "item_reference", "id": "rs_1"},
        {"type": "item_reference", "id": "msg_1"},
        {"type": "item_reference", "id": "fc_1"},
        {"type": "function_call_output", "call_id": "call_1", "output": '{"ok": true}'},
    ]


async def test_chat_sends_tool_calls_and_results_and_drops_reasoning(fake: FakeOpenAI, make: Make) -> None:
    fake.script.append(Step(Text("done")))
    await collect(make("chat"), request(tool_turn()))
    assert fake.requests[0]["body"]["messages"][1:] == [
        {"role": "user", "content": "read a.py"},
        {
            "role": "assistant",
            "content": "Reading.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "print('a')"},
    ]


@pytest.mark.parametrize(("first", "second"), [("responses", "chat"), ("chat", "responses")])
async def test_a_session_recorded_on_one_api_continues_on_the_other(
    fake: FakeOpenAI, make: Make, first: str, second: str
) -> None:
    """Turn 1 on one API (tool call, result), turn 2 on the other: the fake checks the pairing."""
    fake.script += [STEP, Step(Text("It prints a."), usage=Usage(5, 4))]
    history: list[dict[str, Any]] = [{"role": "user", "content": "read a.py"}]
    history.append(finished(await collect(make(first), request(history))).message)
    history.append(
        {
            "role": "tool",
            "content": [
                {"type": "tool-error", "toolCallId": "call_1", "toolName": "read_file", "error": "denied"}
            ],
        }
    )
    history.append({"role": "user", "content": "and now?"})
    step = finished(await collect(make(second), request(history)))
    assert step.message["content"][-1]["text"] == "It prints a."
    sent = json.dumps(fake.requests[1]["body"])
    assert "call_1" in sent and "denied" in sent and "Reading a.py" in sent
    assert "item_reference" not in sent


async def test_user_images_go_out_in_each_apis_shape(fake: FakeOpenAI, make: Make) -> None:
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "image", "image": "AAAA", "mediaType": "image/png"},
        ],
    }
    fake.script += [Step(Text("a")), Step(Text("b"))]
    await collect(make("chat"), request([message]))
    await collect(make("responses"), request([message]))
    chat_content = fake.requests[0]["body"]["messages"][1]["content"]
    assert chat_content[1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    responses_content = fake.requests[1]["body"]["input"][0]["content"]
    assert responses_content[1] == {
        "type": "input_image",
        "image_url": "data:image/png;base64,AAAA",
        "detail": "auto",
    }
