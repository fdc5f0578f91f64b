"""MCP server configuration: the three files, what is skipped and why, trust pinned to the entry's hash."""

from __future__ import annotations

import json
from pathlib import Path

from shiro_lsp.mcp.config import TrustStore, load_config, parse_entry, tool_name


def write(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value))


def test_the_three_files_are_read_in_order_and_the_first_name_wins(tmp_path: Path) -> None:
    workspace, root = tmp_path / "ws", tmp_path / "state"
    write(workspace / ".mcp.json", {"mcpServers": {"a": {"command": "node", "args": ["a.js"]}}})
    write(
        workspace / ".vscode/mcp.json",
        {"servers": {"b": {"type": "http", "url": "http://127.0.0.1:9/mcp"}, "a": {"command": "x"}}},
    )
    write(root / "mcp.json", {"mcpServers": {"c": {"command": "uvx", "args": ["tool"], "env": {"K": "v w"}}}})
    loaded = load_config(workspace, root)
    assert [(s.name, s.scope, s.transport) for s in loaded.servers] == [
        ("a", "project", "stdio"),
        ("b", "project", "http"),
        ("c", "user", "stdio"),
    ]
    assert loaded.servers[0].source == ".mcp.json" and loaded.servers[1].source == ".vscode/mcp.json"
    assert loaded.servers[2].command_line() == "K='v w' uvx tool"
    assert loaded.problems == [
        'MCP server "a" in .vscode/mcp.json has the same name as one defined earlier; it was skipped.'
    ]


def test_an_editors_servers_come_last_in_user_scope(tmp_path: Path) -> None:
    workspace, root = tmp_path / "ws", tmp_path / "state"
    write(workspace / ".mcp.json", {"mcpServers": {"a": {"command": "node"}}})
    client = {
        "a": {"command": "other"},
        "z": {"command": "zed-mcp", "env": {}},
        "s": {"type": "sse", "url": "x"},
    }
    loaded = load_config(workspace, root, client)
    assert [(s.name, s.scope, s.source) for s in loaded.servers] == [
        ("a", "project", ".mcp.json"),
        ("z", "user", "the editor's MCP servers"),
    ]
    assert loaded.problems == [
        'MCP server "a" in the editor\'s MCP servers has the same name as one defined earlier; it was skipped.',
        'MCP server "s" in the editor\'s MCP servers has an unknown type "sse" (Shiro supports "stdio" and "http"); '
        "it was skipped.",
    ]


def test_bad_files_and_entries_are_reported_in_words(tmp_path: Path) -> None:
    workspace, root = tmp_path / "ws", tmp_path / "state"
    write(workspace / ".mcp.json", "{not json")
    write(
        workspace / ".vscode/mcp.json",
        {"servers": {"s": {"type": "sse", "url": "http://x"}, "n": {"args": []}, "ok": {"command": "go"}}},
    )
    write(root / "mcp.json", ["a list"])
    loaded = load_config(workspace, root)
    assert [s.name for s in loaded.servers] == ["ok"]
    assert loaded.problems[0].startswith(".mcp.json is not valid JSON")
    assert 'unknown type "sse"' in loaded.problems[1]
    assert 'no "command"' in loaded.problems[2]
    assert "must hold a JSON object" in loaded.problems[3]


def test_entry_checks() -> None:
    assert "must be a list of strings" in str(parse_entry("x", {"command": "a", "args": "b"}, "project", "f"))
    assert 'no http(s) "url"' in str(parse_entry("x", {"type": "http", "url": "ftp://h"}, "project", "f"))
    assert "not a JSON object" in str(parse_entry("x", 3, "project", "f"))


def test_tool_names_are_safe_and_bounded() -> None:
    assert tool_name("my server", "do.it") == "mcp__my_server__do_it"
    assert len(tool_name("s" * 50, "t" * 50)) == 64


def test_trust_is_pinned_to_the_entry_and_per_workspace(tmp_path: Path) -> None:
    workspace, root = tmp_path / "ws", tmp_path / "state"
    write(workspace / ".mcp.json", {"mcpServers": {"a": {"command": "node"}}})
    server = load_config(workspace, root).servers[0]
    store = TrustStore(root, workspace)
    assert not store.is_trusted(server)
    store.set(server, True)
    assert store.is_trusted(server)
    assert not TrustStore(root, tmp_path / "other").is_trusted(server)
    write(workspace / ".mcp.json", {"mcpServers": {"a": {"command": "node", "args": ["evil.js"]}}})
    edited = load_config(workspace, root).servers[0]
    assert edited.fingerprint != server.fingerprint and not store.is_trusted(edited)
    store.set(server, False)
    assert not store.is_trusted(server)
    assert json.loads((root / "mcp-trust.json").read_text()) == []
