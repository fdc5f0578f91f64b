"""Real temp workspaces, a real git repo, and a helper that runs a tool through the registry."""

from __future__ import annotations

import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from shiro_lsp.agent.tools import ToolContext, ToolRegistry, builtin_registry

RunTool = Callable[..., Awaitable[str]]


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


def git(cwd: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_AUTHOR_DATE": "2024-05-01T12:00:00Z",
        "GIT_COMMITTER_DATE": "2024-05-01T12:00:00Z",
        "HOME": str(cwd),
        "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repo(workspace: Path) -> Path:
    git(workspace, "init", "-q", "-b", "main")
    (workspace / "app.py").write_text("def main():\n    return 1\n")
    git(workspace, "add", "app.py")
    git(workspace, "commit", "-q", "-m", "first commit")
    (workspace / "app.py").write_text("def main():\n    return 2\n")
    git(workspace, "commit", "-q", "-am", "second commit")
    return workspace
