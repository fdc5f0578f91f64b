from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from fakes.fake_openai import FakeOpenAI
from fakes.fixtures import fake
from shiro_lsp.providers import ModelClient, make_client
from shiro_lsp.providers.fallback import forget_fallbacks

__all__ = ["fake"]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    forget_fallbacks()
    yield
    forget_fallbacks()


@pytest.fixture
async def make(fake: FakeOpenAI) -> AsyncIterator[Callable[..., ModelClient]]:
    """``make(api, **options)``: a client on the fake with the real SDK (no retries unless asked)."""
    built: list[ModelClient] = []

    def build(api: str = "chat", **options: Any) -> ModelClient:
        options.setdefault("max_retries", 0)
        client = make_client(fake.base_url, "sk-test", api, **options)
        built.append(client)
        return client

    yield build
    for client in built:
        await client.aclose()
