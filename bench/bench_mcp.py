"""MCP tool calls through Shiro vs the same calls made directly with the SDK's client (issue 13).

Through Shiro: one model step asks for CALLS echo calls on a stdio MCP server (user scope, allowed
by a ``mcp__*`` rule); the time from the first ``tool-call`` event to the last ``tool-result``
event, as the editor sees them. Directly: ``mcp.Client.call_tool`` on the same server, same calls.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import Result
from bench.lsp import start, stop

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall

SERVER = Path(__file__).resolve().parents[1] / "tests" / "fakes" / "mcp_servers.py"
CALLS = 20
ROUNDS = 5


async def direct() -> float:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "stdio"])
    async with Client(params, mode="legacy") as client:
        await client.call_tool("echo", {"text": "warm"})
        samples = []
        for _ in range(ROUNDS):
            began = time.perf_counter()
            for i in range(CALLS):
                await client.call_tool("echo", {"text": f"n{i}"})
            samples.append(time.perf_counter() - began)
    return statistics.median(samples)


async def through_shiro(fake: FakeOpenAI, root: Path) -> float:
    state = root / "state"
    state.mkdir(parents=True, exist_ok=True)
    entry = {"command": sys.executable, "args": [str(SERVER), "stdio"]}
    (state / "mcp.json").write_text(json.dumps({"mcpServers": {"kit": entry}}))
    options = {
        "home": str(state),
        "baseUrl": fake.base_url,
        "apiKey": "sk-bench",
        "model": "gpt-5",
        "api": "chat",
        "permissions": {"mcp__*": "allow"},
    }
    client, _ = await start(["-m", "shiro_lsp"], root, options)
    stamps: dict[str, list[float]] = {"tool-call": [], "tool-result": []}

    @client.feature("shiro/event")
    def on_event(params: Any) -> None:
        kind = params["event"]["type"]
        if kind in stamps:
            stamps[kind].append(time.perf_counter())

    for method in ("shiro/context/changed", "shiro/session/changed", "shiro/todos/changed"):
        client.feature(method)(lambda params: None)
    samples = []
    try:
        for round in range(ROUNDS + 1):
            calls = [
                ToolCall("mcp__kit__echo", {"text": f"n{i}"}, call_id=f"c{round}_{i}") for i in range(CALLS)
            ]
            fake.script += [Step(*calls), Step(Text("ok"))]
            for values in stamps.values():
                values.clear()
            await client.protocol.send_request_async("shiro/chat", {"text": f"round {round}"})
            assert len(stamps["tool-result"]) == CALLS, stamps
            if round:  # the first round starts the server
                samples.append(stamps["tool-result"][-1] - stamps["tool-call"][0])
    finally:
        await stop(client)
    return statistics.median(samples)


async def _run() -> list[Result]:
    with FakeOpenAI() as fake, tempfile.TemporaryDirectory() as tmp:
        ours = await through_shiro(fake, Path(tmp))
        raw = await direct()
    ratio = ours / raw
    return [
        Result(f"{CALLS} MCP tool calls through Shiro vs the SDK client", ratio, "x", "<= 1.3x", ratio <= 1.3)
    ]


def run() -> list[Result]:
    return asyncio.run(_run())
