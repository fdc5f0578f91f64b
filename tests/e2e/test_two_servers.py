"""Two VS Code windows on one project run two servers: neither may lose the other's memories."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from lsp_client import SERVER_COMMAND, ShiroClient, initialize, make_client
from shiro_lsp.state.paths import project_key

PER_SERVER = 150  # 2 x 150 fills the store to its 300-entry cap exactly


async def start(workspace: Path, home: Path) -> ShiroClient:
    client = make_client()
    await client.start_io(*SERVER_COMMAND)
    await initialize(client, workspace, home=str(home))
    return client


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
