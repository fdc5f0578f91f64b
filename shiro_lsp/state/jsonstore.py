"""A JSON array in a file, read and written whole under the file's cross-process lock.

A corrupt file is never silently replaced: it is set aside as ``NAME.corrupt-<timestamp>`` and
reported, then the store starts empty. A file the process may not read (permissions) is not
corrupt: it is left in place and every use of the store, read or write, says so (``Unreadable``).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from stat import S_ISLNK, S_ISREG
from typing import Any

from shiro_lsp.errors import StateUnavailable
from shiro_lsp.fs import watch as fswatch
from shiro_lsp.state.atomic import ArrayEncoder, copy_aside, locked, replacing, set_aside

log = logging.getLogger(__name__)


class Unreadable(StateUnavailable):
    """The store's file exists but this process cannot read it: left in place, reads and writes refused."""


Reporter = Callable[[str], None]


def log_reporter(message: str) -> None:
    log.warning("%s", message)


def _copy(items: list[Any]) -> list[Any]:
    """Stores hold flat objects or scalars, so copying each object one level deep is a full copy."""
    return [dict(item) if isinstance(item, dict) else item for item in items]


class JsonArrayFile:
    def __init__(
        self,
        path: Path,
        *,
        label: str,
        is_valid: Callable[[Any], bool],
        reporter: Reporter = log_reporter,
        watch: bool = False,
    ) -> None:
        """``watch``: keep an inotify watch on the folder, so ``current_view`` can answer without I/O."""
        self.path = path
        self.label = label
        self.is_valid = is_valid
        self.reporter = reporter
        self._cache: tuple[tuple[int, int, int], list[Any]] | None = None
        self._encoder = ArrayEncoder()
        # Reads and the cache, one thread at a time (the loop never waits for it: ``current_view``).
        self._lock = threading.RLock()
        self._watching = watch and fswatch.AVAILABLE
        self._watch: fswatch.OwnWritesWatch | None = None
        self._changes = 0  # changes by others the watch has seen
        self._covered = -1  # how many of them the cache is known to include (-1: not known)

    def load(self) -> list[Any]:
        """Read the array (the caller holds the lock when it will write back): a fresh copy."""
        return _copy(self.view())

    def view(self) -> list[Any]:
        """The array as last read, for a caller that only reads it (it must not change it).

        Every write replaces the file (a new inode), so an unchanged (inode, mtime, size) means
        the parsed copy from last time is still what is on disk.
        """
        with self._lock:
            if self._watching and self._watch is None:
                self._start_watch()  # before the stat: a change after it is an event
            if self._watch is not None:
                self._note_changes()
            seen = self._changes
            items, linked = self._read()
            cached = self._cache is not None and self._cache[1] is items  # not a missing or set-aside file
            self._covered = seen if self._watch is not None and cached and not linked else -1
            return items

    def current_view(self) -> list[Any] | None:
        """``view()`` without I/O, for the event loop: the array as last read when the watch shows
        nobody else changed the file since; None when that is not known (no watch, a change, or a
        thread reading right now): then call ``view()`` in a thread.

        The kernel queues an inotify event in the same system call that renames or writes the file,
        so another process's write that has returned is in the queue when this reads it (a
        non-blocking read of a kernel buffer, not of the disk).
        """
        if self._watch is None or not self._lock.acquire(blocking=False):
            return None
        try:
            if self._watch is not None:
                self._note_changes()
            cache = self._cache
            return cache[1] if cache is not None and self._covered == self._changes else None
        finally:
            self._lock.release()

    def _start_watch(self) -> None:
        try:
            self._watch = fswatch.OwnWritesWatch(self.path)
        except OSError:  # no folder yet (tried again next time), or out of inotify instances
            self._watch = None

    def _note_changes(self) -> None:
        assert self._watch is not None
        if self._watch.changed():
            self._changes += 1
        if self._watch.broken:  # the folder moved or went, or events were lost: start again next read
            self._watch.close()
            self._watch = None
            self._changes += 1

    def _read(self) -> tuple[list[Any], bool]:
        """The array, and whether ``path`` is a symbolic link (its target's folder is not watched)."""
        try:
            stat = os.lstat(self.path)
            linked = S_ISLNK(stat.st_mode)
            if linked:
                stat = os.stat(self.path)
        except (FileNotFoundError, NotADirectoryError):  # a file above it: the store cannot exist
            return [], False
        if not S_ISREG(stat.st_mode):
            return self._set_aside("it is not a regular file"), linked
        signature = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if self._cache is not None and self._cache[0] == signature:
            return self._cache[1], linked
        items = self._parse()
        self._cache = (signature, items)
        return items, linked

    def _parse(self) -> list[Any]:
        try:
            text = self.path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            return self._set_aside("it is not valid UTF-8")
        except OSError as error:
            raise Unreadable(
                f"{self.label}: {self.path} cannot be read ({error.strerror or 'I/O error'}). It was left "
                "as it is; fix its permissions (for example chmod u+rw) and try again. Nothing was changed.",
                data={"errno": errno.errorcode.get(error.errno or 0, "EIO"), "path": str(self.path)},
            ) from None
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            return self._set_aside(f"it is not valid JSON ({error.msg} at line {error.lineno})")
        if not isinstance(value, list):
            return self._set_aside("it does not hold a JSON array")
        valid = [item for item in value if self.is_valid(item)]
        if len(valid) != len(value):
            kept = copy_aside(self.path)
            self.reporter(
                f"{self.label}: {len(value) - len(valid)} unreadable entries in {self.path} were skipped; "
                f"the whole file was copied to {kept.name} first, so nothing is lost."
            )
        return valid

    def save(self, items: list[Any]) -> None:
        """Write the array (under the lock, inside ``locked_items``): one fsynced atomic rewrite, as
        ``write_json_atomic`` writes it, re-encoding only the items that changed since the last save."""
        with replacing(self.path) as staged:
            if (watch := self._watch) is not None:
                watch.expect(staged.temp.name)  # this rename is ours: the cache will hold it
            staged.file.write(self._encoder.encode(items).encode("utf-8"))
        stat = staged.stat  # the written file's: a rename keeps its inode, mtime and size
        assert stat is not None
        with self._lock:
            self._cache = ((stat.st_ino, stat.st_mtime_ns, stat.st_size), _copy(items))

    @contextmanager
    def locked_items(self) -> Iterator[list[Any]]:
        """Hold the lock around a read-modify-write; the caller calls ``save`` if it changed anything."""
        with locked(self.path):
            yield self.load()

    def _set_aside(self, reason: str) -> list[Any]:
        target = set_aside(self.path)
        self.reporter(
            f"{self.label}: {self.path} could not be used because {reason}. "
            f"It was moved to {target.name} (nothing was deleted) and {self.label} starts empty."
        )
        return []
