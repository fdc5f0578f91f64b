"""The bash tool: one command in its own process group, output streamed and bounded.

The command runs as ``bash -c`` in a new session (so it is the leader of its own process group)
with the workspace as its working directory. stdout and stderr are read concurrently in chunks;
each chunk goes to ``ctx.on_output`` (up to :data:`STREAM_LIMIT` characters, then one note) and
into a bounded head/tail buffer, so a command printing 50 MB never holds 50 MB here.

Stopping: a timeout, a per-command interrupt (``ctx.interrupt``) and cancellation of the task
(the turn was aborted) all kill the whole process group, children included. Cancellation
re-raises; an interrupt fails the call with the reference's message so the turn goes on.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
from collections import deque
from collections.abc import Callable
from typing import Literal

from pydantic import Field

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.jail import roots_of, workspace_root
from shiro_lsp.tools import sandbox
from shiro_lsp.tools.base import MAX_OUTPUT, ToolContext, ToolInput, ToolSpec, field_subject, typed_tool
from shiro_lsp.tools.environment import command_env

DEFAULT_TIMEOUT_MS = 120_000
MIN_TIMEOUT_MS = 1_000
MAX_TIMEOUT_MS = 600_000
HEAD_CHARS = 10_000
TAIL_CHARS = 20_000
STREAM_LIMIT = 1_000_000
READ_CHUNK = 65_536
PIPE_GRACE_S = 1.0
EXIT_POLL_S = 0.02
KILL_WAIT_S = 5.0
REPORT_BUDGET = MAX_OUTPUT - 500
INTERRUPTED = "The user interrupted this command. It did not finish, so its effects are unknown."

Ending = Literal["exited", "timeout", "interrupted"]


class BoundedText:
    """Keeps the first ``head`` and the last ``tail`` characters of a stream, and counts the rest."""

    def __init__(self, head: int = HEAD_CHARS, tail: int = TAIL_CHARS) -> None:
        self._head_limit = head
        self._tail_limit = tail
        self._head = ""
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self.total = 0

    def add(self, text: str) -> None:
        self.total += len(text)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += text[:room]
            text = text[room:]
        if not text:
            return
        self._tail.append(text)
        self._tail_len += len(text)
        while self._tail and self._tail_len - len(self._tail[0]) >= self._tail_limit:
            self._tail_len -= len(self._tail.popleft())

    def text(self) -> str:
        tail = "".join(self._tail)[-self._tail_limit :] if self._tail else ""
        dropped = self.total - len(self._head) - len(tail)
        if dropped > 0:
            return f"{self._head}\n... [truncated {dropped} chars]\n{tail}"
        return self._head + tail


class _Live:
    """Forwards chunks to the listener until STREAM_LIMIT characters have gone out."""

    def __init__(self, listener: Callable[[str], None]) -> None:
        self._listener = listener
        self._sent = 0
        self._stopped = False

    def send(self, text: str) -> None:
        if self._stopped or not text:
            return
        if self._sent + len(text) > STREAM_LIMIT:
            self._stopped = True
            self._listener(f"\n... [live output stopped after {STREAM_LIMIT} chars; the command goes on]\n")
            return
        self._sent += len(text)
        self._listener(text)


async def _pump(reader: asyncio.StreamReader, sink: BoundedText, live: _Live) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while chunk := await reader.read(READ_CHUNK):
        text = decoder.decode(chunk)
        sink.add(text)
        live.send(text)
    rest = decoder.decode(b"", final=True)
    sink.add(rest)
    live.send(rest)


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def _drain(pumps: asyncio.Future[tuple[None, None]]) -> bool:
    """Let the readers finish; False when a leftover background process still holds the pipes."""
    try:
        await asyncio.wait_for(asyncio.shield(pumps), PIPE_GRACE_S)
        return True
    except TimeoutError:
        pumps.cancel()
        return False


async def _shell_exit(proc: asyncio.subprocess.Process) -> None:
    """Resolves when the shell itself has exited.

    ``Process.wait()`` also waits for the pipes to close, which a background child can hold
    open indefinitely; the return code is known as soon as the shell is reaped.
    """
    while proc.returncode is None:
        await asyncio.sleep(EXIT_POLL_S)


async def _reap_after_kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(_shell_exit(proc), KILL_WAIT_S)


async def _supervise(proc: asyncio.subprocess.Process, timeout_s: float, interrupt: asyncio.Event) -> Ending:
    exited = asyncio.ensure_future(_shell_exit(proc))
    stop = asyncio.ensure_future(interrupt.wait())
    try:
        done, _ = await asyncio.wait({exited, stop}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.cancel()
        if not exited.done():
            exited.cancel()
    if exited in done:
        return "exited"
    _kill_group(proc)
    await _reap_after_kill(proc)
    return "interrupted" if stop in done else "timeout"


def _env(ctx: ToolContext) -> dict[str, str]:
    """The server's environment without the provider's keys (see ``environment.py``)."""
    extra = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}
    return command_env(os.environ, ctx.redactor.values, extra)


def _streams(out: str, err: str) -> str:
    parts = []
    if out.strip():
        parts.append(f"stdout:\n{out.strip()}")
    if err.strip():
        parts.append(f"stderr:\n{err.strip()}")
    return "\n\n".join(parts)


EXIT_LINE = "exit: "
"""How a bash report says the command's exit status (its first such line; a note may come first)."""


