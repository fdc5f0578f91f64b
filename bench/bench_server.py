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
ROOT = Path(__file__).resolve().parents[1]
BARE = [str(Path(__file__).with_name("bare_server.py"))]
SHIRO = ["-m", "shiro_lsp"]


def compile_bytecode() -> None:
    """Both servers start from bytecode, as an installed one does: pip compiles a package when it
    installs it (the baseline's pygls and lsprotocol), but an editable checkout is compiled at import,
    and never cached with PYTHONDONTWRITEBYTECODE set, which would time the compiler at every start."""
    import compileall

    compileall.compile_dir(str(ROOT / "shiro_lsp"), quiet=1)


async def startup_ratio(root: Path) -> Result:
    compile_bytecode()
    ours, bare = [], []
    for _ in range(ROUNDS):  # alternate so machine noise hits both alike
        for args, samples in ((SHIRO, ours), (BARE, bare)):
            client, seconds = await start(args, root, {"home": str(root / "state")})
            samples.append(seconds)
            await stop(client)
    ratio = statistics.median(ours) / statistics.median(bare)
    return Result("start to initialize reply vs bare pygls server", ratio, "x", "<= 1.5x", ratio <= 1.5)


def floor_items(entries: int = 300) -> list[dict[str, object]]:
    """The floor under a memory write: one atomic, fsynced rewrite of a 300-entry store."""
    return [
        {"id": f"{i:032d}", "kind": "fact", "text": f"note {i} x", "createdAt": "2026", "hits": 0}
        for i in range(entries)
    ]


def durable_write_ms(path: Path, items: list[dict[str, object]]) -> float:
    from shiro_lsp.state.atomic import write_json_atomic

    began = time.perf_counter()
    write_json_atomic(path, items)
    return (time.perf_counter() - began) * 1000


async def memory_round_trips(root: Path) -> list[Result]:
    client, _ = await start(SHIRO, root, {"home": str(root / "state")})
    send = client.protocol.send_request_async
    try:
        for i in range(300):
            await send("shiro/memory/remember", {"kind": "fact", "text": f"note {i} x"})
        remember, recall, todos, floors = [], [], [], []
        items = floor_items()
        for i in range(100):
            for samples, method, params in (
                (remember, "shiro/memory/remember", {"kind": "fact", "text": f"new note {i} x"}),
                (recall, "shiro/memory/recall", {"query": f"note {i}"}),
                (todos, "shiro/todos", {}),
            ):
                began = time.perf_counter()
                await send(method, params)
                samples.append((time.perf_counter() - began) * 1000)
            # The floor in between, so the disk (shared with other work on the machine) is the same.
            floors.append(durable_write_ms(root / "floor.json", items))
    finally:
        await stop(client)
    floor = statistics.median(floors)
    no_io = statistics.median(todos)
    remember_ratio = statistics.median(remember) / (floor + no_io)
    recall_ratio = statistics.median(recall) / no_io
    return [
        Result(
            "remember (new entry, durable write) p50 vs one fsynced rewrite + one no-I/O round trip",
            remember_ratio,
            "x",
            "<= 1.2x",
            remember_ratio <= 1.2,
        ),
        Result(
            "recall (hits written lazily) p50 vs a request with no I/O (shiro/todos)",
            recall_ratio,
            "x",
            "<= 2x",
            recall_ratio <= 2,
        ),
        Result("  same-run floor: one fsynced atomic rewrite of the store", floor, "ms", "info", True),
        Result("  same-run floor: a request with no I/O (shiro/todos), p50", no_io, "ms", "info", True),
    ]


async def _run() -> list[Result]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        return [await startup_ratio(root), *await memory_round_trips(root)]


def run() -> list[Result]:
    return asyncio.run(_run())
