"""Debounced autosave: snapshot on the event loop, write in a thread, newest snapshot wins.

``poke()`` after every change re-arms a 400 ms timer (as the reference does), but a save is never
put off for more than ``max_delay`` while changes keep coming, so a long busy turn is still saved.
Writes run one at a time and in order; a write that finds a newer snapshot already on disk is
skipped, so the file never goes back in time, also when ``flush_sync`` races a thread write.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_DELAY_S = 0.4
DEFAULT_MAX_DELAY_S = 2.0


class Autosave(Generic[T]):
    def __init__(
        self,
        *,
        snapshot: Callable[[], T | None],
        write: Callable[[T], T],
        on_saved: Callable[[T], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
        delay: float = DEFAULT_DELAY_S,
        max_delay: float = DEFAULT_MAX_DELAY_S,
    ) -> None:
        """``snapshot`` runs on the loop and returns None when there is nothing to write."""
        self._snapshot = snapshot
        self._write = write
        self._on_saved = on_saved
        self._on_error = on_error
        self.delay = delay
        self.max_delay = max(delay, max_delay)
        self._dirty = False
        self._dirty_since: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[bool]] = set()
        self._lock = asyncio.Lock()
        self._write_lock = threading.Lock()
        self._taken = 0
        self._written = 0
        self._last_error: str | None = None

    @property
    def dirty(self) -> bool:
        return self._dirty

    def poke(self) -> None:
        """Something changed: save after ``delay`` of quiet (at most ``max_delay`` from the first change)."""
        self._dirty = True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (a script, a test): the next flush saves it
        now = loop.time()
        if self._dirty_since is None:
            self._dirty_since = now
        due = min(now + self.delay, self._dirty_since + self.max_delay)
        if self._timer is not None:
            self._timer.cancel()
        self._timer = loop.call_at(due, self._fire)

    def _fire(self) -> None:
        self._timer = None
        task = asyncio.ensure_future(self.flush())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _take(self) -> tuple[int, T | None]:
        self._dirty = False
        self._dirty_since = None
        self._taken += 1
        return self._taken, self._snapshot()

    def _write_in_order(self, number: int, snapshot: T) -> T | None:
        with self._write_lock:
            if number <= self._written:
                return None
            saved = self._write(snapshot)
            self._written = number
            return saved

    async def flush(self, *, raise_errors: bool = False) -> bool:
        """Save now if anything changed; True if a snapshot was written."""
        self._cancel_timer()
        async with self._lock:
            if not self._dirty:
                return False
            number, snapshot = self._take()
            if snapshot is None:
                return False
            try:
                saved = await asyncio.to_thread(self._write_in_order, number, snapshot)
            except Exception as error:
                self._dirty = True  # the next change or flush tries again
                if raise_errors:
                    raise
                self._report(error)
                return False
            self._last_error = None
            if saved is not None and self._on_saved is not None:
                self._on_saved(saved)
            return True

    def flush_sync(self) -> bool:
        """Save now, blocking (the `exit` hook, interpreter exit). Waits for a write in flight."""
        self._cancel_timer()
        if not self._dirty:
            return False
        number, snapshot = self._take()
        if snapshot is None:
            return False
        try:
            self._write_in_order(number, snapshot)
        except Exception as error:
            self._dirty = True
            self._report(error)
            return False
        return True

    def _report(self, error: Exception) -> None:
        text = str(error)
        if text == self._last_error:
            log.info("autosave failed again: %s", text)
            return
        self._last_error = text
        if self._on_error is not None:
            self._on_error(error)
        else:
            log.warning("autosave failed: %s", text)
