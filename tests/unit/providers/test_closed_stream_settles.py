"""A request after a stream the client closed early waits until a local llama.cpp server has let go of it
(a busy slot sends the request to another slot, where its whole prompt is processed again)."""

from __future__ import annotations

from collections.abc import Callable

from provider_helpers import collect, request

from fakes.fake_openai import FakeOpenAI, Step, Text
from shiro_lsp.providers import ModelClient, TextDelta

Make = Callable[..., ModelClient]
ASK = [{"role": "user", "content": "count the ducks in the pond"}]


async def close_after_first_text(client: ModelClient) -> None:
    events = client.stream(request(ASK))
    async for event in events:
        if isinstance(event, TextDelta):
            break
    await events.aclose()  # type: ignore[attr-defined]


def a_long_reply() -> Step:
    return Step(Text("duck " * 60, chunks=60), delay_per_event=0.05)


async def test_the_next_request_waits_until_the_server_no_longer_serves_the_closed_stream(
    fake: FakeOpenAI, make: Make
) -> None:
    fake.slot_linger = 0.6
    fake.script += [a_long_reply(), Step(Text("three ducks"))]
    client = make("chat")
    await close_after_first_text(client)
    await collect(client, request(ASK))
    assert fake.busy_on_arrival == [False, False]


async def test_a_server_without_a_slot_monitor_is_asked_once_and_not_waited_for(
    fake: FakeOpenAI, make: Make
) -> None:
    fake.script += [a_long_reply(), a_long_reply(), Step(Text("three ducks"))]
    client = make("chat")
    await close_after_first_text(client)
    await close_after_first_text(client)
    await collect(client, request(ASK))
    paths = [r["path"] for r in fake.requests if r["method"] == "GET"]
    assert paths == ["/slots"]
    assert len(fake.bodies("/chat/completions")) == 3
