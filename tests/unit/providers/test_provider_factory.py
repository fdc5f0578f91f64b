"""Building a client: keys, local servers, the API choice, and no openai import until needed."""

from __future__ import annotations

import subprocess
import sys

import pytest
from provider_helpers import collect, finished, request

from fakes.fake_openai import FakeOpenAI, Step, Text
from shiro_lsp.providers import ProviderError, list_models, make_client
from shiro_lsp.providers.factory import NO_KEY_MESSAGE, is_local, is_official


@pytest.mark.parametrize("base_url", [None, "https://api.openai.com/v1", "https://openrouter.ai/api/v1"])
def test_no_key_for_a_remote_endpoint_says_how_to_set_one(base_url: str | None) -> None:
    with pytest.raises(ProviderError) as raised:
        make_client(base_url, None, "auto")
    assert raised.value.kind == "auth"
    assert raised.value.message == NO_KEY_MESSAGE
    assert '"Shiro: Set API key"' in NO_KEY_MESSAGE and "OPENAI_API_KEY" in NO_KEY_MESSAGE


def test_the_environment_key_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert make_client(None, None, "auto").api_name == "chat"


async def test_a_local_server_needs_no_key(fake: FakeOpenAI) -> None:
    fake.script.append(Step(Text("local")))
    client = make_client(fake.base_url.replace("127.0.0.1", "localhost"), None, "chat", max_retries=0)
    events = await collect(client, request([{"role": "user", "content": "hi"}]))
    await client.aclose()
    assert finished(events).message["content"][0]["text"] == "local"
    assert fake.requests[0]["headers"]["authorization"] == "Bearer not-needed"


def test_an_unknown_api_is_refused() -> None:
    with pytest.raises(ProviderError, match='Unknown API "grpc"'):
        make_client("http://127.0.0.1:1/v1", None, "grpc")


@pytest.mark.parametrize(
    ("api", "base_url", "expected"),
    [
        ("auto", "http://127.0.0.1:1/v1", "ChatClient"),
        ("auto", "https://api.openai.com/v1", "FallbackClient"),
        ("chat", "https://api.openai.com/v1", "ChatClient"),
        ("responses", "http://localhost:11434/v1", "ResponsesClient"),
    ],
)
def test_the_api_choice(api: str, base_url: str, expected: str) -> None:
    assert type(make_client(base_url, "sk-x", api)).__name__ == expected


def test_local_and_official_urls() -> None:
    assert (
        is_local("http://127.0.0.1:8080/v1")
        and is_local("http://localhost:1234/v1")
        and is_local("http://[::1]:1/v1")
    )
    assert not is_local("https://api.openai.com/v1")
    assert is_official("https://api.openai.com/v1") and is_official("https://api.openai.com")
    assert not is_official("http://api.openai.com/v1") and not is_official("https://openrouter.ai/api/v1")


def test_importing_the_providers_does_not_import_openai() -> None:
    code = (
        "import sys, shiro_lsp.providers, shiro_lsp.agent.pricing\n"
        "import shiro_lsp.providers.responses, shiro_lsp.providers.chat_completions\n"
        "assert 'openai' not in sys.modules, 'openai imported at module load'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


async def test_list_models_for_the_picker(fake: FakeOpenAI) -> None:
    fake.models = ["gpt-5-mini", "gpt-4o", "gpt-5"]
    assert await list_models(fake.base_url, None) == ["gpt-4o", "gpt-5", "gpt-5-mini"]
    fake.api_key = "sk-right"
    with pytest.raises(ProviderError) as raised:
        await list_models(fake.base_url, "sk-wrong")
    assert raised.value.kind == "auth"
