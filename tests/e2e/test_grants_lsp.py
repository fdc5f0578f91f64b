"""`shiro/grants` and `shiro/grants/revoke`: the user sees the session's `always` grants and takes one back."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.fixtures import options
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI) -> dict[str, object]:
    return options(home, fake, model="gpt-5", approvalTimeoutMs=3000)


def write(name: str, call_id: str) -> Step:
    return Step(ToolCall("write_file", {"path": name, "content": name}, call_id=call_id))


async def test_grants_are_listed_revoked_and_a_revoked_grant_asks_again(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    assert await client.call("shiro/grants") == {"grants": []}
    client.decisions = ["always"]
    fake.script += [write("a.txt", "c1"), write("b.txt", "c2"), Step(Text("both written"))]
    await client.call("shiro/chat", {"text": "write two files"})
    assert len(client.approvals) == 1

    granted = {"toolName": "write_file", "pattern": "*", "origin": "native"}
    assert await client.call("shiro/grants") == {"grants": [granted]}

    assert await client.call("shiro/grants/revoke", {"grant": granted}) == {"revoked": True, "grants": []}
    assert await client.call("shiro/grants/revoke", {"grant": granted}) == {"revoked": False, "grants": []}
    assert await client.call("shiro/grants") == {"grants": []}

    client.decisions = ["once"]
    fake.script += [write("c.txt", "c3"), Step(Text("written"))]
    await client.call("shiro/chat", {"text": "write another"})
    assert len(client.approvals) == 2 and client.approvals[-1]["input"]["path"] == "c.txt"
    assert (workspace / "c.txt").read_text() == "c.txt"


async def test_a_new_session_starts_with_no_grants(client: ShiroClient, fake: FakeOpenAI) -> None:
    client.decisions = ["always"]
    fake.script += [write("a.txt", "c1"), Step(Text("written"))]
    await client.call("shiro/chat", {"text": "write a file"})
    assert len((await client.call("shiro/grants"))["grants"]) == 1
    await client.call("shiro/session/new", {})
    assert await client.call("shiro/grants") == {"grants": []}
