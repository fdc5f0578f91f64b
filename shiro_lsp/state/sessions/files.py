"""Writing a session file durably (temp file, fsync, rename, fsync dir)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from shiro_lsp.state.atomic import mark_in_use

WRITE_BATCH_BYTES = 1 << 20

FileSignature = tuple[int, int]  # (mtime_ns, size)


def write_chunks_durable(path: Path, chunks: Iterable[bytes]) -> FileSignature:
    """Write atomically (temp file, fsync, rename, fsync dir); return the written file's (mtime, size).

    The signature comes from the file we wrote (fstat before the rename), so an index row never
    pairs our content with another writer's file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    mark_in_use(fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            batch: list[bytes] = []
            pending = 0
            for chunk in chunks:
                batch.append(chunk)
                pending += len(chunk)
                if pending >= WRITE_BATCH_BYTES:
                    handle.writelines(batch)
                    batch, pending = [], 0
            handle.writelines(batch)
            handle.flush()
            os.fsync(handle.fileno())
            written = os.fstat(handle.fileno())
            os.replace(tmp, path)  # still open: the cleanup at start sees a live writer
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return written.st_mtime_ns, written.st_size
