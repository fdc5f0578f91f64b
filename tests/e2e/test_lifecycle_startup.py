"""Start-up: the editor's ``initialize`` is answered before Shiro's heavy modules load, and every
request right behind it is answered as before; a start that fails says why instead of hanging.

The reply needs only pygls and the edge. pydantic with the protocol models, the feature modules,
the service, the state stores and the agent layer (tools, engine, the model SDK) load right behind
the reply, before the next message is read (``shiro_lsp/server/app.py``). What was loaded when the
reply was queued comes from ``fakes/server_at_reply.py``, which runs the real server.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from raw_lsp import RawServer

from fakes.fake_openai import FakeOpenAI, Step, Text
from lsp_client import ShiroClient, initialize, make_client

pytest_plugins = ["fakes.fixtures"]

WRAPPER = str(Path(__file__).resolve().parents[1] / "fakes" / "server_at_reply.py")
HEAVY = (
    "pydantic",
    "pydantic_core",
    "importlib.metadata",
    "openai",
    "httpx",
    "shiro_lsp.server.protocol",
    "shiro_lsp.config",
    "shiro_lsp.service",
    "shiro_lsp.workspaces",
    "shiro_lsp.agent",
    "shiro_lsp.state",
    "shiro_lsp.context",
)


async def start(tmp_path: Path, **env: str) -> ShiroClient:
    client = make_client()
    await client.start_io(sys.executable, WRAPPER, env={**os.environ, **env})
    return client


def loaded_at_reply(path: Path) -> list[str]:
    modules: list[str] = json.loads(path.read_text())
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


async def test_initialize_is_answered_before_the_heavy_modules_load(tmp_path: Path, fake: FakeOpenAI) -> None:
    workspace, modules = tmp_path / "ws", tmp_path / "modules.json"
    workspace.mkdir()
    client = await start(tmp_path, SHIRO_TEST_MODULES_FILE=str(modules))
    try:
        result = await initialize(
            client, workspace, home=str(tmp_path / "state"), apiKey="sk-test", baseUrl=fake.base_url
        )
        assert loaded_at_reply(modules) == []
        # The reply still announces the code action and its command (registered before it).
        assert result.capabilities.code_action_provider is not None
        assert result.capabilities.execute_command_provider is not None
        assert list(result.capabilities.execute_command_provider.commands) == ["shiro.remember"]
        # Requests sent right behind it, all at once, are answered as before: they wait for the rest.
        fake.script.append(Step(Text("hello from the model")))
        current, memory, todos, turn = await asyncio.gather(
            client.call("shiro/session/current"),
            client.call("shiro/memory/list"),
            client.call("shiro/todos"),
            client.call("shiro/chat", {"text": "hi"}),
        )
        assert current["messageCount"] == 0 and memory["entries"] == [] and todos["todos"] == []
        assert turn["stopReason"] == "done"
        texts = [e["text"] for e in client.events() if e.get("type") == "text"]
        assert "".join(texts) == "hello from the model"
        assert client.messages == []  # nothing went wrong that the user is told about
    finally:
        await client.shutdown_session()
        await client.stop()


def test_requests_before_and_right_behind_initialize_are_answered_in_order(tmp_path: Path) -> None:
    """Sent all at once, not waiting for the reply: the one behind it finds the server started."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    server = RawServer(tmp_path / "state", workspace)
    try:
        early = server.request("shiro/todos", {})
        init = server.request(
            "initialize",
            {
                "processId": None,
                "rootUri": workspace.as_uri(),
                "capabilities": {},
                "initializationOptions": {"home": str(tmp_path / "state")},
            },
        )
        behind = server.request("shiro/session/current", {})
        assert server.reply(early)["error"]["message"] == "The server is not initialized yet."
        assert "codeActionProvider" in server.reply(init)["result"]["capabilities"]
        assert server.reply(behind)["result"]["cwd"] == str(workspace)
    finally:
        server.close()


async def test_a_start_that_fails_behind_the_reply_says_why_on_every_request(tmp_path: Path) -> None:
    client = await start(tmp_path, SHIRO_TEST_BROKEN_MODULE="shiro_lsp.server.chat")
    try:
        await initialize(client, tmp_path, home=str(tmp_path / "state"))
        for method in ("shiro/session/current", "shiro/chat", "shiro/memory/list"):
            params: dict[str, Any] = {"text": "hi"} if method == "shiro/chat" else {}
            with pytest.raises(JsonRpcException, match=r"Shiro could not start: .*shiro_lsp\.server\.chat"):
                await asyncio.wait_for(client.call(method, params), 30)
        await asyncio.sleep(0.1)  # the notification went out before the answers; let it be read
        shown = [m.message for m in client.messages]
        assert len(shown) == 1 and "Shiro could not start" in shown[0], shown
    finally:
        await client.shutdown_session()
        await client.stop()
