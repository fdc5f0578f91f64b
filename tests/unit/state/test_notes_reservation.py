"""The workspace reservation: one writer at a time across threads, tasks and processes."""

from __future__ import annotations

import asyncio
import contextvars
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from shiro_lsp.errors import Conflict
from shiro_lsp.state.notes import Notes
from shiro_lsp.state.reservation import reserve_workspace, workspace_reservation

HOLDER = """
import sys
from pathlib import Path
from shiro_lsp.state.reservation import reserve_workspace
with reserve_workspace(Path(sys.argv[1]), sys.argv[2]):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_a_note_write_waits_for_another_process_holding_the_workspace(tmp_path: Path) -> None:
    workspace, root = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root), str(workspace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(Conflict, match="busy"), reserve_workspace(root, str(workspace), timeout=0.2):
            pass
        notes = Notes(str(workspace), root)
        done = threading.Event()
        writer = threading.Thread(target=lambda: (notes.append("project", "after the task"), done.set()))
        writer.start()
        assert not done.wait(0.3)  # still waiting for the task's file change to finish
        assert not (workspace / ".shiro").exists()
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        writer.join(timeout=30)
        assert done.is_set() and notes.read().project == "after the task"
    finally:
        holder.kill()
        holder.wait()


def test_the_reservation_is_reentrant_in_one_flow_but_not_across_threads(tmp_path: Path) -> None:
    root, workspace = tmp_path / "state", str(tmp_path)
    with reserve_workspace(root, workspace), reserve_workspace(root, workspace, timeout=0.1):
        outcome: list[BaseException] = []

        def other_thread() -> None:
            try:
                with reserve_workspace(root, workspace, timeout=0.1):
                    pass
            except Conflict as error:
                outcome.append(error)

        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        assert len(outcome) == 1
    with reserve_workspace(root, workspace, timeout=0.1):
        pass


async def test_the_async_form_covers_code_it_runs_in_threads(tmp_path: Path) -> None:
    """A turn holds the reservation around a tool call; a note write inside that call must not deadlock."""
    root, workspace = tmp_path / "state", tmp_path / "ws"
    workspace.mkdir()
    notes = Notes(str(workspace), root)
    async with workspace_reservation(root, str(workspace)):
        view = await asyncio.to_thread(notes.append, "project", "written inside the turn")
        assert view.project == "written inside the turn"

        async def another_request() -> None:
            async with workspace_reservation(root, str(workspace), timeout=0.1):
                pass

        with pytest.raises(Conflict):  # a request handler of its own does not inherit the reservation
            await asyncio.create_task(another_request(), context=contextvars.Context())
        assert await asyncio.to_thread(lambda: _try_from_fresh_thread(root, str(workspace))) is False
    async with workspace_reservation(root, str(workspace), timeout=1):
        pass


def _try_from_fresh_thread(root: Path, workspace: str) -> bool:
    """A thread that did not inherit the reservation (another request) has to wait."""
    result: list[bool] = []

    def attempt() -> None:
        try:
            with reserve_workspace(root, workspace, timeout=0.1):
                result.append(True)
        except Conflict:
            result.append(False)

    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join()
    return result[0]


async def test_a_cancelled_wait_does_not_leak_the_reservation(tmp_path: Path) -> None:
    root, workspace = tmp_path / "state", str(tmp_path)

    async def hold(release: asyncio.Event) -> None:
        async with workspace_reservation(root, workspace):
            await release.wait()

    release = asyncio.Event()
    holder = asyncio.create_task(hold(release))
    await asyncio.sleep(0.1)

    async def wait_forever() -> None:
        async with workspace_reservation(root, workspace, timeout=30):
            pass

    waiter = asyncio.create_task(wait_forever())
    await asyncio.sleep(0.1)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    release.set()
    await holder
    async with workspace_reservation(root, workspace, timeout=10):
        pass


HOLD_ASYNC_TWICE = """
import asyncio, sys
from pathlib import Path
from shiro_lsp.state.reservation import workspace_reservation