def exit_status(report: str) -> str | None:
    """The exit status a bash report gives (``"0"``, ``"1"``, ``"None"`` when killed), or None."""
    line = next((line for line in report.splitlines() if line.startswith(EXIT_LINE)), None)
    return line.removeprefix(EXIT_LINE) if line is not None else None


def _report(code: int | None, ending: Ending, timeout_ms: int, streams: str, detached: bool) -> str:
    parts = [f"{EXIT_LINE}{code}"]
    if ending == "timeout":
        parts.append(f"(timed out after {timeout_ms} ms; the command and its child processes were killed)")
    if detached:
        parts.append("(background processes still hold the output open; their later output is not captured)")
    if streams:
        parts.append(streams)
    return _fit("\n\n".join(parts))


def _fit(report: str) -> str:
    """Keep the start and (mostly) the end: errors and summaries tend to come last."""
    if len(report) <= REPORT_BUDGET:
        return report
    head, tail = REPORT_BUDGET // 3, REPORT_BUDGET - REPORT_BUDGET // 3
    dropped = len(report) - head - tail
    return f"{report[:head]}\n... [truncated {dropped} chars]\n{report[-tail:]}"


async def _argv(command: str, ctx: ToolContext) -> list[str]:
    argv = ["bash", "-c", command]
    chosen = await asyncio.to_thread(sandbox.plan, ctx.sandbox)
    if not chosen.sandboxed:
        return argv
    roots = await asyncio.to_thread(roots_of, ctx.workspace)
    wrap = sandbox.wrap_landlock if chosen.kind == "landlock" else sandbox.wrap
    return await asyncio.to_thread(wrap, argv, roots, network=ctx.sandbox_network)


async def _spawn(argv: list[str], ctx: ToolContext) -> asyncio.subprocess.Process:
    """The started process. Cancelled while asyncio still connects its pipes (the command may
    already run and have started children), the group is killed as soon as the start completes:
    asyncio itself would kill only the shell, then wait for its children to close the pipes."""
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=await asyncio.to_thread(workspace_root, ctx.workspace),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            env=_env(ctx),
        )
    )
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        starting.add_done_callback(_kill_once_started)
        raise


def _kill_once_started(starting: asyncio.Future[asyncio.subprocess.Process]) -> None:
    if not starting.cancelled() and starting.exception() is None:
        _kill_group(starting.result())


async def run_command(command: str, ctx: ToolContext, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> str:
    proc = await _spawn(await _argv(command, ctx), ctx)
    assert proc.stdout is not None and proc.stderr is not None
    out, err = BoundedText(), BoundedText()
    live = _Live(ctx.on_output)
    pumps = asyncio.gather(_pump(proc.stdout, out, live), _pump(proc.stderr, err, live))
    try:
        ending = await _supervise(proc, timeout_ms / 1000, ctx.interrupt)
        drained = await _drain(pumps)
    except asyncio.CancelledError:
        _kill_group(proc)
        pumps.cancel()
        await asyncio.shield(_reap_after_kill(proc))
        raise
    streams = _streams(out.text(), err.text())
    if ending == "interrupted":
        raise ToolError(f"{INTERRUPTED}\n{streams or '(no output before it was killed)'}")
    return _report(proc.returncode, ending, timeout_ms, streams, not drained)


class BashInput(ToolInput):
    command: str
    timeout: int = Field(
        DEFAULT_TIMEOUT_MS, ge=MIN_TIMEOUT_MS, le=MAX_TIMEOUT_MS, description="Timeout in ms, default 120000"
    )


async def bash(input: BashInput, ctx: ToolContext) -> str:
    return await run_command(input.command, ctx, input.timeout)


BASH = typed_tool(
    ToolSpec(
        name="bash",
        description=(
            "Run a shell command (bash -c) in the workspace root. Use for builds, tests, git and package "
            "managers. Output streams live; the result starts with the exit code. The command and every "
            "process it starts are killed on timeout or when the user interrupts it."
        ),
        input_model=BashInput,
        mutating=True,
        subject=field_subject("command"),
        prompt_hint="run a shell command in the workspace (tests, builds, scripts).",
    ),
    BashInput,
    bash,
)
