"""A shutdown while a turn streams: the turn is cancelled, answered, and saved; the shutdown never hangs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from chat_helpers import eventually
from fakes.fake_openai import FakeOpenAI, Step, Text, WaitForRelease
from lsp_client import start_server

pytest_plugins = ["fakes.fixtures"]


async def test_a_shutdown_mid_stream_cancels_the_turn_and_saves_its_partial_answer(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    client = await start_server(
        workspace, home=str(home), apiKey="sk-test", baseUrl=fake.base_url, api="chat", maxRetries=0
    )
    gate = fake.gate("hold")  # the model never finishes this answer on its own
    fake.script += [Step(Text("partial answer"), WaitForRelease(gate), Text(" never sent"))]
    try:
        session = await client.call("shiro/session/current")
        chat = client.protocol.send_request("shiro/chat", {"text": "a long one"})
        await eventually(lambda: any(e["type"] == "text" for e in client.events()))
        await asyncio.wait_for(client.shutdown_async(None), 15)
        result = await asyncio.wait_for(asyncio.wrap_future(chat), 5)  # answered before it exits
        # Saved by the shutdown itself, after the turn ended (before `exit` saves once more):
        at_shutdown = json.loads((home / "sessions" / f"{session['id']}.json").read_text())
        client.exit(None)
        await asyncio.wait_for(client.stop(), 15)
    finally:
        gate.release()
    assert result["stopReason"] == "cancelled"
    assert [e["type"] for e in client.events(result["taskId"])][-1] == "done"
    assert at_shutdown["messages"][0] == {"role": "user", "content": "a long one"}
    assert "partial answer" in json.dumps(at_shutdown["messages"][1:])
    saved = json.loads((home / "sessions" / f"{session['id']}.json").read_text())
    assert saved["messages"] == at_shutdown["messages"]
