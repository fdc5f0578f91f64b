"""Shiro as an MCP client, through the real server over stdio, against real MCP servers (the SDK's MCPServer).

The stdio server is ``tests/fakes/mcp_servers.py stdio`` (it appends a line to a marker file each
time it starts, so "never started" and "restarted" are visible); the HTTP one is the same server
over streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from chat_helpers import eventually, model_bodies, tool_names_of
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.fixtures import options
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]

SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_servers.py"


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "testkit.starts"


def stdio_entry(marker: Path, *extra: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVER), "stdio", "--marker", str(marker), *extra]}


def write_mcp_json(workspace: Path, servers: dict[str, Any]) -> None:
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


@pytest.fixture
def timeout_ms() -> int:
    return 20_000


@pytest.fixture
def trusted() -> bool:
    return True


@pytest.fixture
def init_options(
    home: Path, fake: FakeOpenAI, workspace: Path, marker: Path, timeout_ms: int, trusted: bool
) -> dict[str, object]:
    write_mcp_json(workspace, {"testkit": stdio_entry(marker)})
    return options(
        home, fake, model="gpt-5", approvalTimeoutMs=5000, mcpTimeoutMs=timeout_ms, trusted=trusted
    )


def starts(marker: Path) -> int:
    return len(marker.read_text().splitlines()) if marker.exists() else 0


def server_named(listing: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in listing["servers"] if s["name"] == name)


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m.get("role") == "tool"]


async def trust(client: ShiroClient, name: str = "testkit") -> dict[str, Any]:
    result: dict[str, Any] = await client.call("shiro/mcp/trust", {"name": name, "trusted": True})
    return result


async def test_an_untrusted_project_server_is_never_started(
    client: ShiroClient, fake: FakeOpenAI, marker: Path
) -> None:
    listing = await client.call("shiro/mcp/list")
    testkit = server_named(listing, "testkit")
    assert testkit["status"] == "untrusted" and testkit["trusted"] is False
    assert testkit["scope"] == "project" and testkit["source"] == ".mcp.json"
    assert str(SERVER) in testkit["command"] and testkit["command"].startswith(sys.executable)
    fake.script.append(Step(Text("no tools from it")))
    result = await client.call("shiro/chat", {"text": "hello"})
    assert result["stopReason"] == "done"
    assert not any(n.startswith("mcp__") for n in tool_names_of(model_bodies(fake)[0]))
    assert starts(marker) == 0


async def test_a_trusted_server_offers_its_tools_and_an_approved_call_reaches_the_model(
    client: ShiroClient, fake: FakeOpenAI, marker: Path
) -> None:
    listing = await trust(client)
    assert server_named(listing, "testkit")["trusted"] is True
    assert starts(marker) == 0  # lazy: trusting does not start it
    fake.script += [
        Step(ToolCall("mcp__testkit__echo", {"text": "hi there"}, call_id="call_1")),
        Step(Text("done")),
    ]
    client.decisions = ["once"]
    result = await client.call("shiro/chat", {"text": "echo it"})
    assert result["stopReason"] == "done"
    first, second = model_bodies(fake)
    offered = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert "mcp__testkit__echo" in offered and "mcp__testkit__add" in offered
    assert offered["mcp__testkit__echo"]["parameters"]["required"] == ["text"]
    assert "Echo the text back" in offered["mcp__testkit__echo"]["description"]
    assert [a["toolName"] for a in client.approvals] == ["mcp__testkit__echo"]
    assert tool_results(second) == ["HI THERE"]
    listing = await client.call("shiro/mcp/list")
    testkit = server_named(listing, "testkit")
    assert testkit["status"] == "running" and "echo" in testkit["tools"]
    assert starts(marker) == 1


async def test_a_denied_call_never_reaches_the_server(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    await trust(client)
    target = workspace / "never.txt"
    fake.script += [
        Step(ToolCall("mcp__testkit__echo", {"text": "secret plan"}, call_id="call_1")),
        Step(Text("ok")),
    ]
    client.decisions = ["deny"]
    result = await client.call("shiro/chat", {"text": "echo it"})
    events = client.events(result["taskId"])
    assert any(e["type"] == "tool-denied" for e in events)
    assert not any(e["type"] == "tool-result" for e in events)
    assert tool_results(model_bodies(fake)[1]) == ["User denied this tool call."]
    assert not target.exists()


async def test_always_covers_that_tool_for_the_session_and_rules_match_by_name(
    client: ShiroClient, fake: FakeOpenAI
) -> None:
    await trust(client)
    fake.script += [
        Step(ToolCall("mcp__testkit__echo", {"text": "one"}, call_id="c1")),
        Step(ToolCall("mcp__testkit__echo", {"text": "two"}, call_id="c2")),
        Step(ToolCall("mcp__testkit__add", {"a": 2, "b": 3}, call_id="c3")),
        Step(Text("done")),
    ]
    client.decisions = ["always", "once"]
    await client.call("shiro/chat", {"text": "go"})
    assert [a["toolName"] for a in client.approvals] == ["mcp__testkit__echo", "mcp__testkit__add"]
    last = tool_results(model_bodies(fake)[-1])
    assert last[:2] == ["ONE", "TWO"] and json.loads(last[2]) == {"sum": 5}
    # a permissions pattern on the tool name denies without asking
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"shiro": {"permissions": {"mcp__testkit__*": "deny"}}})
    )
    fake.script += [Step(ToolCall("mcp__testkit__add", {"a": 1, "b": 1}, call_id="c4")), Step(Text("ok"))]
    await client.call("shiro/chat", {"text": "again"})
    assert len(client.approvals) == 2
    assert (
        tool_results(model_bodies(fake)[-1])[-1]
        == "Refused by the permission rules: mcp__testkit__add is denied."
    )


async def test_an_edited_entry_asks_for_trust_again(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, marker: Path
) -> None:
    await trust(client)
    fake.script += [Step(Text("one"))]
    await client.call("shiro/chat", {"text": "start it"})
    assert starts(marker) == 1
    write_mcp_json(workspace, {"testkit": stdio_entry(marker, "--extra")})
    listing = await client.call("shiro/mcp/list")
    assert server_named(listing, "testkit")["status"] == "untrusted"
    assert "--extra" in server_named(listing, "testkit")["command"]
    fake.script += [Step(Text("two"))]
    await client.call("shiro/chat", {"text": "after the edit"})
    assert not any(n.startswith("mcp__") for n in tool_names_of(model_bodies(fake)[-1]))
    assert starts(marker) == 1
    await trust(client)
    fake.script += [Step(Text("three"))]
    await client.call("shiro/chat", {"text": "trusted again"})
    assert "mcp__testkit__echo" in tool_names_of(model_bodies(fake)[-1])
    assert starts(marker) == 2


async def test_an_entry_edited_during_a_turn_is_not_trusted_by_the_turns_next_call(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, marker: Path
) -> None:
    """Calls do not re-read the config while a watch says it is unchanged: an edit made between
    two calls of one step (here by a command) still reaches the second call."""
    await trust(client)
    edit = 'sed -i \'s/"stdio"/"stdio", "--extra"/\' .mcp.json'
    fake.script += [
        Step(
            ToolCall("mcp__testkit__echo", {"text": "one"}, call_id="c1"),
            ToolCall("bash", {"command": edit}, call_id="c2"),
            ToolCall("mcp__testkit__echo", {"text": "two"}, call_id="c3"),
        ),
        Step(Text("done")),
    ]
    client.decisions = ["once", "once", "once"]
    await client.call("shiro/chat", {"text": "go"})
    assert "--extra" in (workspace / ".mcp.json").read_text()
    results = tool_results(model_bodies(fake)[-1])
    assert results[0] == "ONE"
    assert results[2] == 'The MCP server "testkit" is not trusted (its entry may have changed).'
    assert starts(marker) == 1


async def test_each_call_of_a_batch_records_its_own_file_changes_in_the_checkpoint(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    """Consecutive MCP calls keep the workspace reserved, and one scan serves as the look after a
    call and before the next: each card still shows only its own call's change."""
    await trust(client)
    (workspace / "a.txt").write_text("before\n")
    write = "mcp__testkit__write"
    fake.script += [
        Step(
            ToolCall(write, {"path": str(workspace / "a.txt"), "text": "after\n"}, call_id="c1"),
            ToolCall(write, {"path": str(workspace / "b.txt"), "text": "new\n"}, call_id="c2"),
            ToolCall("mcp__testkit__echo", {"text": "x"}, call_id="c3"),
            ToolCall(write, {"path": str(workspace / "a.txt"), "text": "again\n"}, call_id="c4"),
        ),
        Step(Text("done")),
    ]
    client.decisions = ["always", "always"]
    result = await client.call("shiro/chat", {"text": "write them"})
    cards = [e for e in client.events(result["taskId"]) if e["type"] == "tool-result"]
    assert [[f["path"] for f in c.get("files") or []] for c in cards] == [["a.txt"], ["b.txt"], [], ["a.txt"]]
    assert "-before\n+after\n" in cards[0]["diff"] and "-after\n+again\n" in cards[3]["diff"]
    rows = {f["path"]: f["status"] for f in (await client.call("shiro/changes", {}))["files"]}
    assert rows == {"a.txt": "modified", "b.txt": "added"}
    checkpoint = (await client.call("shiro/checkpoint/list", {}))["checkpoints"][0]
    restored = await client.call("shiro/checkpoint/restore", {"id": checkpoint["id"], "mode": "code"})
    assert restored["restored"] == ["a.txt", "b.txt"] and restored["conflicts"] == []
    assert (workspace / "a.txt").read_text() == "before\n" and not (workspace / "b.txt").exists()


