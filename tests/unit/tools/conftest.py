"""Real temp workspaces, a real git repo, and a helper that runs a tool through the registry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shiro_lsp.tools import ToolContext, ToolRegistry, builtin_registry
from tool_helpers import RunTool, git


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def registry() -> ToolRegistry:
    return builtin_registry()


@pytest.fixture
def chunks() -> list[str]:
    return []


@pytest.fixture
def ctx(workspace: Path, chunks: list[str]) -> ToolContext:
    return ToolContext(workspace=workspace, on_output=chunks.append)


@pytest.fixture
def run(registry: ToolRegistry, ctx: ToolContext) -> RunTool:
    async def run_tool(name: str, input: dict[str, Any] | str | None = None, **kwargs: Any) -> str:
        return await registry.run(name, input if input is not None else kwargs, ctx)

    return run_tool


@pytest.fixture
def repo(workspace: Path) -> Path:
    git(workspace, "init", "-q", "-b", "main")
    (workspace / "app.py").write_text("def main():\n    return 1\n")
    git(workspace, "add", "app.py")
    git(workspace, "commit", "-q", "-m", "first commit")
    (workspace / "app.py").write_text("def main():\n    return 2\n")
    git(workspace, "commit", "-q", "-am", "second commit")
    return workspace
