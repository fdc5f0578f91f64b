"""Nothing blocks the event loop: a chat turn with tools, a /memory compaction and the export of a
20 MB session run in a server whose asyncio debug mode logs any callback holding the loop > 50 ms."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from lsp_client import SERVER_COMMAND, ShiroClient, initialize, make_client
from shiro_lsp.__main__ import SLOW_CALLBACK_ENV
from shiro_lsp.state.paths import project_key

pytest_plugins = ["fakes.fixtures"]

SESSION_ID = "0193bb00-0000-7000-8000-00000000beef"


def big_session(home: Path, workspace: Path, megabytes: int = 20) -> None:
    chunk = "x = compute(value)  # é\n" * 400  # ~10 KB of tool output per message pair
    messages: list[dict[str, Any]] = [{"role": "user", "content": "a long session"}]
    i = 0
    while len(chunk) * (i + 1) < megabytes * 1_000_000:
        call = f"call_{i}"
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool-call",
                        "toolCallId": call,
                        "toolName": "read_file",
                        "input": {"path": "a.py"},
                    }
                ],
            }
        )
        messages.append(
            {
                "role": "tool",
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": call,
                        "toolName": "read_file",
                        "output": {"type": "text", "value": chunk},
                    }
                ],
            }
        )
        i += 1
    record = {
        "id": SESSION_ID,
        "createdAt": "2026-01-01T00:00:00.000Z",
        "updatedAt": "2026-01-01T00:00:00.000Z",
        "cwd": str(workspace),
        "provider": "openai",
        "model": "gpt-5-mini",
        "title": "a long session",
        "inputTokens": 1,
        "outputTokens": 1,
        "notebook": {"todos": []},
        "messages": messages,
    }
    path = home / "sessions" / f"{SESSION_ID}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))


def seed_memory(home: Path, workspace: Path) -> None:
    entries = [
        {
            "id": f"id{i:03d}",
            "kind": "fact",
            "text": f"note number {i}",
            "createdAt": "2026-01-01T00:00:00.000Z",
            "hits": 0,
        }
        for i in range(80)
    ]
    path = home / "memory" / f"{project_key(str(workspace))}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entries))


@pytest.fixture
async def watched(tmp_path: Path, fake: FakeOpenAI) -> AsyncIterator[tuple[ShiroClient, Path, Path]]:
    workspace, home = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    big_session(home, workspace)
    seed_memory(home, workspace)
    client = make_client()
    await client.start_io(*SERVER_COMMAND, env={**os.environ, SLOW_CALLBACK_ENV: "50", "SHIRO_DIAG": os.environ.get("SHIRO_DIAG_SERVER", ""), "PYTHONPATH": os.environ.get("PYTHONPATH", "")})
    await initialize(
        client, workspace, home=str(home), apiKey="sk-test", baseUrl=fake.base_url, api="chat", maxRetries=0
    )
    try:
        yield client, workspace, home
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_no_callback_holds_the_loop_over_50_ms(
    watched: tuple[ShiroClient, Path, Path], fake: FakeOpenAI, capfd: pytest.CaptureFixture[str]
) -> None:
    client, workspace, _ = watched
    await client.call("shiro/session/current")
    capfd.readouterr()  # start-up (the first structuring of LSP types) is not part of a turn
    (workspace / "notes.txt").write_text("the answer is 42\n" * 200)
    client.decisions = ["once"]
    fake.script += [
        Step(ToolCall("read_file", {"path": "notes.txt"}, call_id="call_r")),
        Step(ToolCall("write_file", {"path": "out.txt", "content": "written"}, call_id="call_w")),
        Step(Text("done")),
        Step(Text("[fact] notes 0 to 79 say the same thing")),
    ]
    turn = await client.call("shiro/chat", {"text": "read it, then write out.txt"})
    assert turn["stopReason"] == "done" and (workspace / "out.txt").read_text() == "written"
    compacted = await client.call("shiro/memory/compact")
    assert compacted["after"] < compacted["before"]
    exported = await client.call("shiro/session/export", {"id": SESSION_ID, "format": "json"})
    assert len(exported["content"]) > 20_000_000
    markdown = await client.call("shiro/session/export", {"id": SESSION_ID, "format": "markdown"})
    assert "a long session" in markdown["content"]
    await client.call("shiro/session/list")
    slow = [line for line in capfd.readouterr().err.splitlines() if "loopwatch" in line]
    assert slow == [], "callbacks held the event loop:\n" + "\n".join(slow)
