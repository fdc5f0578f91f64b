"""Two VS Code windows on one project run two servers: neither may lose the other's memories."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from lsp_client import ShiroClient, start_server
from shiro_lsp.state.paths import project_key

PER_SERVER = 150  # 2 x 150 fills the store to its 300-entry cap exactly


async def start(workspace: Path, home: Path) -> ShiroClient:
    return await start_server(workspace, home=str(home))


async def remember_many(client: ShiroClient, tag: str) -> None:
    # Several requests in flight at once per server, as a busy editor would send them.
    for batch in range(0, PER_SERVER, 10):
        await asyncio.gather(
            *(
                client.call("shiro/memory/remember", {"kind": "fact", "text": f"{tag} note {i}"})
                for i in range(batch, batch + 10)
            )
        )


async def test_two_servers_writing_memory_to_one_project_lose_nothing(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    first, second = await start(workspace, home), await start(workspace, home)
    try:
        await asyncio.gather(remember_many(first, "left"), remember_many(second, "right"))
        listing = await first.call("shiro/memory/list")
    finally:
        for client in (first, second):
            await client.shutdown_session()
            await client.stop()
    stored = json.loads((home / "memory" / f"{project_key(str(workspace))}.json").read_text())
    texts = {entry["text"] for entry in stored}
    assert len(stored) == len(texts) == 2 * PER_SERVER
    assert {f"left note {i}" for i in range(PER_SERVER)} <= texts
    assert {f"right note {i}" for i in range(PER_SERVER)} <= texts
    assert len(listing["entries"]) == 2 * PER_SERVER


async def recalled(client: ShiroClient, query: str) -> list[str]:
    return [
        entry["text"] for entry in (await client.call("shiro/memory/recall", {"query": query}))["entries"]
    ]


async def test_a_recall_sees_what_the_other_window_wrote_a_moment_before(tmp_path: Path) -> None:
    """Recalls may be answered from memory (no file read): never with what another server changed."""
    workspace, home = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    first, second = await start(workspace, home), await start(workspace, home)
    try:
        await first.call("shiro/memory/remember", {"kind": "fact", "text": "shared note zero"})
        for _ in range(3):  # the first window has read the file and recalled from it
            assert await recalled(first, "shared") == ["shared note zero"]
        for i in range(1, 6):
            await second.call("shiro/memory/remember", {"kind": "fact", "text": f"shared note {i}"})
            assert (await recalled(first, "shared"))[0] == f"shared note {i}"
            await first.call("shiro/memory/remember", {"kind": "fact", "text": f"own note {i}"})
            assert (await recalled(first, "note"))[0] == f"own note {i}"
        await second.call("shiro/memory/forget", {"text": "shared note 3"})
        assert "shared note 3" not in await recalled(first, "shared")
        store = home / "memory" / f"{project_key(str(workspace))}.json"
        entries = json.loads(store.read_text())
        entries[0]["text"] = "edited by hand"
        edited = store.with_name("edited.json")
        edited.write_text(json.dumps(entries))
        edited.replace(store)  # as an editor saving the file does (a reader never sees half of it)
        assert await recalled(first, "hand") == ["edited by hand"]
        assert await recalled(second, "hand") == ["edited by hand"]
    finally:
        for client in (first, second):
            await client.shutdown_session()
            await client.stop()


SHARED = "0193bb11-5555-7000-8000-00000000cafe"


def seed_session(home: Path, workspace: Path) -> Path:
    record = {
        "id": SHARED,
        "createdAt": "2026-01-01T00:00:00.000Z",
        "updatedAt": "2026-01-01T00:00:00.000Z",
        "cwd": str(workspace),
        "provider": "openai",
        "model": "gpt-5-mini",
        "title": "shared",
        "inputTokens": 0,
        "outputTokens": 0,
        "costUsd": 0,
        "notebook": {"todos": []},
        "messages": [
            {"role": "user", "content": "first question"},
            {"role": "assistant", "content": [{"type": "text", "text": "first answer"}]},
        ],
    }
    path = home / "sessions" / f"{SHARED}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    return path


async def test_a_session_live_in_one_window_is_refused_in_another_and_nothing_is_lost(tmp_path: Path) -> None:
    from pygls.exceptions import JsonRpcException

    workspace, home = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    path = seed_session(home, workspace)
    first, second = await start(workspace, home), await start(workspace, home)
    try:
        await first.call("shiro/session/resume", {"id": SHARED})
        await first.call("shiro/todos/update", {"todos": [{"content": "left's task", "status": "pending"}]})
        try:
            await second.call("shiro/session/resume", {"id": SHARED})
            raise AssertionError("the second window resumed a session live in the first")
        except JsonRpcException as error:
            assert error.code == -32002 and "open in another Shiro window" in str(error)
        current = await second.call("shiro/session/current")
        assert current["id"] != SHARED  # the second window kept its own session
        # The first window moves on: the session is free, and the second may take it.
        await first.call("shiro/session/new")
        resumed = await second.call("shiro/session/resume", {"id": SHARED})
        assert [m["role"] for m in resumed["transcript"]] == ["user", "assistant"]
        assert "first answer" in path.read_text()
    finally:
        for client in (first, second):
            await client.shutdown_session()
            await client.stop()
