"""Read a small text file below a base folder without following links or blocking on special files.

Used for the project notes file in the workspace and for plain-file (legacy) task notes in the
state root. Every component below ``base`` is opened relative to its parent with ``O_NOFOLLOW``,
so a symlink anywhere on the way is refused rather than followed, and the file itself is opened
with ``O_NONBLOCK`` and checked with ``fstat`` before a byte is read, so a FIFO never blocks.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from shiro_lsp.fs import nofollow


@dataclass(frozen=True)
class ConfinedRead:
    """``text`` is None when the file does not exist or could not be used (then ``problem`` says why)."""

    path: Path
    text: str | None
    problem: str | None = None

    @property
    def exists(self) -> bool:
        return self.text is not None or self.problem is not None


def read_confined(base: Path, parts: Sequence[str], cap: int) -> ConfinedRead:
    """Read ``base/parts...`` as UTF-8 of at most ``cap`` bytes, or say why not."""
    path = base.joinpath(*parts)
    try:
        fd = _open_below(base, parts)
    except FileNotFoundError:
        return ConfinedRead(path, None)
    except nofollow.ComponentError as problem:
        return ConfinedRead(path, None, _component_problem(path, Path(*parts[: problem.depth]), problem))
    except OSError as error:
        return ConfinedRead(path, None, f"{base} cannot be opened: {error.strerror}")
    try:
        return _read_open_file(fd, path, cap)
    finally:
        os.close(fd)


def _open_below(base: Path, parts: Sequence[str]) -> int:
    directory = nofollow.walk_dirs(base, parts[:-1], create=False)
    try:
        return nofollow.open_at(directory, parts[-1], nofollow.READ_FLAGS, len(parts))
    finally:
        os.close(directory)


def _component_problem(path: Path, component: Path, problem: nofollow.ComponentError) -> str:
    if problem.error.errno == errno.ELOOP or problem.is_link:
        return f"{path} was not read: {component} is a symbolic link, and Shiro does not follow links here."
    if problem.error.errno == errno.ENOTDIR:
        return f"{path} was not read: {component} is not a folder."
    return f"{path} could not be read: {problem.error.strerror}."


def _read_open_file(fd: int, path: Path, cap: int) -> ConfinedRead:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        return ConfinedRead(path, None, f"{path} was not read: it is not a regular file.")
    if info.st_size > cap:
        return ConfinedRead(
            path, None, f"{path} is {info.st_size:,} bytes, over the {cap:,}-byte limit; it was left as is."
        )
    chunks: list[bytes] = []
    remaining = cap + 1
    while remaining > 0:
        chunk = os.read(fd, remaining)
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    data = b"".join(chunks)
    if len(data) > cap:
        return ConfinedRead(path, None, f"{path} grew past the {cap:,}-byte limit while being read.")
    try:
        return ConfinedRead(path, data.decode("utf-8"))
    except UnicodeDecodeError as error:
        return ConfinedRead(path, None, f"{path} is not valid UTF-8 (byte {error.start}); it was left as is.")
