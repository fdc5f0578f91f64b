"""Server start to `initialize` reply (vs a bare pygls server) and memory round trips (issue 2)."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from bench.common import Result
from bench.lsp import start, stop

ROUNDS = 7
BARE = [str(Path(__file__).with_name("bare_server.py"))]
SHIRO = ["-m", "shiro_lsp"]


async def startup_ratio(root: Path) -> Result:
    ours, bare = [], []
    for _ in range(ROUNDS):  # alternate so machine noise hits both alike
        for args, samples in ((SHIRO, ours), (BARE, bare)):
            client, seconds = await start(args, root, {"home": str(root / "state")})
            samples.append(seconds)
            await stop(client)
    ratio = statistics.median(ours) / statistics.median(bare)
    return Result("start to initialize reply vs bare pygls server", ratio, "x", "<= 1.5x", ratio <= 1.5)


async def memory_round_trips(root: Path) -> list[Result]:
    client, _ = await start(SHIRO, root, {"home": str(root / "state")})
    try:
        for i in range(300):
            await client.protocol.send_request_async(
                "shiro/memory/remember", {"kind": "fact", "text": f"note {i} x"}
            )
        timings = []
        for i in range(200):
            began = time.perf_counter()
            await client.protocol.send_request_async(
                "shiro/memory/remember", {"kind": "fact", "text": f"note {i % 300} x"}
            )
            await client.protocol.send_request_async("shiro/memory/recall", {"query": f"note {i}"})
            timings.append((time.perf_counter() - began) * 1000)
    finally:
        await stop(client)
    p50 = statistics.median(timings)
    return [Result("remember+recall round trip, 300-entry store, p50", p50, "ms", "<= 5 ms", p50 <= 5)]


async def _run() -> list[Result]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        return [await startup_ratio(root), *await memory_round_trips(root)]


def run() -> list[Result]:
    return asyncio.run(_run())
