"""One writer of a workspace's files at a time: manual note writes and a running turn's file changes.

The reservation is a cross-process lock per workspace under the state root (two VS Code windows,
the MCP server and a headless run share it). It is re-entrant along one flow of control: a turn
that holds it may call code that reserves again (directly, in ``asyncio.to_thread`` or in a
child task, which inherit the context) without deadlocking itself. Separate flows wait their turn.

    with reserve_workspace(root, workspace):            # blocking code
        ...
    async with workspace_reservation(root, workspace):  # async code: waits in a thread
        ...

The async form is taken per tool call, so its common case costs no thread hop: once this process
has reserved a workspace, it keeps a descriptor on the lock file and tries a non-blocking
``flock`` on it, on the loop; only when that fails (the lock is busy) does it wait in a thread.
The lock file's path (a ``realpath``) is worked out once per process and workspace.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import AsyncIterator, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock, Timeout

from shiro_lsp.errors import Conflict
from shiro_lsp.fs import locks
from shiro_lsp.state.paths import StatePaths, project_key

RESERVATION_TIMEOUT_S = 60.0

_held: ContextVar[frozenset[str]] = ContextVar("shiro_workspace_reservations", default=frozenset())


def reservation_lock_path(root: Path, workspace: str) -> Path:
    """Keyed by the resolved path, so two spellings of one folder share a reservation."""
    return StatePaths(root).workspace_lock(project_key(os.path.realpath(workspace)))


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


@dataclass
class _Kept:
    """A descriptor on a workspace's lock file that this process keeps open, so that the async
    form can take the lock without opening anything: ``flock`` with ``LOCK_NB`` never waits, so
    it is done on the event loop. One holder at a time (``in_use``): a second flow of this process
    takes the slow path, a lock of its own on a fresh descriptor, which ``flock`` keeps apart."""

    fd: int
    in_use: threading.Lock = field(default_factory=threading.Lock)

    def try_take(self) -> bool:
        """Never waits: False when this descriptor or the lock is busy, or the file was removed."""
        if not self.in_use.acquire(blocking=False):
            return False
        try:
            locks.lock(self.fd, wait=False)
        except OSError:  # held by another process (EWOULDBLOCK), or a descriptor gone bad
            self.in_use.release()
            return False
        if os.fstat(self.fd).st_nlink == 0:  # the lock file was removed or replaced: not the lock
            locks.unlock(self.fd)
            self.in_use.release()
            return False
        return True

    def give_back(self) -> None:
        locks.unlock(self.fd)
        self.in_use.release()


_keys: dict[tuple[Path, str], str] = {}
"""(state root, workspace as given) -> the lock file's path: the ``realpath`` made once per process."""
_kept: dict[str, _Kept] = {}
_kept_guard = threading.Lock()


def _keep(key: str) -> None:
    """Open (once) the descriptor the fast path uses; blocking, so called in a thread."""
    if not locks.available():
        return
    with _kept_guard:
        kept = _kept.get(key)
        if kept is not None:
            if os.fstat(kept.fd).st_nlink > 0:
                return
            if not kept.in_use.acquire(blocking=False):
                return  # a flow holds it right now: it is replaced next time
            os.close(kept.fd)  # the file was removed: this descriptor locks nothing (in_use stays taken)
            del _kept[key]
        try:
            fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return  # the slow path keeps working without it
        _kept[key] = _Kept(fd)


@contextlib.asynccontextmanager
async def workspace_reservation(
    root: Path, workspace: str, timeout: float = RESERVATION_TIMEOUT_S
) -> AsyncIterator[None]:
    """The async form. Once this process has reserved the workspace, taking it again is a
    non-blocking ``flock`` on a kept descriptor, on the loop, when nothing else holds it. The
    first time, and whenever it is busy, finding and taking the lock (``realpath``, ``open``, the
    wait) happens in a thread, never on the event loop. Giving it back does not wait: in place."""
    key = _keys.get((root, workspace))
    held = _held.get()
    if key is not None and key in held:
        yield
        return
    kept = _kept.get(key) if key is not None else None
    if kept is not None and key is not None and kept.try_take():
        token = _held.set(held | {key})
        try:
            yield
        finally:
            _held.reset(token)
            kept.give_back()
        return

    def acquire() -> tuple[str, FileLock | None]:
        path = reservation_lock_path(root, workspace)
        key = _keys[(root, workspace)] = str(path)
        if key in held:  # nested in a reservation this flow holds (the key was not known yet)
            return key, None
        lock = FileLock(key, thread_local=False)
        try:
            lock.acquire(timeout)
        except FileNotFoundError:  # the first reservation under this state root
            path.parent.mkdir(parents=True, exist_ok=True)
            lock.acquire(timeout)
        _keep(key)
        return key, lock

    acquiring = asyncio.ensure_future(asyncio.to_thread(acquire))
    try:
        taken, lock = await asyncio.shield(acquiring)
    except Timeout:
        raise _busy(workspace, timeout) from None
    except asyncio.CancelledError:
        # The thread cannot be stopped: give the lock back as soon as it gets it.
        acquiring.add_done_callback(_release_if_acquired)
        raise
    if lock is None:
        yield
        return
    token = _held.set(_held.get() | {taken})
    try:
        yield
    finally:
        _held.reset(token)
        # flock(LOCK_UN) and a close: neither waits, and no cancellation can come in between.
        lock.release()


def _release_if_acquired(done: asyncio.Future[tuple[str, FileLock | None]]) -> None:
    if not done.cancelled() and done.exception() is None:
        lock = done.result()[1]
        if lock is not None:
            lock.release()
