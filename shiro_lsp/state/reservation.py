"""One writer of a workspace's files at a time: manual note writes and a running turn's file changes.

The reservation is a cross-process lock per workspace under the state root (two VS Code windows,
the MCP server and a headless run share it). It is re-entrant along one flow of control: a turn
that holds it may call code that reserves again (directly, in ``asyncio.to_thread`` or in a
child task, which inherit the context) without deadlocking itself. Separate flows wait their turn.

    with reserve_workspace(root, workspace):            # blocking code
        ...
    async with workspace_reservation(root, workspace):  # async code: waits in a thread
        ...
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from contextvars import ContextVar
from pathlib import Path

from filelock import FileLock, Timeout

from shiro_lsp.errors import Conflict
from shiro_lsp.state.paths import project_key

RESERVATION_TIMEOUT_S = 60.0

_held: ContextVar[frozenset[str]] = ContextVar("shiro_workspace_reservations", default=frozenset())


def reservation_lock_path(root: Path, workspace: str) -> Path:
    """Keyed by the resolved path, so two spellings of one folder share a reservation."""
    return root / "locks" / f"workspace-{project_key(os.path.realpath(workspace))}.lock"


def reservation_key(root: Path, workspace: str) -> str:
    return str(reservation_lock_path(root, workspace))


def _busy(workspace: str, timeout: float) -> Conflict:
    return Conflict(
        f"The workspace {workspace} stayed busy for {timeout:g} s (a running task is changing files). "
        "Nothing was changed; try again when it finishes."
    )


@contextlib.contextmanager
def reserve_workspace(root: Path, workspace: str, timeout: float = RESERVATION_TIMEOUT_S) -> Iterator[None]:
    path = reservation_lock_path(root, workspace)
    key = str(path)
    if key in _held.get():
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(key, thread_local=False)
    try:
        lock.acquire(timeout=timeout)
    except Timeout:
        raise _busy(workspace, timeout) from None
    token = _held.set(_held.get() | {key})
    try:
        yield
    finally:
        _held.reset(token)
        lock.release()


@contextlib.asynccontextmanager
async def workspace_reservation(
    root: Path, workspace: str, timeout: float = RESERVATION_TIMEOUT_S
) -> AsyncIterator[None]:
    """The async form: finding and taking the lock (``realpath``, ``open``, a wait) happens in a
    thread, never on the event loop; giving it back does not wait, so it is done in place."""
    held = _held.get()
    if held and reservation_key(root, workspace) in held:
        yield
        return

    def acquire() -> tuple[str, FileLock]:
        path = reservation_lock_path(root, workspace)
        lock = FileLock(str(path), thread_local=False)
        try:
            lock.acquire(timeout)
        except FileNotFoundError:  # the first reservation under this state root
            path.parent.mkdir(parents=True, exist_ok=True)
            lock.acquire(timeout)
        return str(path), lock

    acquiring = asyncio.ensure_future(asyncio.to_thread(acquire))
    try:
        key, lock = await asyncio.shield(acquiring)
    except Timeout:
        raise _busy(workspace, timeout) from None
    except asyncio.CancelledError:
        # The thread cannot be stopped: give the lock back as soon as it gets it.
        acquiring.add_done_callback(_release_if_acquired)
        raise
    token = _held.set(_held.get() | {key})
    try:
        yield
    finally:
        _held.reset(token)
        # flock(LOCK_UN) and a close: neither waits, and no cancellation can come in between.
        lock.release()


def _release_if_acquired(done: asyncio.Future[tuple[str, FileLock]]) -> None:
    if not done.cancelled() and done.exception() is None:
        done.result()[1].release()
