"""Pytest fixtures around the fake model server (imported by the conftest files that need them)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from fakes.fake_openai import FakeOpenAI


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


def options(
    home: Path, fake: FakeOpenAI | None = None, permissions: Mapping[str, Any] | None = None, **extra: object
) -> dict[str, object]:
    """``initializationOptions`` for a test server: its state root and a test key; with ``fake``,
    the scripted model's endpoint over Chat Completions and no retries; ``permissions``; then
    ``extra`` (camelCase keys as the client sends them: ``model``, ``approvalTimeoutMs``, ...).
    An ``extra`` value of None leaves that key out (``apiKey=None``: no key at all)."""
    out: dict[str, object] = {"home": str(home), "apiKey": "sk-test"}
    if fake is not None:
        out |= {"baseUrl": fake.base_url, "api": "chat", "maxRetries": 0}
    if permissions is not None:
        out["permissions"] = dict(permissions)
    out.update(extra)
    return {key: value for key, value in out.items() if value is not None}
