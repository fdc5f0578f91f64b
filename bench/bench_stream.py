"""A 5,000-delta answer through the server vs the raw openai SDK on the same fake stream (issue 4).

Each round starts a server and warms it up with one chat; then PAIRS times: a chat through the
server, and the raw SDK sending the very request the server just sent (after one warm-up call of
its own per round). The pairs alternate, so load from other work on the machine hits both sides alike, and the
added latency is the median of the pairs' differences (a pair is measured within a second).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import string
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import Result
from bench.lsp import start, stop

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fakes.fake_openai import FakeOpenAI, Step, Text

DELTAS = 5_000
ANSWER = "".join(random.Random(4).choices(string.ascii_lowercase + " ", k=DELTAS))
"""One character per delta, never one piece repeated: a run of one character is a model's loop, which
Shiro cuts (adapt/reflections/loop_cut.py)."""
ROUNDS = 3  # servers started
PAIRS = 4  # measured chats (each paired with a raw SDK call) per server


def script(fake: FakeOpenAI) -> None:
    fake.script.append(Step(Text(ANSWER, chunks=DELTAS)))


async def raw_sdk(fake: FakeOpenAI, body: dict[str, Any]) -> tuple[float, float]:
    """The baseline: the SDK sending the very request the server sent (same prompt, tools, history)."""
    import openai

    client = openai.AsyncOpenAI(base_url=fake.base_url, api_key="sk-bench", max_retries=0)
    script(fake)
    began = time.perf_counter()
    first = 0.0
    stream = await client.chat.completions.create(**body)
    received = 0
    async for chunk in stream:
        for choice in chunk.choices:
            if choice.delta.content:
                first = first or time.perf_counter() - began
                received += len(choice.delta.content)
    await client.close()
    assert received == DELTAS, f"the raw SDK received {received} of {DELTAS} characters"
    return time.perf_counter() - began, first


@dataclass
class Chat:
    """What the editor saw of one chat: its text events and when the first arrived."""

    began: float = 0.0
    first: float | None = None
    text: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)

    def seen(self, event: dict[str, Any]) -> None:
        self.events.append(event["type"])
        if event["type"] == "text":
            if self.first is None:
                self.first = time.perf_counter() - self.began
            self.text.append(event["text"])

    def check(self, result: Any) -> None:
        received = len("".join(self.text))
        if received != DELTAS or self.first is None:
            kinds = sorted(set(self.events))
            raise AssertionError(
                f"the editor received {received} of {DELTAS} characters (events: {kinds}; reply: {result})"
            )


async def through_server(fake: FakeOpenAI, root: Path, pairs: int) -> list[tuple[float, float, float, float]]:
    """``pairs`` of (server total, server first delta, raw total, raw first delta), in seconds."""
    options = {"home": str(root / "state"), "baseUrl": fake.base_url, "apiKey": "sk-bench", "model": "gpt-5"}
    client, _ = await start(["-m", "shiro_lsp"], root, options)
    chat = Chat()

    @client.feature("shiro/event")
    def on_event(params: Any) -> None:
        chat.seen(params["event"])

    for method in ("shiro/context/changed", "shiro/session/changed", "shiro/todos/changed"):
        client.feature(method)(lambda params: None)
    measured: list[tuple[float, float, float, float]] = []
    try:
        script(fake)
        chat.check(await client.protocol.send_request_async("shiro/chat", {"text": "warm up"}))
        for turn in range(pairs):
            chat = Chat()
            script(fake)
            chat.began = time.perf_counter()
            result = await client.protocol.send_request_async("shiro/chat", {"text": f"go {turn}"})
            elapsed = time.perf_counter() - chat.began
            chat.check(result)
            assert chat.first is not None
            body = fake.requests[-1]["body"]
            if turn == 0:
                await raw_sdk(fake, body)  # warm: the import and the SDK's first use
            raw_total, raw_first = await raw_sdk(fake, body)
            measured.append((elapsed, chat.first, raw_total, raw_first))
    finally:
        await stop(client)
    return measured


async def _run() -> list[Result]:
    pairs: list[tuple[float, float, float, float]] = []
    with FakeOpenAI() as fake, tempfile.TemporaryDirectory() as tmp:
        for _ in range(ROUNDS):
            pairs += await through_server(fake, Path(tmp), PAIRS)
    ours = [p[0] for p in pairs]
    raw = [p[2] for p in pairs]
    ratio = statistics.median(ours) / statistics.median(raw)
    added_each = [(p[1] - p[3]) * 1000 for p in pairs]
    added = statistics.median(added_each)
    print(
        f"  first delta (ms), server/raw: {', '.join(f'{p[1] * 1000:.0f}/{p[3] * 1000:.0f}' for p in pairs)}",
        flush=True,
    )
    print(
        f"  medians: server {statistics.median(p[1] for p in pairs) * 1000:.1f} ms, "
        f"raw {statistics.median(p[3] for p in pairs) * 1000:.1f} ms; "
        f"added p25 {statistics.quantiles(added_each, n=4)[0]:.1f}, p75 {statistics.quantiles(added_each, n=4)[2]:.1f}",
        flush=True,
    )
    return [
        Result("5,000-delta answer through the server vs raw SDK", ratio, "x", "<= 1.3x", ratio <= 1.3),
        Result("added latency to the first delta", added, "ms", "<= 10 ms", added <= 10),
    ]


def run() -> list[Result]:
    return asyncio.run(_run())