TRY_RESERVE = """
import sys
from pathlib import Path
from shiro_lsp.errors import Conflict
from shiro_lsp.state.reservation import reserve_workspace
try:
    with reserve_workspace(Path(sys.argv[1]), sys.argv[2], timeout=0.5):
        print("got it")
except Conflict:
    print("busy")
"""


async def test_the_workspace_is_not_held_while_the_next_call_waits_for_approval(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    await trust(client)
    fake.script += [
        Step(
            ToolCall("mcp__testkit__echo", {"text": "one"}, call_id="c1"),
            ToolCall("mcp__testkit__add", {"a": 1, "b": 2}, call_id="c2"),
        ),
        Step(Text("done")),
    ]
    client.decisions = ["always", "once"]
    client.approval_delay = 3.0
    chat = asyncio.create_task(client.call("shiro/chat", {"text": "go"}))
    await eventually(lambda: len(client.approvals) == 2)
    args = [sys.executable, "-c", TRY_RESERVE, str(home), str(workspace)]
    tried = await asyncio.to_thread(subprocess.run, args, capture_output=True, text=True)
    assert tried.stdout.strip() == "got it", tried.stderr  # a note write would not wait for the user
    assert (await chat)["stopReason"] == "done"
    first, second = tool_results(model_bodies(fake)[-1])
    assert first == "ONE" and json.loads(second) == {"sum": 3}


async def test_a_server_crashing_mid_call_is_reported_and_restarted_on_the_next_call(
    client: ShiroClient, fake: FakeOpenAI, marker: Path
) -> None:
    await trust(client)
    fake.script += [
        Step(ToolCall("mcp__testkit__crash", {}, call_id="c1")),
        Step(ToolCall("mcp__testkit__echo", {"text": "back"}, call_id="c2")),
        Step(Text("done")),
    ]
    client.decisions = ["always", "always"]
    result = await client.call("shiro/chat", {"text": "crash it"})
    assert result["stopReason"] == "done"
    errors = [e["error"] for e in client.events(result["taskId"]) if e["type"] == "tool-error"]
    assert len(errors) == 1 and "stopped while running crash" in errors[0]
    assert tool_results(model_bodies(fake)[-1])[-1] == "BACK"
    assert starts(marker) == 2
    assert any("stopped during crash" in m.message for m in client.messages)


@pytest.mark.parametrize("timeout_ms", [10_000])  # the server's own start must fit in it too
async def test_a_hung_call_is_cancelled_by_the_timeout(
    client: ShiroClient, fake: FakeOpenAI, timeout_ms: int
) -> None:
    await trust(client)
    fake.script += [
        Step(ToolCall("mcp__testkit__hang", {}, call_id="c1")),
        Step(ToolCall("mcp__testkit__echo", {"text": "still here"}, call_id="c2")),
        Step(Text("done")),
    ]
    client.decisions = ["always", "always"]
    result = await client.call("shiro/chat", {"text": "hang"})
    errors = [e["error"] for e in client.events(result["taskId"]) if e["type"] == "tool-error"]
    assert errors and "did not answer hang within 10 s" in errors[0]
    assert tool_results(model_bodies(fake)[-1])[-1] == "STILL HERE"


async def test_a_hung_call_is_cancelled_by_cancel_request(client: ShiroClient, fake: FakeOpenAI) -> None:
    await trust(client)
    fake.script += [Step(Text("warm"))]
    await client.call("shiro/chat", {"text": "start the server"})  # its tools are listed: it runs
    fake.script += [Step(ToolCall("mcp__testkit__hang", {}, call_id="c1"))]
    client.decisions = ["always"]
    future = client.protocol.send_request("shiro/chat", {"text": "hang"}, msg_id="chat-hang")
    await eventually(lambda: len(client.approvals) == 1 and not client.answering, timeout=60)
    await asyncio.sleep(0.3)  # the call is out at the server
    client.cancel_request(types.CancelParams(id="chat-hang"))
    result = await asyncio.wait_for(asyncio.wrap_future(future), 10)
    assert result["stopReason"] == "cancelled"
    fake.script += [Step(ToolCall("mcp__testkit__echo", {"text": "next"}, call_id="c2")), Step(Text("ok"))]
    client.decisions = ["once"]
    await client.call("shiro/chat", {"text": "next"})
    assert tool_results(model_bodies(fake)[-1])[-1] == "NEXT"


async def test_a_huge_result_is_capped_and_an_image_is_shown_to_the_model(
    client: ShiroClient, fake: FakeOpenAI
) -> None:
    await trust(client)
    fake.script += [
        Step(ToolCall("mcp__testkit__huge", {"size": 200_000}, call_id="c1")),
        Step(ToolCall("mcp__testkit__picture", {}, call_id="c2")),
        Step(Text("done")),
    ]
    client.decisions = ["always", "always"]
    await client.call("shiro/chat", {"text": "big"})
    huge, picture = tool_results(model_bodies(fake)[-1])
    assert len(huge) < 31_000 and huge.endswith("[truncated 170000 chars]")
    assert picture == "[image returned by the tool (1x1): shown to you after this result]"
    messages = model_bodies(fake)[-1]["messages"]
    after = messages[[m.get("tool_call_id") for m in messages].index("c2") + 1]
    assert after["role"] == "user" and after["content"][1]["type"] == "image_url"


@pytest.mark.parametrize("trusted", [False])
async def test_restricted_mode_starts_no_server(
    client: ShiroClient, fake: FakeOpenAI, marker: Path, trusted: bool
) -> None:
    listing = await trust(client)
    assert server_named(listing, "testkit")["status"] == "stopped"
    assert "restricted mode" in server_named(listing, "testkit")["error"]
    fake.script.append(Step(Text("nothing")))
    await client.call("shiro/chat", {"text": "hello"})
    assert not any(n.startswith("mcp__") for n in tool_names_of(model_bodies(fake)[0]))
    assert starts(marker) == 0


async def test_bad_config_files_are_reported_in_words_and_the_rest_still_works(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    (workspace / ".vscode").mkdir()
    (workspace / ".vscode" / "mcp.json").write_text('{"servers": {"broken": ')
    home.mkdir(parents=True, exist_ok=True)
    (home / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "legacy": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
                    "nocommand": {"args": ["x"]},
                }
            }
        )
    )
    listing = await trust(client)
    problems = " | ".join(listing["problems"])
    assert ".vscode/mcp.json is not valid JSON" in problems
    assert 'MCP server "legacy"' in problems and 'unknown type "sse"' in problems
    assert 'MCP server "nocommand"' in problems and 'no "command"' in problems
    assert [s["name"] for s in listing["servers"]] == ["testkit"]
    fake.script += [Step(ToolCall("mcp__testkit__echo", {"text": "works"}, call_id="c1")), Step(Text("ok"))]
    client.decisions = ["once"]
    await client.call("shiro/chat", {"text": "go"})
    assert tool_results(model_bodies(fake)[-1]) == ["WORKS"]
    await eventually(lambda: any("not valid JSON" in m.message for m in client.messages))


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    port_file = tmp_path / "port"
    process = subprocess.Popen([sys.executable, str(SERVER), "http", str(port_file)])
    try:
        for _ in range(600):
            if port_file.exists() and port_file.read_text():
                break
            if process.poll() is not None:
                raise RuntimeError("the HTTP MCP server exited")
            import time

            time.sleep(0.05)
        yield f"http://127.0.0.1:{port_file.read_text()}/mcp"
    finally:
        process.terminate()
        process.wait(10)


