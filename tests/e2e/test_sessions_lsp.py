"""`shiro/session/*` through a real client over stdio, on session files seeded before the server starts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from fakes.fixtures import options
from lsp_client import ShiroClient, start_server

OTHER_WORKSPACE = "/somewhere/else"
TARGET = "0193bb11-5555-7000-8000-00000000beef"
ELSEWHERE = "0193cc22-6666-7000-8000-000000000000"
CORRUPT = "0193dd33-7777-7000-8000-000000000000"
WRONG_SCHEMA = "0193ee44-8888-7000-8000-000000000000"
CORRUPT_BYTES = b'{"id": "0193dd33-7777-7000-8000-000000000000", "messages": [{"role": "us'


def plain_id(n: int) -> str:
    return f"0193aa00-0000-7000-8000-0000000000{n:02d}"


def transcript(tag: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"{tag}: why does the pagination test fail?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool-call",
                    "toolCallId": "c1",
                    "toolName": "read_file",
                    "input": {"path": "page.py"},
                },
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "toolName": "read_file",
                    "output": {"type": "text", "value": "def page(n):\n    return n - 1"},
                }
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Off by one in page()."}]},
    ]


def session_file(
    home: Path, session_id: str, cwd: str, updated: str, tag: str, todos: list[dict[str, Any]] | None = None
) -> Path:
    messages = transcript(tag)
    record = {
        "id": session_id,
        "createdAt": "2026-01-01T00:00:00.000Z",
        "updatedAt": updated,
        "cwd": cwd,
        "provider": "openai",
        "model": "gpt-5-mini",
        "title": messages[0]["content"],
        "inputTokens": 5000,
        "outputTokens": 700,
        "costUsd": 0.0026,
        "notebook": {"todos": todos or []},
        "messages": messages,
    }
    path = home / "sessions" / f"{session_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2))
    return path


TARGET_TODOS = [
    {"content": "reproduce", "status": "done"},
    {"content": "fix page()", "status": "in_progress"},
    {"content": "release", "status": "blocked", "note": "waiting for review"},
]


@pytest.fixture
def init_options(home: Path, workspace: Path) -> dict[str, object]:
    """Seed the state root before the server starts: its index has never seen these files."""
    for n in range(1, 18):
        session_file(home, plain_id(n), str(workspace), f"2026-01-{n:02d}T10:00:00.000Z", f"plain {n}")
    session_file(home, TARGET, str(workspace), "2026-02-01T10:00:00.000Z", "target", TARGET_TODOS)
    session_file(home, ELSEWHERE, OTHER_WORKSPACE, "2026-03-01T10:00:00.000Z", "elsewhere")
    (home / "sessions" / f"{CORRUPT}.json").write_bytes(CORRUPT_BYTES)
    wrong = session_file(home, WRONG_SCHEMA, str(workspace), "2026-04-01T10:00:00.000Z", "wrong")
    wrong.write_text(
        wrong.read_text().replace('"messages": [', '"messages": {"oops": [', 1).rstrip()[:-1] + "}}"
    )
    return options(home)


async def eventually(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition never became true"
        await asyncio.sleep(0.02)


async def rpc_error(client: ShiroClient, method: str, params: dict[str, Any]) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await client.call(method, params)
    return caught.value


async def test_list_is_this_workspace_newest_first_15_and_skips_corrupt_files(
    client: ShiroClient, home: Path
) -> None:
    wrong_bytes = (home / "sessions" / f"{WRONG_SCHEMA}.json").read_bytes()
    listed = (await client.call("shiro/session/list"))["sessions"]
    assert [s["id"] for s in listed] == [TARGET, *(plain_id(n) for n in range(17, 3, -1))]
    assert listed[0] == {
        "id": TARGET,
        "title": "target: why does the pagination test fail?",
        "cwd": listed[0]["cwd"],
        "createdAt": "2026-01-01T00:00:00.000Z",
        "updatedAt": "2026-02-01T10:00:00.000Z",
        "messageCount": 4,
        "model": "gpt-5-mini",
        "inputTokens": 5000,
        "outputTokens": 700,
        "costUsd": 0.0026,
    }
    everywhere = (await client.call("shiro/session/list", {"allWorkspaces": True, "limit": 100}))["sessions"]
    assert len(everywhere) == 19 and everywhere[0]["id"] == ELSEWHERE
    assert [s["id"] for s in (await client.call("shiro/session/list", {"limit": 2}))["sessions"]] == [
        TARGET,
        plain_id(17),
    ]
    await eventually(lambda: len(client.messages) >= 2)
    shown = " ".join(m.message for m in client.messages)
    assert f"{CORRUPT}.json" in shown and "not valid JSON" in shown
    assert f"{WRONG_SCHEMA}.json" in shown and '"messages" must be a list' in shown
    assert (home / "sessions" / f"{CORRUPT}.json").read_bytes() == CORRUPT_BYTES
    assert (home / "sessions" / f"{WRONG_SCHEMA}.json").read_bytes() == wrong_bytes


async def test_current_is_a_fresh_unsaved_session(client: ShiroClient, workspace: Path, home: Path) -> None:
    current = await client.call("shiro/session/current")
    assert (
        current["messageCount"] == 0 and current["title"] == "untitled" and current["cwd"] == str(workspace)
    )
    assert current["model"] == "gpt-5" and current["costUsd"] is None and current["id"][14] == "7"
    saved = await client.call("shiro/session/save")
    assert saved == {
        "id": current["id"],
        "saved": False,
        "reason": "Nothing to save: this session has no messages yet.",
    }
    assert not (home / "sessions" / f"{current['id']}.json").exists()


async def test_resume_by_prefix_restores_transcript_task_list_and_counters(client: ShiroClient) -> None:
    resumed = await client.call("shiro/session/resume", {"id": "0193bb"})
    assert resumed["session"]["id"] == TARGET
    assert resumed["transcript"] == transcript("target")
    assert [(s["inputTokens"], s["outputTokens"], s["costUsd"]) for s in [resumed["session"]]] == [
        (5000, 700, 0.0026)
    ]
    assert resumed["todos"]["todos"] == [
        {"content": "reproduce", "status": "done", "note": None},
        {"content": "fix page()", "status": "in_progress", "note": None},
        {"content": "release", "status": "blocked", "note": "waiting for review"},
    ]
    assert resumed["todos"]["progress"] == {"done": 1, "total": 3, "blocked": 1, "current": "fix page()"}
    await eventually(lambda: bool(client.notifications["shiro/todos/changed"]))
    assert client.notifications["shiro/todos/changed"][-1] == resumed["todos"]
    await eventually(lambda: bool(client.notifications["shiro/session/changed"]))
    assert client.notifications["shiro/session/changed"][-1]["id"] == TARGET
    assert (await client.call("shiro/todos")) == resumed["todos"]
    assert (await client.call("shiro/session/current"))["id"] == TARGET


async def test_resume_latest_is_the_newest_of_this_workspace(client: ShiroClient) -> None:
    resumed = await client.call("shiro/session/resume", {"latest": True})
    assert resumed["session"]["id"] == TARGET  # ELSEWHERE is newer but belongs to another workspace


@pytest.mark.parametrize(
    ("params", "code", "expected"),
    [
        ({"id": "0193aa00"}, -32602, "matches more than one session"),
        ({"id": "ffff"}, -32001, 'No session matching "ffff"'),
        ({"id": "../x"}, -32602, '"../x" is not a session id'),
        ({"id": "../../etc/passwd"}, -32602, "is not a session id"),
        ({}, -32602, "Say which session to resume"),
        ({"id": CORRUPT}, -32000, "not valid JSON"),
        ({"id": 12}, -32602, "id"),
    ],
)
async def test_resume_errors_are_clear_and_the_live_session_is_kept(
    client: ShiroClient, params: dict[str, Any], code: int, expected: str
) -> None:
    before = await client.call("shiro/session/current")
    error = await rpc_error(client, "shiro/session/resume", params)
    assert error.code == code and expected in error.message
    assert await client.call("shiro/session/current") == before


async def test_an_ambiguous_prefix_names_the_candidates(client: ShiroClient) -> None:
    error = await rpc_error(client, "shiro/session/resume", {"id": "0193aa00-0000-7000-8000-00000000001"})
    assert error.data == {"candidates": [plain_id(n) for n in range(17, 9, -1)]}
    assert all(plain_id(n) in error.message for n in range(10, 18))


async def test_the_next_save_writes_the_resumed_record_not_a_blend(
    client: ShiroClient, home: Path, workspace: Path
) -> None:
    await client.call("shiro/todos/update", {"todos": [{"content": "unrelated plan", "status": "pending"}]})
    await client.call("shiro/session/resume", {"id": TARGET})
    new_todos = [{"content": "fix page()", "status": "done"}, {"content": "release", "status": "in_progress"}]
    await client.call("shiro/todos/update", {"todos": new_todos})
    saved = await client.call("shiro/session/save")
    assert saved == {"id": TARGET, "saved": True, "reason": None}
    on_disk = json.loads((home / "sessions" / f"{TARGET}.json").read_text())
    assert on_disk["notebook"]["todos"] == new_todos
    assert on_disk["messages"] == transcript("target")
    assert (on_disk["createdAt"], on_disk["inputTokens"], on_disk["outputTokens"], on_disk["costUsd"]) == (
        "2026-01-01T00:00:00.000Z",
        5000,
        700,
        0.0026,
    )
    assert on_disk["updatedAt"] > "2026-02-01"
    await eventually(lambda: any(n["id"] == TARGET for n in client.notifications["shiro/session/changed"]))
    listed = (await client.call("shiro/session/list", {"limit": 1}))["sessions"][0]
    assert listed["id"] == TARGET and listed["updatedAt"] == on_disk["updatedAt"]


async def test_new_and_clear_start_a_new_id_and_keep_the_old_file(client: ShiroClient, home: Path) -> None:
    await client.call("shiro/session/resume", {"id": TARGET})
    before = (home / "sessions" / f"{TARGET}.json").read_bytes()
    cleared = await client.call("shiro/session/clear")
    assert cleared["previous"] == {
        "id": TARGET,
        "title": "target: why does the pagination test fail?",
        "messageCount": 4,
    }
    assert cleared["session"]["id"] != TARGET and cleared["session"]["messageCount"] == 0
    await eventually(lambda: client.notifications["shiro/todos/changed"][-1]["todos"] == [])
    assert (await client.call("shiro/todos"))["todos"] == []
    assert (
        json.loads((home / "sessions" / f"{TARGET}.json").read_bytes())["messages"]
        == json.loads(before)["messages"]
    )
    fresh = await client.call("shiro/session/new")
    assert fresh["previous"] is None and fresh["session"]["id"] not in (TARGET, cleared["session"]["id"])
    assert not (home / "sessions" / f"{cleared['session']['id']}.json").exists()
    await eventually(lambda: len(client.notifications["shiro/session/changed"]) >= 3)
    changed = [n["id"] for n in client.notifications["shiro/session/changed"]]
    assert changed[-2:] == [cleared["session"]["id"], fresh["session"]["id"]]


async def test_export_json_and_markdown(client: ShiroClient) -> None:
    exported = json.loads(
        (await client.call("shiro/session/export", {"id": "0193bb", "format": "json"}))["content"]
    )
    assert exported["id"] == TARGET and exported["messages"] == transcript("target")
    assert exported["notebook"]["todos"][2] == {
        "content": "release",
        "status": "blocked",
        "note": "waiting for review",
    }
    markdown = (await client.call("shiro/session/export", {"id": TARGET, "format": "markdown"}))["content"]
    assert markdown.startswith("# target: why does the pagination test fail?\n")
    assert "### User\n\ntarget: why does the pagination test fail?" in markdown
    assert "**Tool call** `read_file`" in markdown and "Off by one in page()." in markdown
    assert "- [!] release  (waiting for review)" in markdown
    error = await rpc_error(client, "shiro/session/export", {"id": TARGET, "format": "pdf"})
    assert error.code == -32602


async def test_branch_copies_the_history_up_to_a_message(client: ShiroClient, home: Path) -> None:
    branch = await client.call("shiro/session/branch", {"id": TARGET, "atMessage": 1})
    assert branch["id"] != TARGET and branch["messageCount"] == 2
    assert branch["title"] == "target: why does the pagination test fail?"
    copy = json.loads((home / "sessions" / f"{branch['id']}.json").read_text())
    assert copy["messages"] == transcript("target")[:2]
    assert copy["notebook"]["todos"] == [{**t} for t in TARGET_TODOS]
    listed = [s["id"] for s in (await client.call("shiro/session/list"))["sessions"]]
    assert listed[0] == branch["id"]
    original = json.loads((home / "sessions" / f"{TARGET}.json").read_text())
    assert len(original["messages"]) == 4
    error = await rpc_error(client, "shiro/session/branch", {"id": TARGET, "atMessage": 9})
    assert "past the end" in error.message
    error = await rpc_error(client, "shiro/session/branch", {})
    assert "nothing to branch" in error.message


async def test_delete_removes_file_and_listing_and_refuses_unknown_and_live(
    client: ShiroClient, home: Path
) -> None:
    assert await client.call("shiro/session/delete", {"id": plain_id(17)}) == {"deleted": True}
    assert not (home / "sessions" / f"{plain_id(17)}.json").exists()
    listed = [s["id"] for s in (await client.call("shiro/session/list", {"limit": 100}))["sessions"]]
    assert plain_id(17) not in listed and len(listed) == 17
    assert (await rpc_error(client, "shiro/session/delete", {"id": plain_id(17)})).code == -32001
    assert (await rpc_error(client, "shiro/session/delete", {"id": "../shiro.db"})).code == -32602
    assert (home / "shiro.db").exists()
    await client.call("shiro/session/resume", {"id": TARGET})
    error = await rpc_error(client, "shiro/session/delete", {"id": TARGET})
    assert "live session" in error.message
    assert (home / "sessions" / f"{TARGET}.json").exists()


async def start(workspace: Path, home: Path) -> ShiroClient:
    return await start_server(workspace, home=str(home))


async def test_shutdown_saves_what_the_debounce_had_not_written_yet(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    session_file(home, TARGET, str(workspace), "2026-02-01T10:00:00.000Z", "target", TARGET_TODOS)
    client = await start(workspace, home)
    try:
        await client.call("shiro/session/resume", {"latest": True})
        await client.call(
            "shiro/todos/update", {"todos": [{"content": "saved at shutdown", "status": "pending"}]}
        )
    finally:
        await client.shutdown_session()
        await client.stop()
    on_disk = json.loads((home / "sessions" / f"{TARGET}.json").read_text())
    assert on_disk["notebook"]["todos"] == [{"content": "saved at shutdown", "status": "pending"}]
    assert on_disk["messages"] == transcript("target")


async def test_a_sessions_path_that_is_a_file_is_a_clear_error_and_nothing_is_lost(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    home.mkdir()
    (home / "sessions").write_text("not a folder, but precious")
    client = await start(workspace, home)
    try:
        error = await rpc_error(client, "shiro/session/list", {})
        assert error.code == -32000 and "it is not a folder" in error.message and "sessions" in error.message
        error = await rpc_error(client, "shiro/session/resume", {"latest": True})
        assert "it is not a folder" in error.message
        assert (await client.call("shiro/todos"))["todos"] == []
    finally:
        await client.shutdown_session()
        await client.stop()
    assert (home / "sessions").read_text() == "not a folder, but precious"


@pytest.mark.parametrize("ending", ["exit without shutdown", "stdin closed"])
async def test_the_final_save_also_happens_on_exit_and_when_the_editor_goes_away(
    tmp_path: Path, ending: str
) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    session_file(home, TARGET, str(workspace), "2026-02-01T10:00:00.000Z", "target", TARGET_TODOS)
    client = await start(workspace, home)
    server = client._server
    assert server is not None
    await client.call("shiro/session/resume", {"latest": True})
    await client.call("shiro/todos/update", {"todos": [{"content": ending, "status": "pending"}]})
    if ending == "stdin closed":
        assert server.stdin is not None
        server.stdin.close()
    else:
        client.protocol.notify("exit", None)
    await asyncio.wait_for(server.wait(), timeout=20)
    await client.stop()
    on_disk = json.loads((home / "sessions" / f"{TARGET}.json").read_text())
    assert on_disk["notebook"]["todos"] == [{"content": ending, "status": "pending"}]
