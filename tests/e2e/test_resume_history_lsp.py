"""History as it happened (issue 22): a resumed session returns, besides its messages, what the panel
showed of each turn: approvals given and denied (with the reason), denials, errors, stops, tool-card
diffs, and each turn's task id, end, checkpoint and Changed files. The session's model is the one it
last ran on. Branches carry compaction markers and turns. Through the real server over stdio.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from chat_helpers import eventually
from fakes.fake_openai import FakeOpenAI, HttpError, Step, Text, ToolCall, WaitForRelease
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI) -> dict[str, object]:
    return {
        "home": str(home),
        "apiKey": "sk-test",
        "baseUrl": fake.base_url,
        "api": "chat",
        "model": "gpt-5",
        "maxRetries": 0,
        "approvalTimeoutMs": 5000,
        "permissions": {},  # every edit asks
    }


def edit(old: str, new: str, call_id: str) -> ToolCall:
    return ToolCall("edit_file", {"path": "app.py", "oldString": old, "newString": new}, call_id)


async def chat(client: ShiroClient, fake: FakeOpenAI, text: str, *steps: Step | HttpError) -> dict[str, Any]:
    fake.script += list(steps)
    result: dict[str, Any] = await client.call("shiro/chat", {"text": text})
    return result


async def cancelled_chat(client: ShiroClient, fake: FakeOpenAI, text: str) -> dict[str, Any]:
    gate = fake.gate("hold")
    fake.script.append(Step(Text("half an answer"), WaitForRelease(gate), Text(" never sent")))
    future = client.protocol.send_request("shiro/chat", {"text": text}, msg_id="to-cancel")
    await eventually(lambda: any(e.get("text") == "half an answer" for e in client.events()))
    client.cancel_request(types.CancelParams(id="to-cancel"))
    result = dict(await asyncio.wait_for(asyncio.wrap_future(future), 15))
    gate.release()
    return result


async def four_turns(client: ShiroClient, fake: FakeOpenAI, workspace: Path) -> list[dict[str, Any]]:
    """Allowed edit, denied edit (with a reason), a failed model call, a stopped answer."""
    (workspace / "app.py").write_text("x = 1\n")
    client.decisions = ["once", {"decision": "deny", "reason": "keep it at 2"}]
    allowed = await chat(client, fake, "make it 2", Step(edit("x = 1", "x = 2", "c1")), Step(Text("done")))
    denied = await chat(client, fake, "make it 3", Step(edit("x = 2", "x = 3", "c2")), Step(Text("ok")))
    failed = await chat(client, fake, "again", HttpError.server_error())
    stopped = await cancelled_chat(client, fake, "explain")
    assert [r["stopReason"] for r in (allowed, denied, failed, stopped)] == [
        "done",
        "done",
        "error",
        "cancelled",
    ]
    assert (workspace / "app.py").read_text() == "x = 2\n"
    return [allowed, denied, failed, stopped]


def use_model(client: ShiroClient, model: str) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"shiro": {"model": model}})
    )


async def resumed(client: ShiroClient) -> dict[str, Any]:
    session_id = (await client.call("shiro/session/current"))["id"]
    await client.call("shiro/session/new")
    result: dict[str, Any] = await client.call("shiro/session/resume", {"id": session_id})
    return result


def events_of(result: dict[str, Any], task_id: str) -> list[dict[str, Any]]:
    return [e["event"] for e in result["events"] if e["taskId"] == task_id]


async def test_resume_returns_each_turn_as_the_panel_showed_it(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    allowed, denied, failed, stopped = await four_turns(client, fake, workspace)
    result = await resumed(client)
    transcript = result["transcript"]

    turns = result["turns"]
    assert [t["taskId"] for t in turns] == [r["taskId"] for r in (allowed, denied, failed, stopped)]
    assert [t["stopReason"] for t in turns] == ["done", "done", "error", "cancelled"]
    for turn in turns:  # each turn starts at its prompt and ends where the next begins
        assert transcript[turn["at"]]["role"] == "user"
    assert [t["end"] for t in turns[:-1]] == [t["at"] for t in turns[1:]]
    assert turns[-1]["end"] == len(transcript)
    assert "500" in turns[2]["error"] or "server" in turns[2]["error"].lower()

    first = turns[0]
    assert first["checkpointId"] and first["changes"]["taskId"] == allowed["taskId"]
    (row,) = first["changes"]["files"]
    assert (row["path"], row["turnAdditions"], row["turnDeletions"]) == ("app.py", 1, 1)
    assert turns[1]["changes"] is None and turns[1]["checkpointId"] is None

    approval, card = events_of(result, allowed["taskId"])
    assert (approval["type"], approval["decision"], approval["id"]) == ("approval", "once", "c1")
    assert approval["suggestedPattern"] and approval["expired"] is False
    assert card["type"] == "tool-result" and "+x = 2" in card["diff"] and card["output"] == ""
    assert [(f["path"], f["additions"], f["deletions"]) for f in card["files"]] == [("app.py", 1, 1)]

    no, refused = events_of(result, denied["taskId"])
    assert (no["type"], no["decision"], no["reason"]) == ("approval", "deny", "keep it at 2")
    assert refused["type"] == "tool-denied" and refused["id"] == "c2" and "keep it at 2" in refused["reason"]

    (error,) = events_of(result, failed["taskId"])
    assert error["type"] == "error"
    assert events_of(result, stopped["taskId"]) == []

    for mark in result["events"]:  # every event sits inside its turn
        turn = next(t for t in turns if t["taskId"] == mark["taskId"])
        assert turn["at"] < mark["at"] <= turn["end"]


async def test_a_session_saved_before_turns_were_recorded_still_gets_its_changes_per_turn(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    allowed, *_ = await four_turns(client, fake, workspace)
    session_id = (await client.call("shiro/session/current"))["id"]
    await client.call("shiro/session/new")
    path = home / "sessions" / f"{session_id}.json"
    record = json.loads(path.read_text())
    del record["turns"], record["events"]  # as an older Shiro wrote it
    path.write_text(json.dumps(record))

    result = await client.call("shiro/session/resume", {"id": session_id})
    assert result["events"] == []
    (turn,) = result["turns"]  # from the checkpoint: the one turn that changed files
    assert turn["taskId"] == allowed["taskId"] and turn["changes"]["files"][0]["path"] == "app.py"
    assert result["transcript"][turn["at"]]["content"] == "make it 2"
    assert result["transcript"][turn["end"]]["content"] == "make it 3"


async def test_the_session_model_is_the_one_it_last_ran_on_and_a_resume_says_when_settings_differ(
    client: ShiroClient, fake: FakeOpenAI
) -> None:
    use_model(client, "qwen-coder")
    fake.script.append(Step(Text("hi")))
    await client.call("shiro/chat", {"text": "hello"})
    assert (await client.call("shiro/session/current"))["model"] == "qwen-coder"

    use_model(client, "gpt-5")
    result = await resumed(client)
    assert result["session"]["model"] == "qwen-coder"
    assert "qwen-coder" in result["modelNote"] and "gpt-5" in result["modelNote"]
    (listed,) = (await client.call("shiro/session/list", {}))["sessions"]
    assert listed["model"] == "qwen-coder"

    fake.script.append(Step(Text("again")))
    await client.call("shiro/chat", {"text": "next"})
    assert fake.bodies()[-1]["model"] == "gpt-5"
    assert (await client.call("shiro/session/current"))["model"] == "gpt-5"
    again = await resumed(client)
    assert again["modelNote"] is None


async def test_a_branch_keeps_the_turns_and_events_before_its_cut(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    allowed, denied, *_ = await four_turns(client, fake, workspace)
    source = await resumed(client)
    cut = source["turns"][1]["end"] - 1  # the last message of the denied turn
    branch = await client.call("shiro/session/branch", {"atMessage": cut})
    result = await client.call("shiro/session/resume", {"id": branch["id"]})
    assert len(result["transcript"]) == cut + 1
    assert [t["taskId"] for t in result["turns"]] == [allowed["taskId"], denied["taskId"]]
    assert {e["taskId"] for e in result["events"]} == {allowed["taskId"], denied["taskId"]}
