"""The endpoint policy (spec §7.1): Chat first, sticky switch to Responses on the official endpoint only."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from provider_helpers import collect, request

from fakes.fake_openai import FakeOpenAI, HttpError, Step, StreamError, Text
from shiro_lsp.providers import ModelClient, Notice, ProviderError, TextDelta

Make = Callable[..., ModelClient]
HI = [{"role": "user", "content": "hi"}]
RESPONSES_ONLY = HttpError(
    404, "This model is only supported in v1/responses and not in v1/chat/completions."
)


def paths(fake: FakeOpenAI) -> list[str]:
    return [r["path"].removeprefix("/v1/") for r in fake.requests]


async def test_official_endpoint_falls_back_to_responses_and_stays_there(
    fake: FakeOpenAI, make: Make
) -> None:
    notices: list[str] = []
    client = make("auto", treat_as_official=True, on_notice=notices.append)
    assert client.api_name == "chat"
    fake.script += [RESPONSES_ONLY, Step(Text("from responses")), Step(Text("again"))]

    events = await collect(client, request(HI))
    expected = (
        "endpoint fallback: chat-completions rejected the request, retrying on responses\n"
        f"  {fake.base_url} has no such endpoint or resource (404): {RESPONSES_ONLY.message}"
    )
    assert events[0] == Notice(expected)
    assert notices == [expected]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["from responses"]
    assert client.api_name == "responses"

    await collect(make("auto", treat_as_official=True), request(HI))  # a new client: still sticky
    assert paths(fake) == ["chat/completions", "responses", "responses"]


@pytest.mark.parametrize("status", [400, 405, 415, 422, 501])
async def test_each_rejection_status_falls_back(fake: FakeOpenAI, make: Make, status: int) -> None:
    fake.script += [HttpError(status, "Unsupported here."), Step(Text("ok"))]
    events = await collect(make("auto", treat_as_official=True), request(HI))
    assert isinstance(events[0], Notice)
    assert paths(fake) == ["chat/completions", "responses"]


@pytest.mark.parametrize(
    "error",
    [HttpError.invalid_api_key(), HttpError.rate_limited(20), HttpError.server_error()],
    ids=["401", "429", "500"],
)
async def test_auth_rate_limit_and_server_errors_do_not_fall_back(
    fake: FakeOpenAI, make: Make, error: HttpError
) -> None:
    fake.script.append(error)
    with pytest.raises(ProviderError) as raised:
        await collect(make("auto", treat_as_official=True), request(HI))
    assert raised.value.status == error.status
    assert paths(fake) == ["chat/completions"]


async def test_other_endpoints_get_no_fallback(fake: FakeOpenAI, make: Make) -> None:
    fake.script.append(RESPONSES_ONLY)
    with pytest.raises(ProviderError) as raised:
        await collect(make("auto"), request(HI))
    assert raised.value.status == 404
    assert paths(fake) == ["chat/completions"]


async def test_when_every_endpoint_rejects_the_last_error_surfaces(fake: FakeOpenAI, make: Make) -> None:
    fake.script += [RESPONSES_ONLY, HttpError.model_not_found("gpt-5")]
    with pytest.raises(ProviderError) as raised:
        await collect(make("auto", treat_as_official=True), request(HI))
    assert raised.value.kind == "model_not_found"
    assert paths(fake) == ["chat/completions", "responses"]


async def test_an_error_after_output_was_delivered_is_not_retried_elsewhere(
    fake: FakeOpenAI, make: Make
) -> None:
    fake.script.append(Step(Text("half"), StreamError("boom")))
    with pytest.raises(ProviderError):
        await collect(make("auto", treat_as_official=True), request(HI))
    assert paths(fake) == ["chat/completions"]


async def test_generate_falls_back_too(fake: FakeOpenAI, make: Make) -> None:
    notices: list[str] = []
    fake.script += [RESPONSES_ONLY, Step(Text("summary"))]
    result = await make("auto", treat_as_official=True, on_notice=notices.append).generate(request(HI))
    assert result.text == "summary"
    assert len(notices) == 1
    assert paths(fake) == ["chat/completions", "responses"]


@pytest.mark.parametrize(("api", "path"), [("chat", "chat/completions"), ("responses", "responses")])
async def test_a_forced_api_never_switches(fake: FakeOpenAI, make: Make, api: str, path: str) -> None:
    fake.script.append(HttpError(405, "Method not allowed."))
    with pytest.raises(ProviderError):
        await collect(make(api, treat_as_official=True), request(HI))
    assert paths(fake) == [path]
