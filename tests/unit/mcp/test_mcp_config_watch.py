"""The MCP config and trust files are watched, not re-read per call: every edit is still seen at once.

Calls skip the re-read while an inotify watch on the files' folders says nothing changed; these
tests edit the files every way a user or another program does, then ask straight away (no wait).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from shiro_lsp.mcp.client import McpManager
from shiro_lsp.mcp.config import TrustStore, load_config, watch_config

pytestmark = pytest.mark.skipif(watch_config(Path("/"), Path("/")) is None, reason="needs inotify")


def entry(name: str) -> dict[str, object]:
    return {"command": "node", "args": [f"{name}.js"]}


def write_json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def replace_json(path: Path, value: object) -> None:
    """As editors and Shiro's own stores write: a temporary file renamed over the old one."""
    temp = path.with_name(path.name + ".tmp")
    temp.write_text(json.dumps(value))
    os.replace(temp, path)


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    workspace, root = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    root.mkdir()
    return workspace, root


async def listed(manager: McpManager) -> list[tuple[str, str]]:
    servers, _ = await manager.servers()
    return [(s.config.name, s.status) for s in servers]


async def test_every_kind_of_edit_to_the_config_files_is_seen_by_the_next_look(
    dirs: tuple[Path, Path],
) -> None:
    workspace, root = dirs
    manager = McpManager(workspace, root, trusted=lambda: True)
    try:
        assert await listed(manager) == []
        assert await listed(manager) == []  # (the second look is answered from the watch)
        write_json(workspace / ".mcp.json", {"mcpServers": {"a": entry("a")}})
        assert await listed(manager) == [("a", "untrusted")]
        write_json(workspace / ".vscode" / "mcp.json", {"servers": {"b": entry("b")}})  # a new folder
        assert await listed(manager) == [("a", "untrusted"), ("b", "untrusted")]
        replace_json(workspace / ".vscode" / "mcp.json", {"servers": {"b2": entry("b")}})
        assert await listed(manager) == [("a", "untrusted"), ("b2", "untrusted")]
        replace_json(root / "mcp.json", {"mcpServers": {"c": entry("c")}})
        assert [n for n, _ in await listed(manager)] == ["a", "b2", "c"]
        (workspace / ".mcp.json").unlink()
        assert [n for n, _ in await listed(manager)] == ["b2", "c"]
        (workspace / "unrelated.txt").write_text("x")  # other files change nothing
        assert [n for n, _ in await listed(manager)] == ["b2", "c"]
    finally:
        await manager.close()


async def test_trust_given_in_another_window_is_seen_by_the_next_look(dirs: tuple[Path, Path]) -> None:
    workspace, root = dirs
    write_json(workspace / ".mcp.json", {"mcpServers": {"a": entry("a")}})
    manager = McpManager(workspace, root, trusted=lambda: True)
    try:
        assert await listed(manager) == [("a", "untrusted")]
        other_window = TrustStore(root, workspace)
        other_window.set(load_config(workspace, root).servers[0], True)
        assert await listed(manager) == [("a", "stopped")]
        other_window.set(load_config(workspace, root).servers[0], False)
        assert await listed(manager) == [("a", "untrusted")]
    finally:
        await manager.close()


async def test_a_config_file_that_is_a_link_is_read_every_time(
    dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    """The folder's events do not cover edits to a link's target, so the watch is not relied on.
    (The target is inside the workspace: a project file is never read through a link out of it.)"""
    workspace, root = dirs
    target = workspace / "config" / "elsewhere" / "servers.json"
    write_json(target, {"mcpServers": {"a": entry("a")}})
    (workspace / ".mcp.json").symlink_to(target)
    manager = McpManager(workspace, root, trusted=lambda: True)
    try:
        assert [n for n, _ in await listed(manager)] == ["a"]
        write_json(target, {"mcpServers": {"z": entry("z")}})
        assert [n for n, _ in await listed(manager)] == ["z"]
    finally:
        await manager.close()


def test_the_watch_tells_the_config_files_from_the_others(dirs: tuple[Path, Path]) -> None:
    workspace, root = dirs
    watch = watch_config(workspace, root)
    assert watch is not None
    try:
        assert not watch.changed()
        (workspace / "notes.md").write_text("x")
        (root / "sessions.db").write_text("x")
        assert not watch.changed()
        write_json(root / "mcp-trust.json", [])
        assert watch.changed()
        assert not watch.changed()  # told once
        (workspace / ".vscode").mkdir()
        assert watch.changed() and watch.broken  # a folder it does not watch yet: make a new watch
    finally:
        watch.close()
