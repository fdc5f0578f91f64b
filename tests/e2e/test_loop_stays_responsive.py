"""Nothing blocks the event loop: a chat turn with tools, a /memory compaction, the export of a
20 MB session, and a turn on that session once resumed, in a server that times every callback.

``SHIRO_SLOW_CALLBACK_MS=50`` turns on the server's loop watch (``shiro_lsp/loopwatch.py``, with
asyncio's debug mode). For each callback over 50 ms it logs the wall time, the loop thread's own CPU
time and the code it ran; it also logs every blocking file operation made on the loop thread.

What fails the test, and why it holds on a busy 2-core CI machine:

- a callback whose *own CPU time* is over 50 ms. That is the work the callback does on the loop
  (pruning a long history, copying a transcript, importing a library), and neither other processes
  nor the server's worker threads can add to it: a callback preempted for a core, or waiting for the
  GIL while a thread encodes 20 MB, has a long wall time but little CPU time. Wall times are printed
  with a failure, and are not themselves a failure: under load they measure the machine.
- any blocking file operation on the loop thread (a state write, a lock, a directory listing, a
  database connection, a sleep). Whether it happens on the loop is deterministic, so this is
  checked whatever the machine's load, and it catches what a CPU clock cannot see (fsync, a lock
  held by another server).

Start-up (the first parse of LSP types, before the first request) is not part of the scenario.
The watch itself is tested in tests/unit/test_loopwatch.py (it does report CPU work, waits and a
state write on the loop), so a silent watch cannot pass this test.
"""

from __future__ import annotations

import json
import os
import re
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
BUDGET_MS = 50
SLOW = re.compile(r"slow callback: (\d+) ms wall, (\d+) ms cpu")


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
    await client.start_io(*SERVER_COMMAND, env={**os.environ, SLOW_CALLBACK_ENV: str(BUDGET_MS)})
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
    resumed = await client.call("shiro/session/resume", {"id": SESSION_ID})
    assert len(resumed["transcript"]) > 2_000
    fake.script += [Step(Text("a summary of the long session")), Step(Text("continued"))] * 2
    turn = await client.call("shiro/chat", {"text": "go on"})
    assert turn["stopReason"] == "done"
    lines = [line for line in capfd.readouterr().err.splitlines() if "shiro_lsp.loopwatch" in line]
    busy = [line for line in lines if (m := SLOW.search(line)) and int(m.group(2)) > BUDGET_MS]
    blocking = [line for line in lines if "blocking I/O on the loop" in line]
    report = "\n".join(lines)
    print(report)  # slow wall times, for the record (-s)
    assert busy == [], f"callbacks did over {BUDGET_MS} ms of work on the event loop:\n{report}"
    assert blocking == [], f"blocking file operations ran on the event loop:\n{report}"
