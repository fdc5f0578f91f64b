"""The one confined reader: every workspace file Shiro reads on the model's behalf, to build what the
model sees (the workspace view, instructions, the Python check, raised-at), or to keep it (checkpoints)
is read here, and nowhere else.

- **Inside the workspace folders.** The path resolves as the jail resolves it (:func:`jail.locate`: a
  link is followed only while it stays inside a folder; the state root is refused), and the file is
  opened one component at a time with ``O_NOFOLLOW``, so a link swapped in on the way is refused.
- **Regular files only.** The open is ``O_NONBLOCK`` and ``fstat`` decides before a byte is read: a
  FIFO, a device or a socket is refused, never waited on. A hard-linked file is refused (another
  link to its bytes can lie outside).
- **Bounded.** At most ``limit`` bytes are read; a caller may lower the cap, never raise it past
  :data:`HARD_MAX_BYTES`. ``whole=True`` refuses a larger file instead of cutting it.
- **Secrets files** are refused unless the caller keeps the bytes from the model (``secrets=True``:
  checkpoints, which keep them owner-only in the state root so a restore can put them back).

:func:`read_confined` is the stricter form for a file Shiro itself keeps below a folder and also
writes (the project notes in the workspace, legacy task notes in the state root): no link at all on
the way, and the refusal said in words rather than raised.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from shiro_lsp.errors import ToolError
from shiro_lsp.fs import jail, nofollow
from shiro_lsp.fs.secrets import is_secret_path, refusal

HARD_MAX_BYTES = 64 * 1024 * 1024
"""No read of one workspace file holds more than this, whoever asks."""
SNIFF_BYTES = 8192
"""How much of a file is looked at to tell text from binary (a NUL byte)."""


class TooLarge(ToolError):
    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(
            f"{path} is {size:,} bytes, over the {limit:,}-byte limit of what Shiro reads whole; "
            "it was not read. Use bash (head, sed -n) for a part of it."
        )
        self.size = size


class NotText(ToolError):
    def __init__(self, path: str) -> None:
        super().__init__(f"{path} is a binary file, not text. Use bash if you need to inspect it.")


@dataclass(frozen=True)
class Opened:
    """A workspace file opened by :func:`opening`: where it is and what ``fstat`` said of it."""

    root: Path
    resolved: Path
    size: int
    mode: int
    limit: int

    @property
    def cut(self) -> bool:
        """Whether the file is longer than what may be read of it."""
        return self.size > self.limit


@dataclass(frozen=True)
class Read:
    """The bytes of a workspace file (all of them, unless ``cut``) and where it is."""

    data: bytes
    opened: Opened

    @property
    def cut(self) -> bool:
        return self.opened.cut


def capped(limit: int) -> int:
    """``limit`` no higher than :data:`HARD_MAX_BYTES` (and not negative)."""
    return max(0, min(limit, HARD_MAX_BYTES))


def refuse_secrets(workspace: jail.Roots, path: str) -> None:
    """A secrets file (by the path given or the one it resolves to) is never read for the model."""
    root, resolved = jail.locate(workspace, path)
    if is_secret_path(path, jail.relative_posix(root, resolved)):
        raise ToolError(refusal(path))


class _Capped(io.RawIOBase):
    """The first ``limit`` bytes of an open file, as a stream."""

    def __init__(self, fd: int, limit: int) -> None:
        self._fd = fd
        self._left = limit

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self._left <= 0:
            return 0
        view = memoryview(buffer).cast("B")[: self._left]
        count = os.readv(self._fd, [view])
        self._left -= count
        return count

    def close(self) -> None:
        if not self.closed:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        super().close()


@contextlib.contextmanager
def opening(
    workspace: jail.Roots, path: str, *, limit: int = HARD_MAX_BYTES, secrets: bool = False
) -> Iterator[tuple[Opened, io.BufferedReader[_Capped]]]:
    """A workspace file opened for reading, as a stream of at most ``limit`` bytes (closed on exit)."""
    if not secrets:
        refuse_secrets(workspace, path)
    found = jail.open_regular(workspace, path)
    try:
        mode = stat.S_IMODE(os.fstat(found.fd).st_mode)
        raw = _Capped(found.fd, capped(limit))
    except BaseException:
        os.close(found.fd)
        raise
    opened = Opened(found.root, found.resolved, found.size, mode, capped(limit))
    with io.BufferedReader(raw) as stream:
        yield opened, stream


def read_bytes(
    workspace: jail.Roots,
    path: str,
    *,
    limit: int = HARD_MAX_BYTES,
    whole: bool = True,
    secrets: bool = False,
) -> Read:
    """The file's bytes: all of them (``whole``: a file over ``limit`` is refused with
    :class:`TooLarge`), or at most its first ``limit`` bytes."""
    with opening(workspace, path, limit=limit, secrets=secrets) as (opened, stream):
        if whole and opened.cut:
            raise TooLarge(path, opened.size, opened.limit)
        data = stream.read()
    if whole and len(data) >= opened.limit and opened.size < len(data):
        raise TooLarge(path, len(data), opened.limit)  # it grew while read
    return Read(data, opened)


def is_binary(data: bytes) -> bool:
    return b"\x00" in data[:SNIFF_BYTES]


@contextlib.contextmanager
def open_text(
    workspace: jail.Roots, path: str, *, limit: int = HARD_MAX_BYTES, newline: str | None = None
) -> Iterator[IO[str]]:
    """A text file for the model to read (secrets files and binaries refused), as UTF-8 text with
    bad bytes replaced, of at most ``limit`` bytes."""
    with opening(workspace, path, limit=limit) as (opened, stream):
        if is_binary(os.pread(stream.fileno(), min(SNIFF_BYTES, opened.limit), 0)):
            raise NotText(path)
        with io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline=newline) as text:
            yield text


def read_text(
    workspace: jail.Roots, path: str, *, limit: int = HARD_MAX_BYTES, newline: str | None = None
) -> str:
    """The first ``limit`` bytes of a text file, decoded (see :func:`open_text`)."""
    with open_text(workspace, path, limit=limit, newline=newline) as text:
        return text.read()


# --- a file Shiro keeps below a folder: no link at all ---------------------------------------------


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
