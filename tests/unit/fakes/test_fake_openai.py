"""The fake model server, driven by the real openai SDK: what it streams is what OpenAI streams."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import openai
import pytest

from fakes.fake_openai import (
    Cut,
    FakeOpenAI,
    HttpError,
    Reasoning,
    Step,
    StreamError,
    Text,
    ToolCall,
    Usage,
    WaitForRelease,
    from_json,
    to_json,
)

FAKE_SCRIPT = Path(__file__).resolve().parents[2] / "fakes" / "fake_openai.py"


def sdk(fake: FakeOpenAI, retries: int = 0) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=fake.base_url, api_key="sk-test", max_retries=retries)


FULL_STEP = Step(
    Reasoning("thinking hard", id="rs_1", chunks=3, encrypted_content="enc"),
    Text("hello there", id="msg_1", chunks=4),
    ToolCall("read_file", {"path": "a.py"}, call_id="call_1", id="fc_1", chunks=3),
    usage=Usage(10, 4, cached_tokens=2, reasoning_tokens=1),
)


async def test_responses_stream_follows_openais_event_order(fake: FakeOpenAI) -> None:
    fake.script.append(FULL_STEP)
    stream = await sdk(fake).responses.create(model="gpt-5", input="hi", stream=True)
    events = [event async for event in stream]

    kinds = [e.type for e in events]
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert (
        "".join(e.delta for e in events if e.type == "response.reasoning_summary_text.delta")
        == "thinking hard"
    )
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "hello there"
    args = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert json.loads(args) == {"path": "a.py"}
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert [(i.type, i.id) for i in done] == [
        ("reasoning", "rs_1"),
        ("message", "msg_1"),
        ("function_call", "fc_1"),
    ]
    assert done[0].encrypted_content == "enc"
    assert done[2].call_id == "call_1"
    final = events[-1].response
    assert final.output_text == "hello there"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (10, 4)
    assert final.usage.input_tokens_details.cached_tokens == 2


async def test_responses_without_stream_returns_the_final_response(fake: FakeOpenAI) -> None:
    fake.script.append(FULL_STEP)
    response = await sdk(fake).responses.create(model="gpt-5", input="hi")
    assert response.output_text == "hello there"
    assert [item.type for item in response.output] == ["reasoning", "message", "function_call"]
    assert response.usage is not None and response.usage.output_tokens == 4


async def test_chat_stream_fragments_tool_calls_by_index_and_reports_usage(fake: FakeOpenAI) -> None:
    fake.script.append(
        Step(
            Text("let me look", chunks=3),
            ToolCall("read_file", {"path": "a"}, call_id="call_a", chunks=4),
            ToolCall("grep", {"pattern": "x"}, call_id="call_b", chunks=2),
            usage=Usage(7, 3),
        )
    )
    stream = await sdk(fake).chat.completions.create(
        model="gpt-5",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    text, calls, finish, usage = "", {}, None, None
    async for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
            for tc in choice.delta.tool_calls or []:
                call = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
                call["id"] = tc.id or call["id"]
                call["name"] += (tc.function.name or "") if tc.function else ""
                call["arguments"] += (tc.function.arguments or "") if tc.function else ""
    assert text == "let me look"
    assert finish == "tool_calls"
    assert [(c["id"], c["name"], json.loads(c["arguments"])) for c in calls.values()] == [
        ("call_a", "read_file", {"path": "a"}),
        ("call_b", "grep", {"pattern": "x"}),
    ]
    assert usage is not None and (usage.prompt_tokens, usage.completion_tokens) == (7, 3)


async def test_chat_stream_sends_usage_only_when_asked(fake: FakeOpenAI) -> None:
    fake.script.append(Step(Text("hi"), usage=Usage(7, 3)))
    stream = await sdk(fake).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}], stream=True
    )
    chunks = [c async for c in stream]
    assert all(c.usage is None for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


async def test_chat_without_stream(fake: FakeOpenAI) -> None:
    fake.script.append(Step(Text("done"), ToolCall("ls", {}, call_id="call_1"), usage=Usage(5, 1)))
    completion = await sdk(fake).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}]
    )
    message = completion.choices[0].message
    assert message.content == "done"
    assert message.tool_calls is not None and message.tool_calls[0].id == "call_1"
    assert completion.usage is not None and completion.usage.total_tokens == 6


@pytest.mark.parametrize(
    ("error", "exception", "code"),
    [
        (HttpError.bad_request("Invalid value: 'x'.", param="input"), openai.BadRequestError, None),
        (HttpError.invalid_api_key("sk-abcdefghijkl"), openai.AuthenticationError, "invalid_api_key"),
        (HttpError.model_not_found("gpt-x"), openai.NotFoundError, "model_not_found"),
        (HttpError.item_not_found("msg_gone"), openai.NotFoundError, None),
        (HttpError.rate_limited(20), openai.RateLimitError, "rate_limit_exceeded"),
        (HttpError.server_error(), openai.InternalServerError, "server_error"),
    ],
)
async def test_errors_raise_the_sdk_exception_with_openais_body(
    fake: FakeOpenAI, error: HttpError, exception: type[openai.APIStatusError], code: str | None
) -> None:
    fake.script.append(error)
    with pytest.raises(exception) as raised:
        await sdk(fake).responses.create(model="gpt-x", input="hi", stream=True)
    assert raised.value.status_code == error.status
    assert raised.value.code == code
    assert isinstance(raised.value.body, dict) and raised.value.body["message"] == error.message
    assert (raised.value.request_id or "").startswith("req_")


async def test_the_real_messages_look_like_openais(fake: FakeOpenAI) -> None:
    assert "Incorrect API key provided: sk-****ijkl." in HttpError.invalid_api_key("sk-abcdefghijkl").message
    assert (
        HttpError.model_not_found("x").message
        == "The model `x` does not exist or you do not have access to it."
    )
    assert HttpError.item_not_found("msg_1").message == "Item with id 'msg_1' not found."


async def test_the_sdk_retries_a_429_after_the_retry_after_header(fake: FakeOpenAI) -> None:
    fake.script += [HttpError.rate_limited(0.01, ms=True), Step(Text("ok"))]
    response = await sdk(fake, retries=1).responses.create(model="m", input="hi")
    assert response.output_text == "ok"
    assert len(fake.requests) == 2


async def test_a_stream_error_event_on_responses_is_yielded(fake: FakeOpenAI) -> None:
    fake.script.append(Step(Text("partial"), StreamError("boom", code="server_error")))
    stream = await sdk(fake).responses.create(model="m", input="hi", stream=True)
    events = [e async for e in stream]
    assert events[-1].type == "error"
    assert (events[-1].message, events[-1].code) == ("boom", "server_error")


async def test_a_stream_error_chunk_on_chat_raises(fake: FakeOpenAI) -> None:
    fake.script.append(Step(Text("partial"), StreamError("boom")))
    stream = await sdk(fake).chat.completions.create(model="m", messages=[], stream=True)
    with pytest.raises(openai.APIError, match="boom"):
        async for _ in stream:
            pass


@pytest.mark.parametrize("cut", [Cut(), Cut(after_events=4)])
async def test_a_cut_stream_is_a_connection_error(fake: FakeOpenAI, cut: Cut) -> None:
    fake.script.append(Step(Text("a long answer", chunks=8), cut))
    stream = await sdk(fake).responses.create(model="m", input="hi", stream=True)
    seen = []
    with pytest.raises(openai.APIConnectionError):
        async for event in stream:
            seen.append(event.type)
    assert "response.completed" not in seen
    if cut.after_events is not None:
        assert len(seen) == cut.after_events


async def test_a_gate_holds_the_stream_open_until_released(fake: FakeOpenAI) -> None:
    gate = fake.gate("hold")
    fake.script.append(Step(Text("before"), WaitForRelease(gate), Text("after")))
    stream = await sdk(fake).responses.create(model="m", input="hi", stream=True)
    texts: list[str] = []

    async def consume() -> None:
        async for event in stream:
            if event.type == "response.output_text.delta":
                texts.append(event.delta)

    task = asyncio.create_task(consume())
    assert await asyncio.to_thread(gate.reached.wait, 10)
    await asyncio.sleep(0.05)
    assert texts == ["before"] and not task.done()
    gate.release()
    await asyncio.wait_for(task, 10)
    assert texts == ["before", "after"]


async def test_an_empty_script_answers_500_saying_so_without_retries(fake: FakeOpenAI) -> None:
    with pytest.raises(openai.InternalServerError, match="script is empty"):
        await sdk(fake, retries=2).chat.completions.create(model="m", messages=[])
    assert len(fake.requests) == 1


async def test_echo_mode_replies_with_the_last_user_message(fake: FakeOpenAI) -> None:
    fake.default_reply = "echo"
    completion = await sdk(fake).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "first"}, {"role": "user", "content": "ping"}]
    )
    assert completion.choices[0].message.content == "echo: ping"


async def test_requests_are_recorded_with_headers_and_body(fake: FakeOpenAI) -> None:
    fake.script.append(Step(Text("ok")))
    await sdk(fake).responses.create(model="gpt-5", input="hi", store=False)
    request = fake.requests[0]
    assert request["path"] == "/v1/responses"
    assert request["headers"]["authorization"] == "Bearer sk-test"
    assert request["body"] == {"model": "gpt-5", "input": "hi", "store": False}


def test_a_body_that_is_not_json_is_a_400(fake: FakeOpenAI) -> None:
    request = urllib.request.Request(
        f"{fake.base_url}/responses", b"{nope", {"content-type": "application/json"}
    )
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, timeout=10)
    assert raised.value.code == 400
    assert "could not parse the JSON body" in json.loads(raised.value.read())["error"]["message"]


async def test_models_are_listed(fake: FakeOpenAI) -> None:
    page = await sdk(fake).models.list()
    assert [m.id for m in page.data] == fake.models


async def test_a_wrong_key_is_rejected_when_the_fake_checks_keys(fake: FakeOpenAI) -> None:
    fake.api_key = "sk-right"
    with pytest.raises(openai.AuthenticationError, match="Incorrect API key provided"):
        await sdk(fake).models.list()


async def test_an_unknown_item_reference_is_a_404_like_openai(fake: FakeOpenAI) -> None:
    with pytest.raises(openai.NotFoundError, match=r"Item with id 'msg_gone' not found\."):
        await sdk(fake).responses.create(model="m", input=[{"type": "item_reference", "id": "msg_gone"}])


async def test_stored_items_can_be_referenced_and_calls_need_their_outputs(fake: FakeOpenAI) -> None:
    fake.script += [Step(ToolCall("ls", {}, call_id="call_1", id="fc_1")), Step(Text("ok"))]
    client = sdk(fake)
    await client.responses.create(model="m", input="hi")  # store defaults to true
    orphan = [{"type": "function_call_output", "call_id": "call_9", "output": "x"}]
    with pytest.raises(openai.BadRequestError, match="No tool call found for function call output"):
        await client.responses.create(model="m", input=orphan)
    paired = [
        {"type": "item_reference", "id": "fc_1"},
        {"type": "function_call_output", "call_id": "call_1", "output": "x"},
    ]
    assert (await client.responses.create(model="m", input=paired)).output_text == "ok"


async def test_previous_response_id_must_be_known_and_carries_its_calls(fake: FakeOpenAI) -> None:
    fake.script += [Step(ToolCall("ls", {}, call_id="call_1")), Step(Text("ok"))]
    client = sdk(fake)
    with pytest.raises(openai.BadRequestError) as raised:
        await client.responses.create(model="m", input="hi", previous_response_id="resp_unknown")
    assert raised.value.code == "previous_response_not_found"
    first = await client.responses.create(model="m", input="hi")
    output = [{"type": "function_call_output", "call_id": "call_1", "output": "x"}]
    second = await client.responses.create(model="m", input=output, previous_response_id=first.id)
    assert second.output_text == "ok"


async def test_delay_per_event_still_streams_everything(fake: FakeOpenAI) -> None:
    fake.script.append(Step(Text("slow", chunks=4), delay_per_event=0.01))
    stream = await sdk(fake).responses.create(model="m", input="hi", stream=True)
    deltas = [e.delta async for e in stream if e.type == "response.output_text.delta"]
    assert deltas == ["s", "l", "o", "w"]


async def test_chat_tool_messages_must_answer_a_call(fake: FakeOpenAI) -> None:
    messages: list[Any] = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "user", "content": "again"},
    ]
    with pytest.raises(openai.BadRequestError, match="did not have response messages: c1"):
        await sdk(fake).chat.completions.create(model="m", messages=messages)
    with pytest.raises(openai.BadRequestError, match="must be a response to a preceeding message"):
        await sdk(fake).chat.completions.create(
            model="m", messages=[{"role": "tool", "tool_call_id": "c1", "content": "x"}]
        )


async def test_five_thousand_deltas_arrive_whole(fake: FakeOpenAI) -> None:
    fake.script.append(Step(Text("x" * 5000, chunks=5000)))
    stream = await sdk(fake).chat.completions.create(model="m", messages=[], stream=True)
    pieces = [c.choices[0].delta.content async for c in stream if c.choices and c.choices[0].delta.content]
    assert len(pieces) == 5000 and "".join(pieces) == "x" * 5000


def test_every_dsl_item_has_a_json_form() -> None:
    gate_step = from_json({"type": "step", "items": [{"type": "wait", "gate": "g"}]}, {})
    entries: list[Any] = [
        FULL_STEP,
        Step(
            Text("a"),
            StreamError("bad", code="x", type="server_error"),
            Cut(after_events=3),
            delay_per_event=0.5,
        ),
        Step(Text("a"), finish_reason="length"),
        HttpError.rate_limited(3),
        HttpError.model_not_found("m"),
    ]
    for entry in entries:
        data = json.loads(json.dumps(to_json(entry)))
        assert from_json(data) == entry
    assert to_json(gate_step) == {"type": "step", "items": [{"type": "wait", "gate": "g"}]}


def _post(url: str, payload: Any) -> Any:
    request = urllib.request.Request(url, json.dumps(payload).encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.loads(reply.read())


async def test_another_process_scripts_the_fake_over_http(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([to_json(Step(Text("from file")))]))
    process = subprocess.Popen(
        [sys.executable, str(FAKE_SCRIPT), "--port", "0", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip().rsplit(" ", 1)[-1]
        root = base_url.removesuffix("/v1")
        client = openai.AsyncOpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
        assert (await client.responses.create(model="m", input="one")).output_text == "from file"
        await asyncio.to_thread(_post, f"{root}/_control/script", [to_json(HttpError.model_not_found("m"))])
        with pytest.raises(openai.NotFoundError):
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "two"}])
        with urllib.request.urlopen(f"{root}/_control/requests", timeout=10) as reply:
            recorded = json.loads(reply.read())
        assert [r["path"] for r in recorded] == ["/v1/responses", "/v1/chat/completions"]
        gate_step = {"type": "step", "items": [{"type": "text", "text": "a"}, {"type": "wait", "gate": "g"}]}
        await asyncio.to_thread(_post, f"{root}/_control/script", [gate_step])
        stream = await client.responses.create(model="m", input="held", stream=True)
        first = await anext(aiter(stream))
        assert first.type == "response.created"
        await asyncio.to_thread(_post, f"{root}/_control/release", {"gate": "g"})
        assert [e.type async for e in stream][-1] == "response.completed"
        await asyncio.to_thread(_post, f"{root}/_control/reset", {})
        await asyncio.to_thread(_post, f"{root}/_control/default", {"mode": "echo"})
        completion = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "three"}]
        )
        assert completion.choices[0].message.content == "echo: three"
    finally:
        process.terminate()
        process.wait(10)
