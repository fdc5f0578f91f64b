"""A chat before any model endpoint is usable: the turn's error says so in a field a client can act on."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.fixtures import options
from lsp_client import ShiroClient


@pytest.fixture(autouse=True)
def no_key_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server inherits this environment: no key and no endpoint may come from it."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def init_options(home: Path) -> dict[str, object]:
    return options(home, apiKey=None, baseUrl="https://models.example.invalid/v1", model="gpt-5")


async def test_a_remote_endpoint_without_a_key_asks_for_setup(client: ShiroClient) -> None:
    result = await client.call("shiro/chat", {"text": "hello"})
    assert result["stopReason"] == "error" and "No API key" in result["error"]
    [failed] = [e for e in client.events(result["taskId"]) if e["type"] == "error"]
    assert failed["needsSetup"] is True
