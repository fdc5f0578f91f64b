"""Advisory file locks (POSIX ``flock``), with the one fallback for where there are none.

Without ``fcntl`` (Windows) :func:`available` is False and the lock calls do nothing: the callers
then take their slow path (``filelock``) or skip what only a lock makes safe.
"""

from __future__ import annotations

try:
    import fcntl
except ImportError:  # Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]


def available() -> bool:
    return fcntl is not None


def lock(fd: int, *, shared: bool = False, wait: bool = True) -> None:
    """``flock`` ``fd``; without ``wait``, BlockingIOError when someone else holds it."""
    if fcntl is None:
        return
    operation = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    fcntl.flock(fd, operation if wait else operation | fcntl.LOCK_NB)


def unlock(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)
