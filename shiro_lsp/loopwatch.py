"""Find what holds the event loop: ``SHIRO_SLOW_CALLBACK_MS=N`` times every callback the loop runs.

asyncio's debug mode says *that* a callback was slow, and its repr says where a task stopped, not
what it did. This watch times every callback (a task step, a ``call_soon``, a timer) two ways:

- wall time, which a busy machine inflates (the loop thread waits for a core, or for the GIL
  while a worker thread runs C code);
- the loop thread's own CPU time (``time.thread_time``), the work the callback itself did, which
  neither other processes nor other threads can inflate much.

A watchdog thread samples the loop thread's stack while a callback runs past half the threshold, so
the log line names the code that held the loop. It also records blocking file operations made on
the loop thread (Python audit events: ``open``, ``os.rename`` …, ``fcntl.flock``, ``sqlite3.connect``,
``time.sleep``; not a ``flock`` that gives a lock back or fails at once, ``LOCK_NB``), the
blocking a CPU clock cannot see. Imports are left out of that list (their cost
is on the CPU clock). One line each, on the ``shiro_lsp.loopwatch`` logger (stderr)::

    slow callback: 412 ms wall, 380 ms cpu: <Task …> at shiro_lsp/context/prune.py:120 in prune
    blocking I/O on the loop: os.rename at shiro_lsp/state/atomic.py:140 in write_atomic

It costs speed, so it is off by default; the tests turn it on (tests/e2e/test_loop_stays_responsive.py).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import sys
import threading
import time
import traceback
from asyncio import events
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

log = logging.getLogger(__name__)

SLOW = "slow callback"
BLOCKING = "blocking I/O on the loop"
# Audit events of file and database operations that block the calling thread.
BLOCKING_EVENTS = frozenset(
    {
        "open",
        "os.rename",
        "os.remove",
        "os.mkdir",
        "os.listdir",
        "os.scandir",
        "os.truncate",
        "shutil.copyfile",
        "shutil.rmtree",
        "fcntl.flock",
        "fcntl.lockf",
        "sqlite3.connect",
        "time.sleep",
    }
)
CODE_FILES = (".py", ".pyc", ".so")
UNLOCK = 8  # fcntl.LOCK_UN (fcntl is POSIX-only)
NONBLOCKING = 4  # fcntl.LOCK_NB
_PACKAGE = Path(__file__).resolve().parent
_ROOT = _PACKAGE.parent


def _where(frame: FrameType | None, depth: int = 3) -> str:
    """The innermost ``depth`` frames of Shiro's own code on a stack ("?" if none)."""
    places: list[str] = []
    stack = traceback.StackSummary.extract(traceback.walk_stack(frame), lookup_lines=False)
    for summary in stack:  # innermost first; no source lines are read (that would be I/O)
        path = Path(summary.filename)
        if path.is_relative_to(_PACKAGE) and path.name != "loopwatch.py":
            places.append(f"{path.relative_to(_ROOT)}:{summary.lineno} in {summary.name}")
            if len(places) == depth:
                break
    return " <- ".join(places) or "?"


def _importing(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def describe(handle: events.Handle) -> str:
    """A task's repr for a task step (as asyncio's debug mode prints it), else the handle's."""
    callback: Any = getattr(handle, "_callback", None)
    task = getattr(callback, "__self__", None)
    return repr(task) if isinstance(task, asyncio.Task) else repr(handle)


class LoopWatch:
    """Times the callbacks of the loop running on the thread that calls :meth:`install`."""

    def __init__(self, threshold_s: float) -> None:
        self.threshold_s = threshold_s
        self._loop_thread = threading.get_ident()
        self._counter = itertools.count()
        self._running: tuple[int, float] | None = None  # (callback number, start)
        self._samples: dict[int, list[str]] = {}
        self._reported: set[tuple[str, str]] = set()
        self._auditing = False
        self._active = False
        self._original: Callable[[events.Handle], None] | None = None

    def install(self) -> None:
        """Start watching (for the rest of the process, or until :meth:`uninstall`)."""
        original: Callable[[events.Handle], None] = events.Handle._run
        watch = self

        def _run(handle: events.Handle) -> None:
            number = next(watch._counter)
            start, cpu = time.perf_counter(), time.thread_time()
            watch._running = (number, start)
            try:
                original(handle)
            finally:
                watch._running = None
                watch._finished(handle, number, time.perf_counter() - start, time.thread_time() - cpu)

        self._original = original
        self._active = True
        events.Handle._run = _run  # type: ignore[method-assign,assignment]
        sys.addaudithook(self._audit)  # for good: an audit hook cannot be removed (it goes quiet)
        threading.Thread(target=self._sample, name="shiro-loopwatch", daemon=True).start()
        log.info("watching the event loop for callbacks over %.0f ms", self.threshold_s * 1e3)

    def uninstall(self) -> None:
        if self._original is not None:
            events.Handle._run = self._original  # type: ignore[method-assign,assignment]
        self._active = False

    def _finished(self, handle: events.Handle, number: int, wall: float, cpu: float) -> None:
        samples = self._samples.pop(number, [])
        if wall <= self.threshold_s:
            return
        where = " | ".join(dict.fromkeys(samples)) or "?"
        log.warning(
            "%s: %.0f ms wall, %.0f ms cpu: %s at %s", SLOW, wall * 1e3, cpu * 1e3, describe(handle), where
        )

    def _sample(self) -> None:
        interval = self.threshold_s / 4
        while self._active:
            time.sleep(interval)
            running = self._running
            if running is None or time.perf_counter() - running[1] < self.threshold_s / 2:
                continue
            frame = sys._current_frames().get(self._loop_thread)
            if frame is not None and self._running == running:
                self._samples.setdefault(running[0], []).append(_where(frame))

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        if not self._active or event not in BLOCKING_EVENTS or self._running is None:
            return
        if event == "open" and str(args[0]).endswith(CODE_FILES):
            return  # an import (its CPU cost is on the callback's clock) or a traceback's source line
        if event == "fcntl.flock" and len(args) > 1 and (args[1] == UNLOCK or args[1] & NONBLOCKING):
            return  # giving a lock back never waits, nor does an attempt that fails when it is busy
        if threading.get_ident() != self._loop_thread or self._auditing:
            return
        self._auditing = True
        try:
            if _importing(sys._getframe(1)):
                return  # an import's file search: its cost is on the callback's CPU clock
            where = _where(sys._getframe(1))
            if where == "?" or (event, where) in self._reported:
                return
            self._reported.add((event, where))
            log.warning("%s: %s %s at %s", BLOCKING, event, str(args[0])[:120] if args else "", where)
        finally:
            self._auditing = False
