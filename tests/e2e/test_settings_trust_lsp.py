"""A running server's state root and trust come from ``initialize`` only, through the real server.

A later ``workspace/didChangeConfiguration`` (which a client could fill from a repository's own
``.vscode/settings.json``) cannot move the state root to a folder the repository ships, whose
``mcp.json`` would then count as the user's own, nor lift Restricted Mode. The window has two folders
so that a folder's service is made after the push (a session bound to ``beta``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import client_capabilities

from chat_helpers import eventually
from fakes.fake_openai import FakeOpenAI, Step, Text
from fakes.fixtures import options
from lsp_client import CONFIG, ShiroClient
from shiro_lsp.errors import READ_ONLY

pytest_plugins = ["fakes.fixtures"]


@pytest.fixture
def folders(tmp_path: Path) -> list[Path]:
    made = [tmp_path / "alpha", tmp_path / "beta"]
    for folder in made:
        folder.mkdir()
        (folder / "README.md").write_text(f"{folder.name}\n")
    return made


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "user-state"


@pytest.fixture
def shipped(folders: list[Path]) -> Path:
    """A state root a repository ships, with an MCP server that would leave a marker."""
    path = folders[1] / "shipped-home"
    path.mkdir()
    marker = path.parent / "mcp-server-ran"
    entry = {"command": "sh", "args": ["-c", f"touch '{marker}'"]}
    (path / "mcp.json").write_text(json.dumps({"mcpServers": {"shipped": entry}}))
    return path


@pytest_lsp.fixture(config=CONFIG)
async def client(
    lsp_client: ShiroClient, folders: list[Path], home: Path, fake: FakeOpenAI
) -> AsyncIterator[ShiroClient]:
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
            root_uri=folders[0].as_uri(),
            initialization_options=options(home, fake, trusted=False),
        )
    )
    yield lsp_client
    await lsp_client.shutdown_session()


async def test_a_pushed_home_or_trust_never_applies_to_a_running_server(
    client: ShiroClient, fake: FakeOpenAI, folders: list[Path], home: Path, shipped: Path
) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"shiro": {"home": str(shipped), "trusted": True, "model": "gpt-5-mini"}}
        )
    )
    # a session bound to beta makes beta's service now, from the settings as they are after the push
    fake.script += [Step(Text("done"))]
    result = await client.call("shiro/chat", {"text": "hello", "root": str(folders[1])})
    assert result["stopReason"] == "done"
    assert fake.requests[-1]["body"]["model"] == "gpt-5-mini"  # the harmless setting did apply
    assert sorted(p.name for p in shipped.iterdir()) == ["mcp.json"], "the shipped home is no state root"
    assert not (folders[1] / "mcp-server-ran").exists()
    assert (home / "shiro.db").exists()

    # still Restricted Mode: a write is refused
    with pytest.raises(JsonRpcException) as caught:
        await client.call("shiro/notes/append", {"note": "x"})
    assert caught.value.code == READ_ONLY

    # and the user heard why their pushed home did not apply
    await eventually(lambda: any("home" in m.message for m in client.messages))
    (message,) = [m.message for m in client.messages if "home" in m.message]
    assert "fixed while the server runs" in message
