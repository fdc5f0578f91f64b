"""`shiro/models` and `shiro/models/detect` through the real server over stdio."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from fakes.fake_openai import FakeOpenAI
from fakes.fixtures import options
from fakes.local_servers import LLAMACPP_CTX, LLAMACPP_MODEL, serve
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI) -> dict[str, object]:
    return options(home, fake, apiKey="sk-configured", model="gpt-5", api=None, maxRetries=None)


@pytest.fixture
def local() -> Iterator[FakeOpenAI]:
    server = serve(FakeOpenAI().start(), "llamacpp")
    try:
        yield server
    finally:
        server.stop()


def closed_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


async def test_models_of_the_configured_endpoint(client: ShiroClient, fake: FakeOpenAI) -> None:
    result = await client.call("shiro/models")
    assert result == {
        "baseUrl": fake.base_url,
        "preset": None,
        "models": [
            {"id": "gpt-4o", "contextWindow": None},
            {"id": "gpt-5", "contextWindow": None},
            {"id": "gpt-5-mini", "contextWindow": None},
        ],
        "error": None,
    }
    assert fake.requests[-1]["headers"]["authorization"] == "Bearer sk-configured"


async def test_models_of_another_address_never_get_the_configured_key(
    client: ShiroClient, local: FakeOpenAI
) -> None:
    result = await client.call("shiro/models", {"baseUrl": local.base_url})
    assert result["preset"] == "llamacpp" and result["presetName"] == "llama.cpp"
    assert result["models"] == [{"id": LLAMACPP_MODEL, "contextWindow": LLAMACPP_CTX}]
    assert all("sk-configured" not in str(r["headers"]) for r in local.requests)


async def test_an_endpoint_that_is_down_answers_with_an_error(client: ShiroClient) -> None:
    url = closed_url()
    result = await client.call("shiro/models", {"baseUrl": url})
    assert (
        result["models"] == []
        and result["error"] == f"Nothing answers at {url}. Is the model server running?"
    )


async def test_detect_finds_the_running_server(client: ShiroClient, local: FakeOpenAI) -> None:
    result = await client.call("shiro/models/detect", {"baseUrls": [closed_url(), local.base_url]})
    assert [e["baseUrl"] for e in result["endpoints"]] == [local.base_url]
    assert result["endpoints"][0]["models"][0]["contextWindow"] == LLAMACPP_CTX
    assert result["message"] == f"Found llama.cpp at {local.base_url} (1 model)."


async def test_detect_with_nothing_running(client: ShiroClient) -> None:
    urls = [closed_url(), closed_url()]
    result = await client.call("shiro/models/detect", {"baseUrls": urls})
    assert result["endpoints"] == []
    assert "No local model server answered" in result["message"] and all(u in result["message"] for u in urls)


async def test_bad_params_are_invalid_params(client: ShiroClient) -> None:
    with pytest.raises(JsonRpcException) as raised:
        await client.call("shiro/models", {"baseUrl": 42})
    assert raised.value.code == -32602 and "baseUrl" in str(raised.value)