async def main():
    root, workspace = Path(sys.argv[1]), sys.argv[2]
    async with workspace_reservation(root, workspace):  # the first time: in a thread
        pass
    async with workspace_reservation(root, workspace):  # then: the kept descriptor, on the loop
        print("held", flush=True)
        await asyncio.to_thread(sys.stdin.readline)

asyncio.run(main())
"""


def _holder(script: str, root: Path, workspace: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(root), str(workspace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def _let_go(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None
    holder.stdin.write("\n")
    holder.stdin.flush()
    holder.wait(timeout=30)


async def test_the_quick_reservation_on_a_kept_descriptor_still_excludes_other_processes(
    tmp_path: Path,
) -> None:
    root, workspace = tmp_path / "state", tmp_path / "ws"
    workspace.mkdir()
    async with workspace_reservation(root, str(workspace)):
        pass  # from now on this process takes it without a thread when it is free
    holder = _holder(HOLDER, root, workspace)
    try:
        with pytest.raises(Conflict, match="busy"):
            async with workspace_reservation(root, str(workspace), timeout=0.2):
                pass
    finally:
        _let_go(holder)
    async with workspace_reservation(root, str(workspace), timeout=5):
        # and a process that has to wait while this one holds it quickly
        result = subprocess.run(
            [sys.executable, "-c", TRY_ONCE, str(root), str(workspace)], capture_output=True, text=True
        )
        assert result.stdout.strip() == "busy"
    holder = _holder(HOLD_ASYNC_TWICE, root, workspace)
    try:
        with pytest.raises(Conflict, match="busy"), reserve_workspace(root, str(workspace), timeout=0.2):
            pass
    finally:
        _let_go(holder)


TRY_ONCE = """
import sys
from pathlib import Path
from shiro_lsp.errors import Conflict
from shiro_lsp.state.reservation import reserve_workspace
try:
    with reserve_workspace(Path(sys.argv[1]), sys.argv[2], timeout=0.2):
        print("got it")
except Conflict:
    print("busy")
"""


async def test_two_flows_of_one_process_do_not_share_the_quick_reservation(tmp_path: Path) -> None:
    root, workspace = tmp_path / "state", str(tmp_path)
    async with workspace_reservation(root, workspace):
        pass
    release = asyncio.Event()
    held = asyncio.Event()

    async def hold() -> None:
        async with workspace_reservation(root, workspace):
            held.set()
            await release.wait()

    async def another_request() -> None:
        async with workspace_reservation(root, workspace, timeout=0.2):
            pass

    holder = asyncio.create_task(hold(), context=contextvars.Context())
    await held.wait()
    with pytest.raises(Conflict):
        await asyncio.create_task(another_request(), context=contextvars.Context())
    assert await asyncio.to_thread(lambda: _try_from_fresh_thread(root, workspace)) is False
    release.set()
    await holder
    await asyncio.create_task(another_request(), context=contextvars.Context())


async def test_a_lock_file_removed_while_kept_open_is_not_trusted(tmp_path: Path) -> None:
    """A descriptor on a removed file locks nothing: another process locks the new file."""
    root, workspace = tmp_path / "state", tmp_path / "ws"
    workspace.mkdir()
    async with workspace_reservation(root, str(workspace)):
        pass
    for lock in (root / "locks").iterdir():
        lock.unlink()
    holder = _holder(HOLDER, root, workspace)
    try:
        with pytest.raises(Conflict, match="busy"):
            async with workspace_reservation(root, str(workspace), timeout=0.2):
                pass
    finally:
        _let_go(holder)
    async with workspace_reservation(root, str(workspace), timeout=5):
        result = subprocess.run(
            [sys.executable, "-c", TRY_ONCE, str(root), str(workspace)], capture_output=True, text=True
        )
        assert result.stdout.strip() == "busy"
