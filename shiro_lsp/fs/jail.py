"""The workspace jail: every path a tool touches resolves inside a workspace root, and stays there.

A path is resolved the way the kernel would follow it: symlinks in any component are followed
(``os.path.realpath``), ``..`` is applied after the link it follows, and for a file that does not
exist yet the nearest existing parent decides. Whatever lands outside every workspace root is
refused with ``Path escapes workspace: <p>``.

Resolving is only the check. The use (:func:`open_regular`, :func:`write_atomic`) then walks the
resolved path down from the root's directory fd one component at a time with ``O_NOFOLLOW``
(``os.open(name, ..., dir_fd=parent)``), so a directory swapped for a symlink between the check
and the use makes the open fail instead of following it out. Hard-linked regular files
(``st_nlink > 1``) are refused: another link to the same bytes can lie outside the workspace.
Writes create their temp file inside the already-opened parent directory and rename it there
(``src_dir_fd``/``dst_dir_fd``), so the rename cannot be redirected either.

The API takes one workspace or a sequence of roots; a relative path is relative to the first root.
A multi-root workspace is :class:`Folders`: the session's root first, every folder with its name.
There a relative path that starts with a folder's name (``api/src/x.py``) is inside that folder,
``./name/...`` stays in the session's root, and ``..`` may not climb out of the folder a relative
path starts in (``../api/x`` is refused with a hint to write ``api/x``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets as _random
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import overload

from shiro_lsp.errors import ToolError
from shiro_lsp.fs import nofollow
from shiro_lsp.fs.secrets import is_private, private_refusal


class Folders(Sequence[Path]):
    """The folders of a multi-root workspace, the session's root first, each with a unique name.

    As a sequence it is the roots (so everything that takes :data:`Roots` takes it); the names
    are how the model addresses the other folders (``name/...``).
    """

    def __init__(self, folders: Sequence[tuple[str, Path]]) -> None:
        if not folders:
            raise ToolError("No workspace folder is open.")
        self.entries: tuple[tuple[str, Path], ...] = tuple((n, Path(p)) for n, p in folders)

    def __len__(self) -> int:
        return len(self.entries)

    @overload
    def __getitem__(self, index: int) -> Path: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Path]: ...
    def __getitem__(self, index: int | slice) -> Path | Sequence[Path]:
        if isinstance(index, slice):
            return [path for _, path in self.entries[index]]
        return self.entries[index][1]

    def __repr__(self) -> str:
        return f"Folders({list(self.entries)!r})"

    def named(self, name: str) -> Path | None:
        for each, path in self.entries:
            if each == name:
                return path
        return None

    def name_of(self, root: Path) -> str:
        """The name of a (real) root; the session's root is named too."""
        for (name, _), real in zip(self.entries, roots_of(self), strict=True):
            if real == root:
                return name
        raise PathEscapes(str(root))


Roots = Path | Sequence[Path]

_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | nofollow.NOFOLLOW | nofollow.CLOEXEC


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


def new_file_mode() -> int:
    """The permission bits a file created by :func:`write_atomic` gets."""
    return 0o666 & ~_UMASK


class PathEscapes(ToolError):
    def __init__(self, path: str) -> None:
        super().__init__(f"Path escapes workspace: {path}")


class PathEscapesFolder(ToolError):
    def __init__(self, path: str, folder: str) -> None:
        super().__init__(
            f"Path escapes workspace folder {folder}: {path}. Another workspace folder is reached by "
            "its name (name/...), never with .."
        )


class PathChanged(ToolError):
    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path} changed while it was being opened (a symlink appeared on the way); "
            "refusing so nothing outside the workspace is touched. Try again."
        )


class NoSuchFile(ToolError):
    """The file (or a directory on its way) does not exist: callers test the type, not the text."""

    def __init__(self, path: str) -> None:
        super().__init__(f"No such file: {path}")


class HardLinked(ToolError):
    def __init__(self, path: str, links: int) -> None:
        super().__init__(
            f"{path} is a hard-linked file ({links} links to the same data); Shiro does not read or "
            "write hard-linked files, because another link can lie outside the workspace. "
            "Make an ordinary copy (for example `cp --remove-destination`) if you need it."
        )


def roots_of(workspace: Roots) -> tuple[Path, ...]:
    """The real paths of the workspace roots (first one first)."""
    given = [workspace] if isinstance(workspace, Path) else list(workspace)
    if not given:
        raise ToolError("No workspace folder is open.")
    return tuple(Path(os.path.realpath(r)) for r in given)


