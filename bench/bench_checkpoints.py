"""Checkpoints (issue 11): what recording a turn's changes adds to an edit and to a bash command.

- A checkpointed ``edit_file`` (the first change of a turn: plan, record the before-bytes and the
  manifest, run, record the after-state) against the same edit with no checkpoint.
- A bash call's checkpoint on a 10,000-file git workspace (before and after the command) against
  one ``git status`` of it; and the same for a plain folder (no git), where the workspace is walked.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from bench.common import Result
from shiro_lsp.checkpoints.review import Checkpoints
from shiro_lsp.checkpoints.scan import WorkspaceScanner
from shiro_lsp.state.checkpoints import CheckpointStore
from shiro_lsp.tools import ToolContext, builtin_registry

ROUNDS = 41
EDIT_PAIRS = 301
FILES = 10_000
SMALL_FILES = 1_000
CHANGED = 10
"""Files the bash command of the checkpoint bench rewrites."""


async def _median(fn: Callable[[], Awaitable[object]], rounds: int) -> float:
    await fn()
    samples = []
    for _ in range(rounds):
        began = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - began)
    return statistics.median(samples)


async def edit_ratio(root: Path) -> Result:
    workspace = root / "edit-ws"
    workspace.mkdir()
    target = workspace / "module.py"
    target.write_text("".join(f"def f{i}():\n    return {i}\n\n" for i in range(200)))
    service = Checkpoints(CheckpointStore(root / "edit-state" / "checkpoints"), workspace, "bench", root)
    registry = builtin_registry()
    ctx = ToolContext(workspace=workspace)
    value = [7]

    def next_input() -> dict[str, str]:
        """Every edit leaves new bytes, as real edits do (no checkpoint blob is already there)."""
        value[0] += 1
        old, new = f"f7():\n    return {value[0] - 1}\n", f"f7():\n    return {value[0]}\n"
        return {"path": "module.py", "oldString": old, "newString": new}

    async def plain() -> None:
        await registry.run("edit_file", next_input(), ctx)

    turns = [0]
    watched = ToolContext(workspace=workspace)  # one context each side, built once (not timed)

    async def checkpointed() -> None:
        turns[0] += 1
        changes = service.turn("bench-session", f"task-{turns[0]}", "edit", 0)
        edit = next_input()
        watch = await changes.before("edit_file", edit)
        watched.recorder = changes.recorder(watch)  # as the engine does
        await registry.run("edit_file", edit, watched)
        await changes.after(watch)

    ratio = await _paired(plain, checkpointed, EDIT_PAIRS)
    return Result("checkpointed edit_file vs the same edit without", ratio, "x", "<= 1.5x", ratio <= 1.5)


async def _paired(
    base: Callable[[], Awaitable[object]], ours: Callable[[], Awaitable[object]], pairs: int
) -> float:
    """Median of ours / median of base, the two timed alternately so machine noise hits both alike."""
    await base()
    await ours()
    base_samples, our_samples = [], []
    for _ in range(pairs):
        for fn, samples in ((base, base_samples), (ours, our_samples)):
            began = time.perf_counter()
            await fn()
            samples.append(time.perf_counter() - began)
    return statistics.median(our_samples) / statistics.median(base_samples)


def _workspace(path: Path, git: bool, files: int = FILES) -> None:
    path.mkdir()
    for d in range(files // 100):
        folder = path / f"pkg{d:03}"
        folder.mkdir()
        for f in range(100):
            (folder / f"m{f:03}.py").write_text(f"VALUE = {d * 100 + f}\n" * 20)
    (path / ".gitignore").write_text("*.log\nbuild/\n")
    if git:
        env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b"}
        env["GIT_COMMITTER_EMAIL"] = "b@b"
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
            subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)


def _bash_checkpoint(root: Path, workspace: Path, name: str) -> Callable[[], Awaitable[None]]:
    """One bash call's checkpoint: the snapshot before, a command that rewrites CHANGED files, and
    the comparison after. Only the snapshot and the comparison are timed."""
    service = Checkpoints(CheckpointStore(root / name / "checkpoints"), workspace, "bench", root / name)
    scanner: WorkspaceScanner = service.files.scanner
    round_ = [0]
    spent = [0.0]

    def command() -> None:
        round_[0] += 1
        for i in range(CHANGED):
            (workspace / f"pkg{i:03}" / "m000.py").write_text(f"VALUE = {round_[0]}\n")

    async def checkpoint() -> None:
        began = time.perf_counter()
        snapshot = await asyncio.to_thread(scanner.snapshot)
        middle = time.perf_counter()
        await asyncio.to_thread(command)
        resumed = time.perf_counter()
        await asyncio.to_thread(scanner.changes, snapshot)
        spent[0] = (middle - began) + (time.perf_counter() - resumed)

    async def timed() -> None:
        await checkpoint()

    timed.spent = spent  # type: ignore[attr-defined]
    return timed


async def _median_spent(fn: Callable[[], Awaitable[None]], rounds: int) -> float:
    """Like _median, but of the time the checkpoint itself reports (the command is not counted)."""
    await fn()
    samples = []
    for _ in range(rounds):
        await fn()
        samples.append(fn.spent[0])  # type: ignore[attr-defined]
    return statistics.median(samples)


async def bash_ratios(root: Path) -> list[Result]:
    results = []
    costs: dict[str, float] = {}
    for git in (True, False):
        workspace = root / ("git-ws" if git else "plain-ws")
        _workspace(workspace, git)
        if not git:  # the baseline is git status of the same tree, so it needs a repository next to it
            _workspace(root / "plain-baseline", True)
        baseline_dir = workspace if git else root / "plain-baseline"
        checkpoint = _bash_checkpoint(root, workspace, f"state-{git}")

        async def status(where: Path = baseline_dir) -> None:
            await asyncio.to_thread(subprocess.run, ["git", "status"], cwd=where, capture_output=True)

        await checkpoint()  # the first snapshot of a workspace reads every file once
        ours, base = [], []
        for _ in range(3):
            base.append(await _median(status, 5))
            ours.append(await _median_spent(checkpoint, 5))
        ratio = statistics.median(ours) / statistics.median(base)
        costs[str(git)] = statistics.median(ours)
        label = "git repo" if git else "plain folder"
        results.append(
            Result(
                f"bash checkpoint, {FILES} files, {CHANGED} changed ({label}) vs git status",
                ratio,
                "x",
                "<= 2x",
                ratio <= 2,
            )
        )
    small = root / "plain-small"
    _workspace(small, False, SMALL_FILES)
    small_checkpoint = _bash_checkpoint(root, small, "state-small")
    big_checkpoint = _bash_checkpoint(root, root / "plain-ws", "state-False")
    await small_checkpoint()
    smalls, bigs = [], []
    for _ in range(3):
        smalls.append(await _median_spent(small_checkpoint, 5))
        bigs.append(await _median_spent(big_checkpoint, 5))
    growth = statistics.median(bigs) / statistics.median(smalls)
    results.append(
        Result(
            f"bash checkpoint, {FILES} vs {SMALL_FILES} files, {CHANGED} changed (plain folder)",
            growth,
            "x",
            "<= 2x",
            growth <= 2,
        )
    )
    return results


async def _all() -> list[Result]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        return [await edit_ratio(root), *await bash_ratios(root)]


def run() -> list[Result]:
    return asyncio.run(_all())
