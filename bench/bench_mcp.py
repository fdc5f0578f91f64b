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
ROUNDS = 7


async def _direct_round(client: Any) -> float:
    began = time.perf_counter()
    for i in range(CALLS):
        await client.call_tool("echo", {"text": f"n{i}"})
    return time.perf_counter() - began


async def _shiro_round(client: Any, fake: FakeOpenAI, stamps: dict[str, list[float]], round: int) -> float:
    calls = [ToolCall("mcp__kit__echo", {"text": f"n{i}"}, call_id=f"c{round}_{i}") for i in range(CALLS)]
    fake.script += [Step(*calls), Step(Text("ok"))]
    for values in stamps.values():
        values.clear()
    await client.protocol.send_request_async("shiro/chat", {"text": f"round {round}"})
    assert len(stamps["tool-result"]) == CALLS, stamps
    return stamps["tool-result"][-1] - stamps["tool-call"][0]


async def compare(fake: FakeOpenAI, root: Path) -> tuple[float, float]:
    """Median seconds for CALLS calls through Shiro and directly, the rounds alternating so that
    machine noise (other work on the machine) hits both alike."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

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
    ours, raw = [], []
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "stdio"])
    try:
        async with Client(params, mode="legacy") as direct:
            await direct.call_tool("echo", {"text": "warm"})
            await _shiro_round(client, fake, stamps, 0)  # the first round starts Shiro's server
            for round in range(1, ROUNDS + 1):
                ours.append(await _shiro_round(client, fake, stamps, round))
                raw.append(await _direct_round(direct))
    finally:
        await stop(client)
    print(
        "  rounds (ms): "
        + ", ".join(f"{o * 1000:.0f}/{r * 1000:.0f}" for o, r in zip(ours, raw, strict=True))
    )
    return statistics.median(ours), statistics.median(raw)


async def _run() -> list[Result]:
    with FakeOpenAI() as fake, tempfile.TemporaryDirectory() as tmp:
        ours, raw = await compare(fake, Path(tmp))
    ratio = ours / raw
    print(f"  through Shiro {ours * 1000:.0f} ms, directly {raw * 1000:.0f} ms (p50 of {ROUNDS})", flush=True)
    return [
        Result(f"{CALLS} MCP tool calls through Shiro vs the SDK client", ratio, "x", "<= 1.3x", ratio <= 1.3)
    ]


def run() -> list[Result]:
    return asyncio.run(_run())
