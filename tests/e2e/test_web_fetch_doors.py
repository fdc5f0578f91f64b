"""web_fetch through the other front doors: headless `shiro-lsp run` (offered only with --yolo, as every
tool that asks) and ACP (`session/request_permission` names the domain "Always" allows). The user's
allowHosts comes from SHIRO_WEB_FETCH_ALLOW_HOSTS there."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    Implementation,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallStart,
    ToolCallUpdate,
)

from chat_helpers import model_bodies
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.web_pages import WebPages

pytest_plugins = ["fakes.fixtures"]

PAGE = "<main><h1>Changelog</h1><p>Version 9 drops the legacy flag.</p></main>"


@pytest.fixture
def site() -> Iterator[WebPages]:
    pages = WebPages().start()
    pages.page("/changelog", PAGE)
    yield pages
    pages.stop()


def environment(fake: FakeOpenAI) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHIRO_"))}
    return env | {
        "OPENAI_BASE_URL": fake.base_url,
        "OPENAI_API_KEY": "sk-test",
        "SHIRO_MODEL": "gpt-5",
        "SHIRO_WEB_FETCH_ALLOW_HOSTS": "localhost",
    }


async def headless(fake: FakeOpenAI, workspace: Path, home: Path, *args: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "shiro_lsp",
        "run",
        "--workspace",
        str(workspace),
        "--home",
        str(home),
        "--json",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=environment(fake),
    )
    out, _ = await asyncio.wait_for(process.communicate(), 90)
    return process.returncode or 0, out.decode()


async def test_headless_with_yolo_reads_a_page(
    fake: FakeOpenAI, workspace: Path, home: Path, site: WebPages
) -> None:
    fake.script += [
        Step(ToolCall("web_fetch", {"url": site.url("/changelog", "localhost")}, call_id="w1")),
        Step(Text("Version 9 drops it.")),
    ]
    code, out = await headless(fake, workspace, home, "--yolo", "-p", "what does version 9 change?")
    events = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    [result] = [e for e in events if e["type"] == "tool-result"]
    assert "Version 9 drops the legacy flag." in result["output"]


async def test_headless_without_yolo_does_not_offer_web_fetch(
    fake: FakeOpenAI, workspace: Path, home: Path, site: WebPages
) -> None:
    fake.script += [Step(Text("I cannot read web pages here."))]
    code, _ = await headless(fake, workspace, home, "-p", "read the changelog")
    offered = [t["function"]["name"] for t in model_bodies(fake)[0]["tools"]]
    assert code == 0 and "web_fetch" not in offered and "read_file" in offered
    assert site.hits == []


class Editor:
    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.permissions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="always"))


async def test_acp_asks_for_the_domain_once_and_reads_the_page(
    fake: FakeOpenAI, workspace: Path, home: Path, site: WebPages
) -> None:
    url = site.url("/changelog", "localhost")
    fake.script += [
        Step(ToolCall("web_fetch", {"url": url}, call_id="w1")),
        Step(ToolCall("web_fetch", {"url": url + "?again"}, call_id="w2")),
        Step(Text("done")),
    ]
    editor = Editor()
    async with spawn_agent_process(
        editor,
        sys.executable,
        "-m",
        "shiro_lsp",
        "acp",
        "--home",
        str(home),
        env=environment(fake),
        transport_kwargs={"stderr": None, "shutdown_timeout": 30.0},
    ) as (conn, _process):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="pytest", version="1"),
        )
        session_id = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        response = await asyncio.wait_for(
            conn.prompt(session_id=session_id, prompt=[text_block("read it")]), 90
        )
    assert response.stop_reason == "end_turn"
    [(tool_call, options)] = editor.permissions  # the second page of the domain did not ask
    assert tool_call.kind == "fetch" and tool_call.title == f"web_fetch {url}"
    assert [o.name for o in options] == ["Allow once", "Allow localhost for this session", "Deny"]
    starts = [u for u in editor.updates if isinstance(u, ToolCallStart)]
    assert [s.kind for s in starts] == ["fetch", "fetch"]
    tool_outputs = [m["content"] for m in model_bodies(fake)[-1]["messages"] if m["role"] == "tool"]
    assert all("Version 9 drops the legacy flag." in output for output in tool_outputs)
