"""Recall hit counts are written lazily: never lost on a clean exit, at most the last second on SIGKILL."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

from chat_helpers import eventually
from lsp_client import ShiroClient, start_server
from shiro_lsp.state.paths import project_key


def stored_hits(home: Path, workspace: Path) -> dict[str, int]:
    path = home / "memory" / f"{project_key(str(workspace))}.json"
    return {e["text"]: e["hits"] for e in json.loads(path.read_text())}


async def start(workspace: Path, home: Path) -> ShiroClient:
    return await start_server(workspace, home=str(home))


async def test_hits_recalled_just_before_a_clean_exit_are_all_on_disk(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    client = await start(workspace, home)
    await client.call("shiro/memory/remember", {"kind": "fact", "text": "the parser is hand written"})
    for _ in range(5):
        reply = await client.call("shiro/memory/recall", {"query": "parser"})
    assert reply["entries"][0]["hits"] == 5  # the answer counts every recall at once
    await client.shutdown_session()
    await client.stop()
    assert stored_hits(home, workspace) == {"the parser is hand written": 5}


async def test_hits_reach_the_disk_without_any_exit_so_sigkill_loses_at_most_the_last_second(
    tmp_path: Path,
) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    client = await start(workspace, home)
    await client.call("shiro/memory/remember", {"kind": "fact", "text": "tests run with pytest"})
    await client.call("shiro/memory/recall", {"query": "pytest"})
    await eventually(lambda: stored_hits(home, workspace)["tests run with pytest"] == 1)
    process: Any = client._server  # the server's asyncio subprocess
    process.send_signal(signal.SIGKILL)
    await process.wait()
    assert stored_hits(home, workspace) == {"tests run with pytest": 1}
    listing_client = await start(workspace, home)
    try:
        listing = await listing_client.call("shiro/memory/list")
    finally:
        await listing_client.shutdown_session()
        await listing_client.stop()
    assert listing["text"] == "(fact) tests run with pytest  [recalled 1x]"
