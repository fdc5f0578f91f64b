"""Open a path below a base folder one component at a time, never following a symbolic link.

Every component below ``base`` is opened relative to its parent's fd with ``O_NOFOLLOW``, so a
link anywhere on the way (or one swapped in after a check) is refused rather than followed. The
callers say what a refusal means to them: the workspace jail (fs/jail.py) and the confined reader's
no-link reads (fs/reader.py ``read_confined``).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Sequence
from pathlib import Path

CLOEXEC = getattr(os, "O_CLOEXEC", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NOFOLLOW | CLOEXEC
READ_FLAGS = os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | CLOEXEC
"""A file to read: a FIFO does not block the open (check it with ``fstat`` before reading)."""


class ComponentError(Exception):
    """A component below the base could not be opened (a missing one is a plain FileNotFoundError).

    ``error`` is the OS's answer, ``depth`` how many components down it is (1: the first below the
    base), ``is_link`` whether it is a symbolic link now.
    """

    def __init__(self, error: OSError, depth: int, is_link: bool) -> None:
        super().__init__(str(error))
        self.error = error
        self.depth = depth
        self.is_link = is_link


def open_at(parent: int, name: str, flags: int, depth: int, mode: int = 0o777) -> int:
    """``os.open(name, flags, dir_fd=parent)``; FileNotFoundError as is, any other refusal as ComponentError."""
    try:
        return os.open(name, flags, mode, dir_fd=parent)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise ComponentError(error, depth, _is_link(parent, name)) from error


def walk_dirs(base: Path, parts: Sequence[str], *, create: bool) -> int:
    """An fd for the folder ``base/parts...`` (the caller closes it); ``create`` makes missing folders.

    Opening ``base`` itself follows links and fails with a plain OSError.
    """
    fd = os.open(base, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | CLOEXEC)
    try:
        for depth, part in enumerate(parts, start=1):
            try:
                child = open_at(fd, part, DIR_FLAGS, depth)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                child = open_at(fd, part, DIR_FLAGS, depth)
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


def _is_link(parent: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False
