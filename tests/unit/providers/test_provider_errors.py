"""Every way a model call fails becomes a ProviderError with a kind and a message a person can act on."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from dataclasses import replace

import pytest
from provider_helpers import collect, request

from fakes.fake_openai import Cut, FakeOpenAI, HttpError, Step, StreamError, Text, WaitForRelease
from shiro_lsp.errors import MODEL_ERROR, ShiroError
from shiro_lsp.providers import ModelClient, ProviderError, TextDelta, make_client

Make = Callable[..., ModelClient]
APIS = pytest.mark.parametrize("api", ["chat", "responses"])
HI = [{"role": "user", "content": "hi"}]


async def failure(client: ModelClient, model: str = "gpt-5") -> ProviderError:
    with pytest.raises(ProviderError) as raised:
        await collect(client, request(HI, model=model))
    assert isinstance(raised.value, ShiroError) and raised.value.code == MODEL_ERROR
    assert "Traceback" not in raised.value.message
    return raised.value


@APIS
async def test_a_rejected_key(fake: FakeOpenAI, make: Make, api: str) -> None:
    fake.script.append(HttpError.invalid_api_key("sk-abcdefghijkl"))
    error = await failure(make(api))
    assert (error.kind, error.status) == ("auth", 401)
    assert (
        error.message == 'The API key was rejected (401). Set it with "Shiro: Set API key" or OPENAI_API_KEY.'
    )


@APIS
async def test_an_unknown_model(fake: FakeOpenAI, make: Make, api: str) -> None:
    fake.script.append(HttpError.model_not_found("gpt-x"))
    error = await failure(make(api), model="gpt-x")
    assert (error.kind, error.status, error.provider_code) == ("model_not_found", 404, "model_not_found")
    assert error.message == f'The model "gpt-x" was not found at {fake.base_url} (404).'


@APIS
async def test_a_rate_limit_says_when_to_retry(fake: FakeOpenAI, make: Make, api: str) -> None:
    fake.script.append(HttpError.rate_limited(20))
    error = await failure(make(api))
    assert (error.kind, error.status, error.retry_after) == ("rate_limit", 429, 20.0)
    assert error.message == "Rate limited by the provider (429); retry after 20 s."


@APIS
async def test_the_sdk_retries_rate_limits_and_server_errors_first(
    fake: FakeOpenAI, make: Make, api: str
) -> None:
    quick_server_error = replace(HttpError.server_error(), headers={"retry-after-ms": "10"})
    fake.script += [HttpError.rate_limited(0.01, ms=True), quick_server_error, Step(Text("ok"))]
    events = await collect(make(api, max_retries=3), request(HI))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["ok"]
    assert len(fake.requests) == 3


@APIS
async def test_a_server_error(fake: FakeOpenAI, make: Make, api: str) -> None:
    fake.script.append(HttpError.server_error(503))
    error = await failure(make(api))
    assert (error.kind, error.status) == ("server", 503)
    assert error.message == (
        f"The model server at {fake.base_url} failed (503): "
        "The server had an error while processing your request. Sorry about that!"
    )


@APIS
async def test_a_bad_request_keeps_the_providers_reason(fake: FakeOpenAI, make: Make, api: str) -> None:
    fake.script.append(
        HttpError.bad_request("Invalid value: 'xhigh'. Supported values are: 'low'.", param="reasoning")
    )
    error = await failure(make(api))
    assert (error.kind, error.status) == ("bad_request", 400)
    assert (
        error.message
        == "The provider rejected the request (400): Invalid value: 'xhigh'. Supported values are: 'low'."
    )


async def test_a_stale_item_is_recognised(fake: FakeOpenAI, make: Make) -> None:
    fake.script.append(HttpError.item_not_found("msg_gone"))
    error = await failure(make("responses"))
    assert (error.kind, error.status) == ("stale_item", 404)
    assert error.is_stale_item
    assert "Item with id 'msg_gone' not found." in error.message


async def test_an_item_reference_the_provider_never_stored_is_stale(fake: FakeOpenAI, make: Make) -> None:
    history = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "x", "providerOptions": {"openai": {"itemId": "msg_gone"}}}],
        },
        {"role": "user", "content": "again"},
    ]
    with pytest.raises(ProviderError) as raised:
        await collect(make("responses", store=True), request(history))
    assert raised.value.is_stale_item


@APIS
async def test_an_error_reported_mid_stream(fake: FakeOpenAI, make: Make, api: str) -> None:
    fake.script.append(Step(Text("half an"), StreamError("The model crashed.", code="server_error")))
    delivered: list[str] = []
    with pytest.raises(ProviderError) as raised:
        async for event in make(api).stream(request(HI)):
            if isinstance(event, TextDelta):
                delivered.append(event.text)
    assert delivered == ["half an"]
    assert raised.value.kind == "server"
    assert (
        raised.value.message
        == f"The model at {fake.base_url} failed mid-reply (server_error): The model crashed."
    )


@APIS
async def test_a_stale_item_reported_mid_stream(fake: FakeOpenAI, make: Make, api: str) -> None:
    fake.script.append(
        Step(StreamError("Item with id 'rs_9' not found.", code=None, type="invalid_request_error"))
    )
    error = await failure(make(api))
    assert error.kind == "stale_item" and error.is_stale_item


@APIS
@pytest.mark.parametrize("cut", [Cut(), Cut(after_events=2)])
async def test_a_cut_stream_is_a_network_error_and_is_not_retried(
    fake: FakeOpenAI, make: Make, api: str, cut: Cut
) -> None:
    fake.script.append(Step(Text("a long answer", chunks=6), cut))
    error = await failure(make(api, max_retries=3))
    assert error.kind == "network"
    assert "closed before the reply finished" in error.message
    assert len(fake.requests) == 1


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@APIS
async def test_nothing_listening(api: str) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    error = await failure(make_client(url, None, api, max_retries=0))
    assert error.kind == "network"
    assert error.message == f"Cannot reach the model at {url}: connection refused."


@APIS
async def test_generate_fails_the_same_way(fake: FakeOpenAI, make: Make, api: str) -> None:
    fake.script.append(HttpError.invalid_api_key())
    with pytest.raises(ProviderError) as raised:
        await make(api).generate(request(HI))
    assert raised.value.kind == "auth"


@APIS
async def test_cancelling_a_stream_closes_the_connection(fake: FakeOpenAI, make: Make, api: str) -> None:
    gate = fake.gate("hold")
    fake.script.append(Step(Text("first"), WaitForRelease(gate), Text("never read", chunks=20)))
    seen: list[str] = []

    async def consume() -> None:
        async for event in make(api).stream(request(HI)):
            if isinstance(event, TextDelta):
                seen.append(event.text)

    task = asyncio.create_task(consume())
    assert await asyncio.to_thread(gate.reached.wait, 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    gate.release()
    for _ in range(100):
        if fake.disconnects:
            break
        await asyncio.sleep(0.05)
    assert fake.disconnects == 1
    assert "never read" not in "".join(seen)