def session_root(workspace: Roots) -> Path:
    """The first root as given (no file system call): where commands and git run."""
    return workspace if isinstance(workspace, Path) else workspace[0]


def workspace_root(workspace: Roots) -> Path:
    """The first (primary) root: the working directory of commands."""
    return roots_of(workspace)[0]


def inside(root: Path, resolved: Path) -> bool:
    return resolved == root or resolved.is_relative_to(root)


def locate(workspace: Roots, path: str) -> tuple[Path, Path]:
    """``(root, resolved)``: the real absolute path of ``path`` and the root that holds it."""
    if "\x00" in path:
        raise ToolError(f"Invalid path (contains a NUL byte): {path!r}")
    roots = roots_of(workspace)
    given = Path(path)
    if given.is_absolute():
        candidate = given
    elif isinstance(workspace, Folders) and len(workspace) > 1:
        start, rest = _folder_of(workspace, roots, path)
        candidate = start / rest
        if os.path.normpath(rest).split(os.sep)[0] == "..":
            climbed = Path(os.path.realpath(candidate))
            if any(inside(root, climbed) for root in roots):
                raise PathEscapesFolder(path, workspace.name_of(start))
            raise PathEscapes(path)
    else:
        candidate = roots[0] / given
    resolved = Path(os.path.realpath(candidate))
    if is_private(resolved):
        raise ToolError(private_refusal(path))
    for root in roots:
        if inside(root, resolved):
            return root, resolved
    raise PathEscapes(path)


def _folder_of(folders: Folders, roots: tuple[Path, ...], path: str) -> tuple[Path, str]:
    """The real root a relative path starts in and the rest of it: ``name/rest`` names a folder."""
    if path.startswith("./"):
        return roots[0], path
    head, _, rest = path.partition("/")
    for (name, _), root in zip(folders.entries, roots, strict=True):
        if name == head:
            return root, rest or "."
    return roots[0], path


def resolve_in_workspace(workspace: Roots, path: str) -> Path:
    """The real absolute path of ``path`` (relative to the workspace, or absolute inside it)."""
    return locate(workspace, path)[1]


def relative_posix(workspace: Roots, resolved: Path) -> str:
    """A resolved path as the model should see it: posix, relative to the root that holds it."""
    roots = roots_of(workspace)
    for index, root in enumerate(roots):
        if inside(root, resolved):
            rel = resolved.relative_to(root)
            shown = str(PurePosixPath(*rel.parts)) if rel.parts else "."
            return folder_relative(workspace, index, shown)
    raise PathEscapes(str(resolved))


def folder_relative(workspace: Roots, index: int, rel: str) -> str:
    """``rel`` (posix, inside root number ``index``) as a path that resolves back to it.

    In a multi-root workspace another folder's paths start with its name, and a path of the
    session's root whose first part is also a folder's name starts with ``./``.
    """
    if not isinstance(workspace, Folders) or len(workspace) < 2:
        return rel
    if index > 0:
        name = workspace.entries[index][0]
        return name if rel == "." else f"{name}/{rel}"
    head = rel.partition("/")[0]
    return f"./{rel}" if workspace.named(head) is not None else rel


# --- use: openat walks ---------------------------------------------------------------------------


def _walk_dirs(root: Path, parts: Sequence[str], shown: str, *, create: bool) -> int:
    """An fd for ``root/parts...``, each component opened with O_NOFOLLOW below its parent."""
    try:
        return nofollow.walk_dirs(root, parts, create=create)
    except nofollow.ComponentError as problem:
        raise _component_error(problem, shown) from problem.error


def _component_error(problem: nofollow.ComponentError, shown: str) -> Exception:
    """A symlink where the check saw none is a swap (refused); anything else is the OS's answer."""
    error = problem.error
    if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK) and (
        problem.is_link or error.errno != errno.ENOTDIR
    ):
        return PathChanged(shown)
    return error


@dataclass(frozen=True)
class Opened:
    """A regular file opened inside the jail. The caller owns ``fd``."""

    fd: int
    root: Path
    resolved: Path
    size: int


