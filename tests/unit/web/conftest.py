"""A real web site on 127.0.0.1 for the fetches, and a fresh page cache per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import shiro_lsp.web
from fakes.web_pages import WebPages


@pytest.fixture
def site() -> Iterator[WebPages]:
    pages = WebPages().start()
    yield pages
    pages.stop()


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    shiro_lsp.web._cache.clear()