async def test_a_user_scope_http_server_is_used_without_a_trust_prompt(
    http_server: str, client: ShiroClient, fake: FakeOpenAI, home: Path
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "mcp.json").write_text(
        json.dumps({"mcpServers": {"remote": {"type": "http", "url": http_server}}})
    )
    listing = await client.call("shiro/mcp/list")
    remote = server_named(listing, "remote")
    assert remote["scope"] == "user" and remote["trusted"] is True and remote["command"] == http_server
    fake.script += [Step(ToolCall("mcp__remote__add", {"a": 40, "b": 2}, call_id="c1")), Step(Text("ok"))]
    client.decisions = ["once"]
    await client.call("shiro/chat", {"text": "add"})
    assert json.loads(tool_results(model_bodies(fake)[-1])[0]) == {"sum": 42}
    assert not any(n.startswith("mcp__testkit") for n in tool_names_of(model_bodies(fake)[0]))


@pytest.mark.parametrize("timeout_ms", [2000])
async def test_a_server_that_never_answers_initialize_is_given_up_within_the_timeout(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, marker: Path, timeout_ms: int
) -> None:
    """Issue 20: start-up is bounded by mcpTimeoutMs (a chat and the listing waited about 65 s for it)."""
    write_mcp_json(workspace, {"testkit": stdio_entry(marker, "--hang-at-start")})
    await trust(client)
    fake.script.append(Step(Text("no tools today")))
    # ten times the timeout: far below the minute it took, far above a slow machine's start
    result = await asyncio.wait_for(client.call("shiro/chat", {"text": "hello"}), 20)
    assert result["stopReason"] == "done"
    assert not any(n.startswith("mcp__") for n in tool_names_of(model_bodies(fake)[0]))
    listing = await asyncio.wait_for(client.call("shiro/mcp/list"), 20)
    testkit = server_named(listing, "testkit")
    assert testkit["status"] == "error" and "did not answer within 2 s of starting" in testkit["error"]
    assert starts(marker) <= 1  # started once (a loaded machine may stop it before it writes its line)


async def test_a_rule_for_one_server_never_covers_a_server_named_like_its_prefix(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, marker: Path
) -> None:
    """Issue 20: "mcp__probe__*: allow" allowed the tools of a server named "probe__x"."""
    write_mcp_json(workspace, {"probe__x": stdio_entry(marker)})
    listing = await client.call("shiro/mcp/list")
    assert [s["name"] for s in listing["servers"]] == []
    assert any('"probe__x"' in problem and "cannot hold" in problem for problem in listing["problems"])
    fake.script.append(Step(Text("nothing to call")))
    await client.call("shiro/chat", {"text": "hello"})
    assert not any(n.startswith("mcp__") for n in tool_names_of(model_bodies(fake)[0]))
    assert starts(marker) == 0
