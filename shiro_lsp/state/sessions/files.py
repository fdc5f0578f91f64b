"""Writing a session file durably (temp file, fsync, rename, fsync dir: ``atomic.replacing``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from shiro_lsp.state.atomic import replacing

WRITE_BATCH_BYTES = 1 << 20

FileSignature = tuple[int, int]  # (mtime_ns, size)


def write_chunks_durable(path: Path, chunks: Iterable[bytes]) -> FileSignature:
    """Write atomically (temp file, fsync, rename, fsync dir); return the written file's (mtime, size).

    The signature comes from the file we wrote (fstat before the rename), so an index row never
    pairs our content with another writer's file.
    """
    with replacing(path, durable=True) as staged:
        batch: list[bytes] = []
        pending = 0
        for chunk in chunks:
            batch.append(chunk)
            pending += len(chunk)
            if pending >= WRITE_BATCH_BYTES:
                staged.file.writelines(batch)
                batch, pending = [], 0
        staged.file.writelines(batch)
    assert staged.stat is not None  # set by a replace that succeeded
    return staged.stat.st_mtime_ns, staged.stat.st_size
