"""A 5,000-delta answer through the server vs the raw openai SDK on the same fake stream (issue 4)."""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import Result
from bench.lsp import start, stop

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fakes.fake_openai import FakeOpenAI, Step, Text

DELTAS = 5_000
ROUNDS = 5


def script(fake: FakeOpenAI) -> None:
    fake.script.append(Step(Text("x" * DELTAS, chunks=DELTAS)))


async def raw_sdk(fake: FakeOpenAI) -> tuple[float, float]:
    import openai

    client = openai.AsyncOpenAI(base_url=fake.base_url, api_key="sk-bench", max_retries=0)
    script(fake)
    began = time.perf_counter()
    first = 0.0
    stream = await client.chat.completions.create(
        model="gpt-5", messages=[{"role": "user", "content": "go"}], stream=True
    )
    received = 0
    async for chunk in stream:
        for choice in chunk.choices:
            if choice.delta.content:
                first = first or time.perf_counter() - began
                received += len(choice.delta.content)
    await client.close()
    assert received == DELTAS
    return time.perf_counter() - began, first


async def through_server(fake: FakeOpenAI, root: Path) -> tuple[float, float]:
    options = {"home": str(root / "state"), "baseUrl": fake.base_url, "apiKey": "sk-bench", "model": "gpt-5"}
    client, _ = await start(["-m", "shiro_lsp"], root, options)
    text: list[str] = []
    first: list[float] = []
    began = 0.0

    @client.feature("shiro/event")
    def on_event(params: Any) -> None:
        if params["event"]["type"] == "text":
            if not first:
                first.append(time.perf_counter() - began)
            text.append(params["event"]["text"])

    for method in ("shiro/context/changed", "shiro/session/changed", "shiro/todos/changed"):
        client.feature(method)(lambda params: None)
    try:
        script(fake)
        await client.protocol.send_request_async("shiro/chat", {"text": "warm up"})
        text.clear()
        first.clear()
        script(fake)
        began = time.perf_counter()
        await client.protocol.send_request_async("shiro/chat", {"text": "go"})
        elapsed = time.perf_counter() - began
    finally:
        await stop(client)
    assert len("".join(text)) == DELTAS
    return elapsed, first[0]


async def _run() -> list[Result]:
    ours, raw, first_ours, first_raw = [], [], [], []
    with FakeOpenAI() as fake, tempfile.TemporaryDirectory() as tmp:
        await raw_sdk(fake)  # warm up the SDK import and the connection pool
        for _ in range(ROUNDS):
            total, first = await raw_sdk(fake)
            raw.append(total)
            first_raw.append(first)
            total, first = await through_server(fake, Path(tmp))
            ours.append(total)
            first_ours.append(first)
    ratio = statistics.median(ours) / statistics.median(raw)
    added = (statistics.median(first_ours) - statistics.median(first_raw)) * 1000
    return [
        Result("5,000-delta answer through the server vs raw SDK", ratio, "x", "<= 1.3x", ratio <= 1.3),
        Result("added latency to the first delta", added, "ms", "<= 10 ms", added <= 10),
    ]


def run() -> list[Result]:
    return asyncio.run(_run())
