from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp

pytest.register_assert_rewrite("fakes.fixtures")  # the test modules load it as a plugin too

from fakes.fixtures import options  # noqa: E402
from lsp_client import CONFIG, ShiroClient, initialize  # noqa: E402


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def init_options(home: Path) -> dict[str, object]:
    """Override in a test module to start the server differently."""
    return options(home)


@pytest_lsp.fixture(config=CONFIG)
async def client(
    lsp_client: ShiroClient, workspace: Path, init_options: dict[str, object]
) -> AsyncIterator[ShiroClient]:
    await initialize(lsp_client, workspace, **init_options)
    yield lsp_client
    await lsp_client.shutdown_session()
