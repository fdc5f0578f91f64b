"""A session's checkpoint journal compacted at a turn's end (the real server over stdio): undo and
restore still work on the compacted journal, and after a server restart and a resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_checkpoints_lsp import init_options, permissions, start, stop, turn

from fakes.fake_openai import FakeOpenAI, ToolCall
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]
__all__ = ["init_options", "permissions"]  # fixtures

BIG = "".join(f"row {i:06} of a generated table that is large\n" for i in range(5000))  # ~230 KB


async def two_turns_then_undo(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    first = await turn(
        client,
        fake,
        "edit both",
        ToolCall("edit_file", {"path": "big.txt", "oldString": "row 000010 ", "newString": "ROW 10 "}),
        ToolCall("edit_file", {"path": "big.txt", "oldString": "row 004000 ", "newString": "ROW 4000 "}),
        ToolCall("edit_file", {"path": "small.txt", "oldString": "one", "newString": "two"}),
    )
    session = first["sessionId"]
    records = journal_records(home, session)  # the big file's bytes went inline, then superseded
    assert len(records) == 1 and "blobs" not in records[0], [sorted(r) for r in records]
    second = await turn(
        client,
        fake,
        "again",
        ToolCall("edit_file", {"path": "small.txt", "oldString": "two", "newString": "three"}),
    )
    assert (workspace / "small.txt").read_text() == "three\n"

    undone = await client.call("shiro/changes/undo", {"path": "big.txt", "taskId": first["taskId"]})
    assert undone["undone"] is True and not undone.get("conflict")
    assert (workspace / "big.txt").read_text() == BIG
    await client.call("shiro/session/save")
    return session, first, second


def journal_records(home: Path, session_id: str) -> list[dict[str, object]]:
    path = home / "checkpoints" / session_id / "journal.jsonl"
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


async def test_undo_and_restore_work_on_a_compacted_journal_and_after_a_restart(
    fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    (workspace / "big.txt").write_text(BIG)
    (workspace / "small.txt").write_text("one\n")
    client = await start(workspace, home, fake)
    try:
        session, first, second = await two_turns_then_undo(client, fake, workspace, home)
    finally:
        await stop(client)
    restarted = await start(workspace, home, fake)
    try:
        await restarted.call("shiro/session/resume", {"id": session})
        listed = (await restarted.call("shiro/checkpoint/list", {}))["checkpoints"]
        assert [c["taskId"] for c in listed] == [second["taskId"], first["taskId"]]
        diff = await restarted.call("shiro/changes/diff", {"path": "small.txt", "taskId": first["taskId"]})
        assert (diff["before"], diff["after"]) == ("one\n", "three\n")
        big = await restarted.call("shiro/changes/diff", {"path": "big.txt", "taskId": first["taskId"]})
        assert big["before"] == BIG  # the bytes that were inline in a superseded record
        restored = await restarted.call("shiro/checkpoint/restore", {"id": listed[1]["id"], "mode": "code"})
        assert restored["restored"] == ["small.txt"] and restored["conflicts"] == []
        assert (workspace / "small.txt").read_text() == "one\n" and (workspace / "big.txt").read_text() == BIG
        redone = await restarted.call("shiro/checkpoint/restore", {"id": restored["redoId"], "mode": "code"})
        assert redone["restored"] == ["small.txt"]
        assert (workspace / "small.txt").read_text() == "three\n"
    finally:
        await stop(restarted)