def open_regular(workspace: Roots, path: str) -> Opened:
    """Open an existing regular file for reading, refusing links, swaps and special files. The one
    caller is the confined reader (fs/reader.py), which bounds what is read of it."""
    root, resolved = locate(workspace, path)
    parts = resolved.relative_to(root).parts
    if not parts:
        raise ToolError(f"{path} is a directory, not a file. Use list_dir to see what is in it.")
    try:
        parent = _walk_dirs(root, parts[:-1], path, create=False)
    except FileNotFoundError:
        raise NoSuchFile(path) from None
    try:
        try:
            fd = nofollow.open_at(parent, parts[-1], nofollow.READ_FLAGS, len(parts))
        except FileNotFoundError:
            raise NoSuchFile(path) from None
        except nofollow.ComponentError as problem:
            raise _component_error(problem, path) from problem.error
    finally:
        os.close(parent)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(f"{path} is a directory, not a file. Use list_dir to see what is in it.")
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{path} is not a regular file (a device, FIFO or socket); it is not read.")
        if info.st_nlink > 1:
            raise HardLinked(path, info.st_nlink)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return Opened(fd, root, resolved, info.st_size)


def write_atomic(workspace: Roots, path: str, data: bytes, mode: int | None = None) -> Path:
    """Replace (or create) ``path`` with ``data``; parents are created. Returns the resolved path.

    The temp file is made in the opened parent directory and renamed over the target there, so a
    reader sees the old or the new content and a swapped directory cannot redirect the write. An
    existing file keeps its permission bits unless ``mode`` says which to set (a restore).
    """
    return write_atomic_mode(workspace, path, data, mode)[0]


def write_atomic_mode(workspace: Roots, path: str, data: bytes, mode: int | None = None) -> tuple[Path, int]:
    """:func:`write_atomic`, also returning the permission bits the file was given."""
    root, resolved = locate(workspace, path)
    parts = resolved.relative_to(root).parts
    if not parts:
        raise ToolError(f"{path} is a directory; give a file path.")
    parent = _walk_dirs(root, parts[:-1], path, create=True)
    name = parts[-1]
    try:
        kept = _target_mode(parent, name, path)
        mode = kept if mode is None else mode
        temp = f".{name[:100]}.{_random.token_hex(6)}.shiro.tmp"
        fd = os.open(temp, _TEMP_FLAGS, 0o600, dir_fd=parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                os.fchmod(handle.fileno(), mode)
            os.rename(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=parent)
            raise
    finally:
        os.close(parent)
    return resolved, mode


def _parent_of(workspace: Roots, path: str, *, create: bool) -> tuple[int, str, Path]:
    """The opened parent directory of ``path`` (O_NOFOLLOW walk), its last component, the resolved path."""
    root, resolved = locate(workspace, path)
    parts = resolved.relative_to(root).parts
    if not parts:
        raise ToolError(f"{path} is a directory; give a file path.")
    try:
        return _walk_dirs(root, parts[:-1], path, create=create), parts[-1], resolved
    except FileNotFoundError:
        raise NoSuchFile(path) from None


def remove_file(workspace: Roots, path: str) -> bool:
    """Remove a file (or a symbolic link itself) inside the opened parent directory, so a swapped
    directory cannot redirect it. False when it is already gone; a directory is refused."""
    try:
        parent, name, _ = _parent_of(workspace, path, create=False)
    except NoSuchFile:
        return False
    try:
        try:
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(f"{path} is a directory now; it was left alone.")
        os.unlink(name, dir_fd=parent)
        return True
    finally:
        os.close(parent)


def move(workspace: Roots, source: str, target: str) -> None:
    """Rename a regular file to ``target`` (missing directories are made) with both parents opened
    through the jail, so neither side can be redirected. An existing target is refused."""
    src_parent, src_name, _ = _parent_of(workspace, source, create=False)
    try:
        info = os.stat(src_name, dir_fd=src_parent, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{source} is not a regular file; it was not moved.")
        dst_parent, dst_name, _ = _parent_of(workspace, target, create=True)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.stat(dst_name, dir_fd=dst_parent, follow_symlinks=False)
                raise ToolError(f"{target} already exists; nothing was moved.")
            os.rename(src_name, dst_name, src_dir_fd=src_parent, dst_dir_fd=dst_parent)
        finally:
            os.close(dst_parent)
    finally:
        os.close(src_parent)


def _target_mode(parent: int, name: str, shown: str) -> int:
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return new_file_mode()
    if stat.S_ISLNK(info.st_mode):
        raise PathChanged(shown)
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(f"{shown} is a directory; give a file path.")
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{shown} is not a regular file (a device, FIFO or socket); it is not written.")
    if info.st_nlink > 1:
        raise HardLinked(shown, info.st_nlink)
    return stat.S_IMODE(info.st_mode)
