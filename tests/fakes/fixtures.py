"""Pytest fixtures around the fake model server (imported by the conftest files that need them)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakes.fake_openai import FakeOpenAI


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()
