"""The loop watch reports what holds the event loop, and tells own CPU work from waiting."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shiro_lsp.loopwatch import LoopWatch
from shiro_lsp.state.atomic import write_text_atomic
from shiro_lsp.state.reservation import reserve_workspace, workspace_reservation

SLOW = re.compile(r"slow callback: (\d+) ms wall, (\d+) ms cpu")


@pytest.fixture
def watch() -> Iterator[LoopWatch]:
    watch = LoopWatch(0.05)
    watch.install()
    try:
        yield watch
    finally:
        watch.uninstall()


def burn_cpu(seconds: float) -> None:
    start = time.thread_time()
    while time.thread_time() - start < seconds:
        pass


def slow_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[int, int]]:
    found = [SLOW.search(r.getMessage()) for r in caplog.records]
    return [(int(m.group(1)), int(m.group(2))) for m in found if m]


async def test_a_callback_doing_cpu_work_is_reported_with_its_cpu_time(
    watch: LoopWatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "shiro_lsp.loopwatch")
    asyncio.get_running_loop().call_soon(burn_cpu, 0.12)
    await asyncio.sleep(0.01)
    [(wall, cpu)] = slow_lines(caplog)
    assert cpu >= 110 and wall >= cpu


async def test_a_callback_that_waits_is_reported_with_little_cpu_time(
    watch: LoopWatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "shiro_lsp.loopwatch")
    asyncio.get_running_loop().call_soon(threading.Event().wait, 0.12)
    await asyncio.sleep(0.01)
    [(wall, cpu)] = slow_lines(caplog)
    assert wall >= 110 and cpu < 50


async def test_fast_callbacks_are_not_reported(watch: LoopWatch, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "shiro_lsp.loopwatch")
    for _ in range(100):
        await asyncio.sleep(0)
    assert slow_lines(caplog) == []


async def test_a_state_write_on_the_loop_is_reported_with_the_code_that_made_it(
    watch: LoopWatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.WARNING, "shiro_lsp.loopwatch")
    asyncio.get_running_loop().call_soon(write_text_atomic, tmp_path / "state.json", "{}")
    await asyncio.sleep(0.01)
    await asyncio.to_thread(write_text_atomic, tmp_path / "other.json", "{}")  # off the loop: fine
    blocking = [r.getMessage() for r in caplog.records if "blocking I/O on the loop" in r.getMessage()]
    assert any("shiro_lsp/state/atomic.py" in line and "write_bytes_atomic" in line for line in blocking)
    assert not any("other.json" in line for line in blocking)


def blocking_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "blocking I/O on the loop" in r.getMessage()]


def take_and_give_back(root: Path, workspace: Path) -> None:
    with reserve_workspace(root, str(workspace)):
        pass


async def test_taking_a_workspace_lock_on_the_loop_is_reported_and_giving_it_back_is_not(
    watch: LoopWatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.WARNING, "shiro_lsp.loopwatch")
    async with workspace_reservation(tmp_path / "state", str(tmp_path)):  # takes it in a thread
        await asyncio.sleep(0)
    assert blocking_lines(caplog) == []
    asyncio.get_running_loop().call_soon(take_and_give_back, tmp_path / "state", tmp_path)
    await asyncio.sleep(0.01)
    assert any("shiro_lsp/state/reservation.py" in line for line in blocking_lines(caplog))


async def test_the_quick_reservation_on_the_loop_is_not_reported(
    watch: LoopWatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """Once kept, the lock is taken on the loop with a flock that never waits (LOCK_NB)."""
    caplog.set_level(logging.WARNING, "shiro_lsp.loopwatch")
    for _ in range(3):
        async with workspace_reservation(tmp_path / "state", str(tmp_path)):
            await asyncio.sleep(0)
    assert blocking_lines(caplog) == []


async def test_after_uninstall_nothing_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "shiro_lsp.loopwatch")
    watch = LoopWatch(0.05)
    watch.install()
    watch.uninstall()
    asyncio.get_running_loop().call_soon(burn_cpu, 0.08)
    await asyncio.sleep(0.01)
    assert slow_lines(caplog) == []
