"""Retries are Shiro's own and visible: each wait is a `retry` event the panel counts down."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from chat_helpers import model_bodies, text_of, types_of
from fakes.fake_openai import FakeOpenAI, HttpError, Step, Text
from fakes.fixtures import options
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]

both_apis = pytest.mark.parametrize("api", ["responses", "chat"])


@pytest.fixture
def api() -> str:
    return "chat"


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI, api: str) -> dict[str, object]:
    return options(home, fake, api=api, model="gpt-5", maxRetries=3)


def quick_server_error(status: int = 500) -> HttpError:
    return replace(HttpError.server_error(status), headers={"retry-after-ms": "20"})


@both_apis
async def test_a_rate_limit_and_a_server_error_are_retried_with_an_event_each(
    client: ShiroClient, fake: FakeOpenAI, api: str
) -> None:
    fake.script += [HttpError.rate_limited(0.05, ms=True), quick_server_error(503), Step(Text("ok"))]
    result = await client.call("shiro/chat", {"text": "hi"})
    assert result["stopReason"] == "done" and result["error"] is None
    events = client.events(result["taskId"])
    retries = [e for e in events if e["type"] == "retry"]
    assert [(e["attempt"], e["maxAttempts"], e["delaySeconds"]) for e in retries] == [
        (2, 4, 0.05),
        (3, 4, 0.02),
    ]
    assert "429" in retries[0]["reason"] and "503" in retries[1]["reason"]
    assert types_of(events)[:2] == ["retry", "retry"] and text_of(events) == "ok"
    assert len(model_bodies(fake)) == 3


async def test_retry_after_in_seconds_is_honoured(client: ShiroClient, fake: FakeOpenAI) -> None:
    fake.script += [HttpError.rate_limited(1), Step(Text("ok"))]
    result = await client.call("shiro/chat", {"text": "hi"})
    (retry,) = [e for e in client.events(result["taskId"]) if e["type"] == "retry"]
    assert (retry["attempt"], retry["maxAttempts"], retry["delaySeconds"]) == (2, 4, 1)


async def test_after_the_last_attempt_the_turn_fails_once_with_the_error(
    client: ShiroClient, fake: FakeOpenAI
) -> None:
    fake.script += [quick_server_error() for _ in range(4)]
    result = await client.call("shiro/chat", {"text": "hi"})
    assert result["stopReason"] == "error" and "500" in (result["error"] or "")
    events = client.events(result["taskId"])
    assert types_of(events) == ["retry", "retry", "retry", "error"]
    assert [e["attempt"] for e in events[:3]] == [2, 3, 4]
    assert len(model_bodies(fake)) == 4


async def test_a_rejected_request_is_not_retried(client: ShiroClient, fake: FakeOpenAI) -> None:
    fake.script.append(HttpError.invalid_api_key())
    result = await client.call("shiro/chat", {"text": "hi"})
    assert types_of(client.events(result["taskId"])) == ["error"]
    assert len(model_bodies(fake)) == 1
