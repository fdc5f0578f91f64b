"""Deletes, moves and checkpoint restores against a racing attacker (see test_jail_race.py).

A thread flips ``ws/dir`` between the real directory and a symlink to ``outside/dir`` while the
tools delete and move files in it and a checkpoint restore writes and removes them. The final
unlink, rename and write go through the jail's opened directory, so whatever the interleaving
nothing outside changes, appears or disappears.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

from test_jail_race import OUTSIDE_TEXT, TRIES, Swapper, outside, outside_state

from shiro_lsp.checkpoints.review import Checkpoints
from shiro_lsp.errors import ShiroError, ToolError
from shiro_lsp.state.checkpoints import CheckpointStore, FileState
from tool_helpers import RunTool

__all__ = ["outside"]  # the fixture

HOLD_S = 0.0003
"""Each phase (real directory, symlink) lasts this long, so a check and a use straddle a swap often."""


class SlowSwapper(Swapper):
    """Holds each state a moment: a path resolved in one phase and used in the next is common."""

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                _hold()
                os.rename(self.link, self.parked)
                os.symlink(self.outside, self.link)
                _hold()
                os.unlink(self.link)
                os.rename(self.parked, self.link)
                self.swaps += 1
            except OSError:
                self._restore()


def tries(swapper: Swapper, count: int) -> Iterator[int]:
    """``count`` tries, and more (at most 20 times as many) while the swapper thread has swapped too
    little: on a busy machine a starved swapper gets more tries, not a failed test."""
    i = 0
    while i < count or (swapper.swaps <= TRIES // 10 and i < 20 * count):
        yield i
        i += 1


def _hold() -> None:
    until = time.perf_counter() + HOLD_S
    while time.perf_counter() < until:
        pass


async def test_delete_and_move_under_a_swapped_directory_never_touch_outside(
    run: RunTool, workspace: Path, outside: Path
) -> None:
    (workspace / "dir").mkdir()
    (workspace / "dir" / "target.txt").write_text(OUTSIDE_TEXT)
    before = outside_state(outside)
    done = refused = 0
    with SlowSwapper(workspace, outside) as swapper:
        for i in tries(swapper, TRIES // 2):
            for call in (
                run("write_file", path="dir/target.txt", content=OUTSIDE_TEXT),
                run("move_file", **{"from": "dir/target.txt", "to": "dir/moved.txt"}),
                run("move_file", **{"from": "dir/moved.txt", "to": "dir/target.txt"}),
                run("delete_file", path="dir/target.txt" if i % 2 else "dir/moved.txt"),
            ):
                try:
                    await call
                    done += 1
                except ToolError:
                    refused += 1
    print(f"swaps={swapper.swaps} done={done} refused={refused}")
    assert outside_state(outside) == before  # nothing outside was deleted, renamed or created
    assert swapper.swaps > TRIES // 10 and done > 0


async def test_a_restore_under_a_swapped_directory_never_touches_outside(
    workspace: Path, outside: Path, tmp_path: Path
) -> None:
    (workspace / "dir").mkdir()
    (workspace / "dir" / "target.txt").write_text("inside\n")
    state_root = tmp_path / "state"
    service = Checkpoints(CheckpointStore(state_root / "checkpoints"), workspace, "p", state_root)
    data = b"restored bytes\n"
    state = FileState(service.store.blobs.put(data), 0o600, len(data))
    before = outside_state(outside)
    done = refused = 0
    with SlowSwapper(workspace, outside) as swapper:
        for i in tries(swapper, TRIES):
            try:
                service.files.put_back("dir/target.txt", None if i % 3 == 2 else state)
                done += 1
            except (ShiroError, OSError):
                refused += 1
    print(f"swaps={swapper.swaps} done={done} refused={refused}")
    assert outside_state(outside) == before
    assert swapper.swaps > TRIES // 10 and done > 0
