"""Run one hook command: ``bash -c`` in the workspace, the event as JSON on stdin, bounded in time and output.

The command gets the environment a ``bash`` tool call gets (``tools/environment.py``: no provider
keys, nothing secret-shaped, the configured key nowhere), plus ``CLAUDE_PROJECT_DIR`` and
``SHIRO_PROJECT_DIR`` (the workspace). It runs in its own process group: on its timeout, or when
the turn is cancelled, the whole group is killed. Of stdout and stderr the first
:data:`OUTPUT_CAP` characters are kept (the rest is read and dropped, so the command never blocks
on a full pipe). Nothing here raises for the command's own failure: the result says what happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shiro_lsp.tools.environment import command_env

OUTPUT_CAP = 32_000
READ_CHUNK = 65_536
KILL_WAIT_S = 5.0


@dataclass(frozen=True)
class HookRun:
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: str | None = None
    """It could not be started (no bash, the folder is gone): why, in words."""


class _Capped:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0

    def add(self, text: str) -> None:
        room = OUTPUT_CAP - self.size
        if room > 0:
            self.parts.append(text[:room])
            self.size += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))

    def text(self) -> str:
        cut = f"\n… [{self.dropped:,} more characters not kept]" if self.dropped else ""
        return "".join(self.parts) + cut


async def _read(stream: asyncio.StreamReader | None, sink: _Capped) -> None:
    if stream is None:
        return
    while chunk := await stream.read(READ_CHUNK):
        sink.add(chunk.decode("utf-8", errors="replace"))


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    """The event on stdin; a command that never reads it (or exits first) is fine."""
    if proc.stdin is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.close()


async def run_hook(
    command: str, payload: dict[str, Any], cwd: Path, timeout_s: float, secrets: Iterable[str] = ()
) -> HookRun:
    env = command_env(
        os.environ, secrets, {"CLAUDE_PROJECT_DIR": str(cwd), "SHIRO_PROJECT_DIR": str(cwd), "PAGER": "cat"}
    )
    try:
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            command,
            cwd=cwd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            env=env,
        )
    except OSError as error:
        return HookRun(None, error=f"it could not be started ({error.strerror or error})")
    out, err = _Capped(), _Capped()
    work = asyncio.gather(
        _feed(proc, json.dumps(payload, ensure_ascii=False).encode("utf-8")),
        _read(proc.stdout, out),
        _read(proc.stderr, err),
        proc.wait(),
    )
    try:
        await asyncio.wait_for(asyncio.shield(work), timeout_s)
    except TimeoutError:
        _kill_group(proc)
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(work, KILL_WAIT_S)
        return HookRun(None, out.text(), err.text(), timed_out=True)
    except asyncio.CancelledError:
        _kill_group(proc)
        work.cancel()
        raise
    finally:
        _kill_group(proc)  # what it left running in the background ends with it
    return HookRun(proc.returncode, out.text(), err.text())
