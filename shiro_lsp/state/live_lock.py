"""One process at a time on a live session (two VS Code windows, or a window and `shiro-lsp run`).

Each server autosaves its live session whole, so two servers on one session would each overwrite
the other's turns (the last writer wins and acknowledged turns are gone). A server therefore
holds ``<root>/locks/session-<id>.lock`` for as long as the session is live in it; resuming a
session another process holds is refused with a message (branch it to continue in a copy).
The lock is an OS lock, so it goes away with the process, even after a SIGKILL.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from filelock import FileLock, Timeout

from shiro_lsp.errors import Conflict
from shiro_lsp.state.paths import StatePaths

log = logging.getLogger(__name__)


def busy_message(session_id: str) -> str:
    return (
        f"Session {session_id} is open in another Shiro window (another VS Code window or `shiro-lsp run`). "
        "Continue it there, or close it there first; to work on it here too, branch it (a copy). "
        "Nothing was changed."
    )


class LiveSessionLock:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._held: dict[str, FileLock] = {}
        self._mutex = threading.Lock()

    def path_of(self, session_id: str) -> Path:
        return StatePaths(self.root).session_lock(session_id)

    def take(self, session_id: str) -> None:
        """Hold ``session_id``'s lock (a no-op if this process holds it); Conflict if another does."""
        with self._mutex:
            if session_id in self._held:
                return
            path = self.path_of(session_id)
            lock = FileLock(str(path), timeout=0, thread_local=False)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                lock.acquire()
            except Timeout:
                raise Conflict(busy_message(session_id), data={"sessionId": session_id}) from None
            except OSError as error:  # no writable state root: nothing can be saved to overwrite anyway
                log.info("session %s is not locked (%s)", session_id, error.strerror or error)
                return
            self._held[session_id] = lock

    def release_others(self, keep: str) -> None:
        with self._mutex:
            for session_id in [s for s in self._held if s != keep]:
                self._held.pop(session_id).release()

    def release(self, session_id: str) -> None:
        with self._mutex:
            lock = self._held.pop(session_id, None)
        if lock is not None:
            lock.release()

    def held(self) -> list[str]:
        with self._mutex:
            return list(self._held)
