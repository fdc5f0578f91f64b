"""Atomic writes, cross-process locks, and setting corrupt files aside.

Two VS Code windows on one project run two servers that share these files, so every
read-modify-write happens under ``locked(path)`` and every write replaces the file whole.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from filelock import FileLock, Timeout

from shiro_lsp.errors import StateUnavailable
from shiro_lsp.fs import locks

LOCK_TIMEOUT_S = 30.0
# tempfile.mkstemp(prefix=".NAME.", suffix=".tmp"): a dot, the name, a dot, 8 random characters.
TEMP_NAME = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")
STALE_TEMP_S = 5.0 if locks.available() else 24 * 3600.0  # no locks: only old temp files are stale

log = logging.getLogger(__name__)


def mark_in_use(fd: int) -> None:
    """Hold a lock on a temp file while it is written: the start-up cleanup leaves it alone.

    The lock dies with the process, so a temp file nobody holds is one an interrupted write left.
    """
    with contextlib.suppress(OSError):
        locks.lock(fd, wait=False)


def clean_stale_temp_files(directories: list[Path], *, stale_after: float = STALE_TEMP_S) -> list[Path]:
    """Remove the temp files that interrupted atomic writes left in ``directories``.

    Only files named like ours (``.NAME.xxxxxxxx.tmp``), regular, not links, older than
    ``stale_after`` seconds and not locked by a live writer. Returns what was removed.
    """
    removed: list[Path] = []
    now = time.time()
    for directory in directories:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if not TEMP_NAME.match(entry.name):
                continue
            try:
                if (
                    not entry.is_file(follow_symlinks=False)
                    or now - entry.stat(follow_symlinks=False).st_mtime < stale_after
                ):
                    continue
                if _unlink_if_unheld(Path(entry.path)):
                    removed.append(Path(entry.path))
            except OSError as error:
                log.info("could not clean %s: %s", entry.path, error)
    if removed:
        log.info("removed %d temp file(s) left by interrupted writes", len(removed))
    return removed


def _unlink_if_unheld(path: Path) -> bool:
    if not locks.available():
        path.unlink()
        return True
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        try:
            locks.lock(fd, wait=False)
        except BlockingIOError:
            return False  # a live writer holds it
        path.unlink()
        return True
    finally:
        os.close(fd)


@dataclass
class Staged:
    """The temp file ``replacing`` writes into: ``file`` while the block runs, ``stat`` after it."""

    file: BinaryIO
    temp: Path  # its name until the rename
    stat: os.stat_result | None = None  # the written file's fstat, taken before the rename


@contextlib.contextmanager
def replacing(
    path: Path,
    *,
    sync: bool = True,
    durable: bool = False,
    before_replace: Callable[[], None] | None = None,
) -> Iterator[Staged]:
    """The one atomic writer: write into ``staged.file``; when the block ends, the file replaces ``path``.

    A reader sees the old file or the new one, never a mix. The temp file (``.NAME.xxxxxxxx.tmp``
    beside ``path``) is locked while it is written (``mark_in_use``: the start-up cleanup leaves a
    live writer's file alone) and removed if the block or the replace fails, so ``path`` is then
    untouched. In order, after the block: flush; fsync unless ``sync=False`` (still atomic, but a
    power cut may keep the old version: for records cheap to lose on a hot path);
    ``before_replace()`` (a last check or an audit row: if it raises, nothing is replaced);
    ``stat`` = the fstat of what was written; the rename, with the file still open and locked;
    with ``durable`` an fsync of the directory, so the rename itself survives a power cut.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    mark_in_use(fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            staged = Staged(handle, Path(tmp))
            yield staged
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
            if before_replace is not None:
                before_replace()
            staged.stat = os.fstat(handle.fileno())
            os.replace(tmp, path)  # still open: the cleanup at start sees a live writer
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


def write_bytes_atomic(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Write ``data`` to ``path`` so a reader sees the old file or the new one, never a mix.

    ``sync=False`` skips the fsync: still atomic, but a power cut may keep the old version. For
    records that are cheap to lose and written on a hot path (a checkpoint's manifest).
    """
    with replacing(path, sync=sync) as staged:
        staged.file.write(data)


def write_text_atomic(path: Path, text: str, *, sync: bool = True) -> None:
    write_bytes_atomic(path, text.encode("utf-8"), sync=sync)


def pretty_json(value: Any) -> str:
    """The text of a JSON state file: 2-space indent, as the reference writes its stores."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def write_json_atomic(path: Path, value: Any, *, sync: bool = True) -> None:
    write_text_atomic(path, pretty_json(value), sync=sync)


class ArrayEncoder:
    """``pretty_json(items)`` for an array rewritten again and again: each save encodes only the items
    not in the last one (indented JSON is Python code in ``json``, about 9 µs an entry).

    Items are keyed by their ``repr``, which tells apart every JSON value (``1``, ``1.0`` and
    ``True`` too), so an item is reused only as the same value; the text is byte for byte
    ``pretty_json``'s. Not thread-safe: a store encodes under its file lock.
    """

    def __init__(self) -> None:
        self._known: dict[str, str] = {}

    def encode(self, items: list[Any]) -> str:
        if not items:
            return pretty_json(items)
        known: dict[str, str] = {}
        parts = []
        for item in items:
            key = repr(item)
            text = self._known.get(key)
            if text is None:  # at depth 1 in the array: every line of the item moves in by two spaces
                text = "  " + json.dumps(item, indent=2, ensure_ascii=False).replace("\n", "\n  ")
            known[key] = text
            parts.append(text)
        self._known = known
        return "[\n" + ",\n".join(parts) + "\n]\n"


def fsync_dir(directory: Path) -> None:
    """Make the names in ``directory`` (a rename into it) survive a power cut."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def append_record(path: Path, record: bytes) -> None:
    """Append one record (one line, ending in a newline) to a journal in a single ``write``.

    The journal's atomicity is per record: a reader sees a record whole or not at all, because
    :func:`read_records` drops a last line without its newline (a write a crash cut short) and
    ``O_APPEND`` keeps two writers' records from overlapping. Cheaper than a temp file + rename
    (no new directory entry), for records written on a hot path (checkpoint manifests).

    The append holds a shared lock on the journal, and :func:`rewrite_records` an exclusive one:
    an append that opened a journal a rewrite then replaced sees that (another file is at the
    path now) and appends to the new one, so no record is written into a file already gone.
    """
    if not record.endswith(b"\n") or b"\n" in record[:-1]:
        raise ValueError("a journal record is exactly one line ending in a newline")
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    while True:
        try:
            fd = os.open(path, flags, 0o600)
        except FileNotFoundError:  # the first record: make the directory (not looked at on every append)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, flags, 0o600)
        try:
            locks.lock(fd, shared=True)
            opened = os.fstat(fd)
            if not _still_at(path, opened):
                continue  # a rewrite replaced the journal meanwhile: append to the one there now
            if opened.st_size and os.pread(fd, 1, opened.st_size - 1) != b"\n":
                record = b"\n" + record  # end a torn record first, so it does not swallow this one
            view = memoryview(record)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            return
        finally:
            os.close(fd)  # and with it the lock


def _still_at(path: Path, opened: os.stat_result) -> bool:
    """Whether the open file ``opened`` is still the one at ``path``."""
    if not locks.available():
        return True  # no locks (Windows): nothing rewrites a journal concurrently there
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    return (now.st_ino, now.st_dev) == (opened.st_ino, opened.st_dev)


def read_records(path: Path) -> list[bytes]:
    """The whole records of a journal written by :func:`append_record`, oldest first."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return _whole_records(data)


def _whole_records(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    return [line for line in lines[:-1] if line.strip()]  # lines[-1]: "" or a torn last record


def rewrite_records(path: Path, rewrite: Callable[[list[bytes]], list[bytes] | None]) -> bool:
    """Replace a journal's records by ``rewrite(records)`` (None: leave it), atomically.

    No append is lost: the rewrite holds the journal's exclusive lock from the read to the
    replace, and an append waiting meanwhile goes to the new file (see :func:`append_record`).
    The new journal is written to a temp file, synced, renamed over the old one, and the directory
    synced: a kill at any point leaves the old journal or the new one, each whole. A torn last
    record (a cut-short append) is dropped, as every reader drops it. False when nothing was
    rewritten (no journal, or ``rewrite`` said None).
    """
    while True:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            return False
        try:
            locks.lock(fd)
            if not _still_at(path, os.fstat(fd)):
                continue  # rewritten by someone else meanwhile: read the new one
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            records = rewrite(_whole_records(b"".join(chunks)))
            if records is None:
                return False
            if any(not r or b"\n" in r for r in records):
                raise ValueError("a journal record is exactly one line")
            with replacing(path, durable=True) as staged:
                staged.file.write(b"".join(r + b"\n" for r in records))
            return True
        finally:
            os.close(fd)


@contextlib.contextmanager
def locked(path: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the cross-process lock that guards ``path``: an exclusive ``flock`` on a sibling ``.lock`` file.

    It excludes other processes and other threads of this one (each call opens its own descriptor);
    it is not reentrant (a nested ``locked`` of the same path in one thread waits for itself, then
    times out). The lock file and the lock are the ones the ``filelock`` library takes, so an older
    Shiro on the same files is excluded too. Waiting longer than ``timeout`` seconds is a
    :class:`StateUnavailable` that names the file; nothing was changed then. Where there is no
    ``fcntl`` (Windows), ``filelock`` does it.
    """
    lock_path = f"{path}.lock"
    if not locks.available():
        try:
            with FileLock(lock_path, timeout=timeout):
                yield
        except Timeout:
            raise _lock_timeout(path, timeout) from None
        return
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(lock_path, flags, 0o600)
    except FileNotFoundError:  # the first use: make the directory (not looked at every time)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path, flags, 0o600)
    try:
        _flock_within(fd, path, timeout)
        yield
    finally:
        os.close(fd)  # and with it the lock


def _flock_within(fd: int, path: Path, timeout: float) -> None:
    """Take an exclusive flock on ``fd``, polling (1 ms, doubling to 50 ms) for at most ``timeout`` s."""
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            locks.lock(fd, wait=False)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise _lock_timeout(path, timeout) from None
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _lock_timeout(path: Path, timeout: float) -> StateUnavailable:
    return StateUnavailable(
        f"{path} stayed locked by another Shiro (another window?) for {timeout:g} s; "
        "try again in a moment. Nothing was changed.",
        data={"errno": "EBUSY", "path": str(path)},
    )


def quarantine_name(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return path.with_name(f"{path.name}.corrupt-{stamp}")


def set_aside(path: Path) -> Path:
    """Move a corrupt file (or a directory squatting on a file's name) aside; return where it went."""
    target = quarantine_name(path)
    os.replace(path, target)
    return target


def copy_aside(path: Path) -> Path:
    """Keep a copy of a file we can only partly read, before a later write drops what we could not."""
    target = quarantine_name(path)
    shutil.copy2(path, target)
    return target
