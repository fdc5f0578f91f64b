"""bash with real subprocesses: streaming, exit codes, timeout, interrupt, cancellation of a process tree."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import tracemalloc
from pathlib import Path

import pytest

from shiro_lsp.errors import ToolError
from shiro_lsp.tools import INTERRUPTED, MAX_OUTPUT, ToolContext, ToolRegistry
from shiro_lsp.tools.shell import STREAM_LIMIT, exit_status
from tool_helpers import RunTool


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in a process group, read from /proc."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state != "Z":
            members.append(int(entry.name))
    return members


async def wait_for_pgid(chunks: list[str]) -> int:
    for _ in range(500):
        found = re.search(r"pgid=(\d+)", "".join(chunks))
        if found:
            return int(found.group(1))
        await asyncio.sleep(0.01)
    raise AssertionError("the command never printed its pgid")


async def wait_for_members(pgid: int, count: int) -> list[int]:
    """The group once it has ``count`` live members (the shell starts its children after the echo)."""
    for _ in range(1000):
        members = group_members(pgid)
        if len(members) >= count:
            return members
        await asyncio.sleep(0.01)
    return group_members(pgid)


async def wait_until_gone(pgid: int) -> list[int]:
    for _ in range(200):
        if not group_members(pgid):
            return []
        await asyncio.sleep(0.01)
    return group_members(pgid)


async def test_output_exit_code_and_streaming(run: RunTool, chunks: list[str], workspace: Path) -> None:
    result = await run("bash", command="echo out; echo err >&2; pwd; exit 3")
    root = os.path.realpath(workspace)
    assert result == f"exit: 3\n\nstdout:\nout\n{root}\n\nstderr:\nerr"
    streamed = "".join(chunks)
    assert "out\n" in streamed and "err\n" in streamed


async def test_successful_command_without_output(run: RunTool) -> None:
    assert await run("bash", command="true") == "exit: 0"


async def test_timeout_kills_the_whole_group(run: RunTool, chunks: list[str]) -> None:
    result = await run("bash", command="echo pgid=$$; sleep 1000 & sleep 1000", timeout=1000)
    assert "(timed out after 1000 ms; the command and its child processes were killed)" in result
    assert result.startswith("exit: -9")
    pgid = await wait_for_pgid(chunks)
    assert await wait_until_gone(pgid) == []


async def test_cancellation_kills_the_child_tree_and_reraises(run: RunTool, chunks: list[str]) -> None:
    task = asyncio.create_task(run("bash", command="echo pgid=$$; sleep 1000 & sleep 1000; "))
    pgid = await wait_for_pgid(chunks)
    assert len(await wait_for_members(pgid, 3)) >= 3  # the shell and both sleeps
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_until_gone(pgid) == []


async def test_cancellation_while_the_process_starts_kills_it_and_reraises(
    run: RunTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turn is cancelled after the fork but before asyncio has connected the pipes (a loaded
    machine): the shell has already started a background child that holds the pipes."""
    pid_file = workspace / "pgid"
    loop = asyncio.get_running_loop()
    connect = loop.connect_read_pipe
    task: asyncio.Task[str] | None = None

    async def connect_once_the_child_runs(*args: object, **kwargs: object) -> object:
        while not (pid_file.exists() and pid_file.read_text().endswith("\n")):
            await asyncio.sleep(0.01)
        assert task is not None
        task.cancel()
        return await connect(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(loop, "connect_read_pipe", connect_once_the_child_runs)
    task = asyncio.create_task(run("bash", command="sleep 1000 & echo $$ > pgid; wait"))
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(task), 30)
    assert await wait_until_gone(int(pid_file.read_text())) == []


async def test_interrupt_fails_the_call_with_partial_output(
    registry: ToolRegistry, ctx: ToolContext, chunks: list[str]
) -> None:
    task = asyncio.create_task(
        registry.run("bash", {"command": "echo pgid=$$; echo partial; sleep 1000 & sleep 1000"}, ctx)
    )
    pgid = await wait_for_pgid(chunks)
    for _ in range(500):  # interrupted once the output it must keep was streamed (a loaded machine lags)
        if "partial" in "".join(chunks):
            break
        await asyncio.sleep(0.01)
    ctx.interrupt.set()
    with pytest.raises(ToolError) as caught:
        await task
    message = caught.value.message
    assert message.startswith(INTERRUPTED + "\n")
    assert "partial" in message
    assert await wait_until_gone(pgid) == []


async def test_fifty_megabytes_of_output_stay_bounded(run: RunTool, chunks: list[str]) -> None:
    tracemalloc.start()
    try:
        result = await run("bash", command="yes | head -c 50000000")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.startswith("exit: 0")
    assert re.search(r"\.\.\. \[truncated \d+ chars\]", result)
    assert len(result) <= MAX_OUTPUT + 100
    assert peak < 10_000_000
    streamed = sum(len(c) for c in chunks)
    assert streamed <= STREAM_LIMIT + 200
    assert "live output stopped" in chunks[-1]


async def test_tail_of_long_output_is_kept(run: RunTool) -> None:
    result = await run("bash", command="seq 1 200000; echo THE-END")
    assert result.rstrip().endswith("THE-END")
    assert "stdout:\n1\n2\n3\n" in result


async def test_background_process_holding_the_pipe_does_not_hang(run: RunTool) -> None:
    result = await run("bash", command="sleep 30 & echo bg=$!")
    bg = int(re.search(r"bg=(\d+)", result).group(1))  # type: ignore[union-attr]
    with contextlib.suppress(ProcessLookupError):
        os.kill(bg, signal.SIGKILL)
    await asyncio.sleep(0.2)  # let the loop see the pipes close before it shuts down
    assert result.startswith("exit: 0")
    assert "background processes still hold the output open" in result


@pytest.mark.parametrize(
    ("command", "status"),
    [("true", "0"), ("exit 3", "3"), ("echo exit: 7", "0")],  # the report's own line, not the output's
)
async def test_a_bash_report_gives_its_exit_status(run: RunTool, command: str, status: str) -> None:
    assert exit_status(await run("bash", command=command)) == status
