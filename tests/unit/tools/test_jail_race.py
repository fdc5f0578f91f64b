"""The jail against a racing attacker: a thread swaps a workspace directory for a symlink to outside.

The real file tools run through the registry hundreds of times while the swapper flips
``ws/dir`` between the real directory and a symlink to ``outside/dir``. Whatever the interleaving,
no read may return the outside bytes and no write may change or create anything outside.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from shiro_lsp.errors import ToolError
from tool_helpers import RunTool

TRIES = 400
OUTSIDE_TEXT = "OUTSIDE-BYTES\n"


class Swapper:
    def __init__(self, workspace: Path, outside: Path) -> None:
        self.link = workspace / "dir"
        self.parked = workspace / "dir_real"
        self.outside = outside
        self.swaps = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                os.rename(self.link, self.parked)
                os.symlink(self.outside, self.link)
                os.unlink(self.link)
                os.rename(self.parked, self.link)
                self.swaps += 1
            except OSError:
                self._restore()

    def _restore(self) -> None:
        for _ in range(100):  # a write may re-create ws/dir meanwhile (inside: drop it) and race us again
            try:
                if self.link.is_symlink():
                    os.unlink(self.link)
                if not self.parked.exists():
                    return
                if self.link.exists():
                    shutil.rmtree(self.link, ignore_errors=True)
                os.rename(self.parked, self.link)
                return
            except OSError:
                continue

    def __enter__(self) -> Swapper:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()
        self._restore()


@pytest.fixture
def outside(tmp_path: Path) -> Iterator[Path]:
    target = tmp_path / "outside" / "dir"
    target.mkdir(parents=True)
    (target / "target.txt").write_text(OUTSIDE_TEXT)
    yield target


def outside_state(outside: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in outside.parent.rglob("*") if p.is_file()}


async def test_a_swapped_directory_never_carries_a_read_or_write_outside(
    run: RunTool, workspace: Path, outside: Path
) -> None:
    (workspace / "dir").mkdir()
    (workspace / "dir" / "target.txt").write_text("inside\n")
    before = outside_state(outside)
    reads = writes = refused = 0
    tries = 0
    with Swapper(workspace, outside) as swapper:
        # a starved swapper thread (a busy machine) gets more tries, not a failed test
        while tries < TRIES or (swapper.swaps <= TRIES // 10 and tries < 20 * TRIES):
            i = tries
            tries += 1
            try:
                if i % 2:
                    output = await run("read_file", path="dir/target.txt")
                    assert "OUTSIDE-BYTES" not in output
                    reads += 1
                else:
                    await run("write_file", path="dir/target.txt", content=f"written {i}\n")
                    writes += 1
            except ToolError as error:
                assert "OUTSIDE-BYTES" not in error.message
                refused += 1
    print(f"swaps={swapper.swaps} reads={reads} writes={writes} refused={refused}")
    assert outside_state(outside) == before  # zero writes landed outside, nothing was created there
    assert reads + writes + refused == tries and swapper.swaps > TRIES // 10
    assert reads > 0 and writes > 0  # the tools kept working between swaps


async def test_edit_races_never_touch_outside(run: RunTool, workspace: Path, outside: Path) -> None:
    (workspace / "dir").mkdir()
    (workspace / "dir" / "target.txt").write_text(OUTSIDE_TEXT)  # same text: an edit would match
    before = outside_state(outside)
    with Swapper(workspace, outside):
        for i in range(TRIES // 2):
            try:
                await run("edit_file", path="dir/target.txt", oldString="OUTSIDE", newString=f"E{i}")
                await run("edit_file", path="dir/target.txt", oldString=f"E{i}", newString="OUTSIDE")
            except ToolError:
                pass
    assert outside_state(outside) == before


async def test_a_symlink_swapped_in_at_the_last_component_is_refused(
    run: RunTool, workspace: Path, outside: Path
) -> None:
    (workspace / "file.txt").symlink_to(outside / "target.txt")
    with pytest.raises(ToolError, match=r"Path escapes workspace: file\.txt"):
        await run("read_file", path="file.txt")
    with pytest.raises(ToolError, match=r"Path escapes workspace: file\.txt"):
        await run("write_file", path="file.txt", content="x")
    assert outside_state(outside) == {"target.txt": OUTSIDE_TEXT}


async def test_a_symlink_inside_the_workspace_still_works(run: RunTool, workspace: Path) -> None:
    (workspace / "real").mkdir()
    (workspace / "real" / "a.txt").write_text("alpha\n")
    (workspace / "alias").symlink_to(workspace / "real")
    assert "alpha" in await run("read_file", path="alias/a.txt")
    await run("write_file", path="alias/b.txt", content="beta\n")
    assert (workspace / "real" / "b.txt").read_text() == "beta\n"


async def test_hard_linked_files_are_refused_with_a_clear_message(
    run: RunTool, workspace: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "elsewhere.txt"
    secret.write_text("elsewhere\n")
    os.link(secret, workspace / "link.txt")
    for call in (
        run("read_file", path="link.txt"),
        run("write_file", path="link.txt", content="x"),
        run("edit_file", path="link.txt", oldString="elsewhere", newString="x"),
    ):
        with pytest.raises(ToolError, match=r"link.txt is a hard-linked file \(2 links to the same data\)"):
            await call
    assert secret.read_text() == "elsewhere\n"


async def test_writes_keep_the_mode_and_leave_no_temp_files(run: RunTool, workspace: Path) -> None:
    script = workspace / "run.sh"
    script.write_text("echo 1\n")
    script.chmod(0o755)
    await run("write_file", path="run.sh", content="echo 2\n")
    await run("edit_file", path="run.sh", oldString="2", newString="3")
    await run("write_file", path="new/deep/file.txt", content="made\n")
    assert script.read_text() == "echo 3\n" and script.stat().st_mode & 0o777 == 0o755
    assert (workspace / "new" / "deep" / "file.txt").read_text() == "made\n"
    assert sorted(p.name for p in workspace.rglob("*")) == ["deep", "file.txt", "new", "run.sh"]


async def test_a_fifo_is_refused_without_blocking(run: RunTool, workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        await run("read_file", path="pipe")
