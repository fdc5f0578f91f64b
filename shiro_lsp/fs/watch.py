"""inotify, once: :class:`DirWatch` watches directories; three small policies sit on top of it.

* :class:`TreeWatch`: every directory a walk looked into, so a bash call's checkpoint looks only at
  what the kernel saw change (issue 11);
* :class:`NamedFilesWatch`: a few named files in a few folders (the MCP config and trust files);
* :class:`OwnWritesWatch`: one file that this process also writes, its own renames told apart.

The kernel queues an event in the same system call that changes a file, so once a write has
returned, it is in the queue. Only folders are watched (an atomic rename replaces a file's inode).
When anything is in doubt (the queue overflowed, a watched folder moved or went) the watch is
``broken``: its owner treats that as "anything may have changed" and makes a new one.

Linux only. Elsewhere, and when the kernel is out of inotify instances, each policy's ``create``
gives None and the callers look at the disk every time, as they would without a watch.
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

try:
    import fcntl
    import termios

    from inotify_simple import INotify, flags
except ImportError:  # not Linux: the one fallback, every `create` below gives None
    INotify = None

AVAILABLE = INotify is not None


@dataclass(frozen=True)
class Event:
    wd: int
    mask: int
    cookie: int
    name: str


class DirWatch:
    """One inotify instance on directories (not their subdirectories), read without waiting.

    ``lost``: the event bits that mean events were lost or a watched directory is not what it was
    (a queue overflow always counts). :meth:`events` then gives None, and keeps giving None: the
    owner must close this watch and make a new one.
    """

    def __init__(self, mask: int, lost: int) -> None:
        if INotify is None:
            raise OSError("inotify is not available here")
        self._inotify = INotify(nonblocking=True)
        self._mask = mask
        self._lost = lost | flags.Q_OVERFLOW
        self.broken = False

    def add(self, directory: Path) -> int:
        """Watch a directory; its watch descriptor. OSError: gone, or out of watches."""
        return int(self._inotify.add_watch(directory, self._mask))

    def remove(self, wd: int) -> None:
        with contextlib.suppress(OSError):
            self._inotify.rm_watch(wd)

    def events(self) -> list[Event] | None:
        """What the kernel reported since the last call; None when events were lost. Never waits."""
        if self.broken:
            return None
        try:
            raw = self._inotify.read(timeout=0)
        except OSError:
            self.broken = True
            return None
        if any(event.mask & self._lost for event in raw):
            self.broken = True
            return None
        return [Event(event.wd, event.mask, event.cookie, event.name) for event in raw]

    def quiet(self) -> bool:
        """Whether no event is queued (none is read: :meth:`events` still gives them). Never waits."""
        if self.broken:
            return False
        try:
            queued = fcntl.ioctl(self._inotify.fileno(), termios.FIONREAD, b"\0\0\0\0")
        except OSError:
            return False
        return int(struct.unpack("i", queued)[0]) == 0

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._inotify.close()


@dataclass
class Drained:
    """What the kernel reported since the last drain, as workspace-relative paths."""

    names: set[str] = field(default_factory=set)
    """Entries created, written, removed or renamed (files; a directory's own events are below)."""
    dirs_new: set[str] = field(default_factory=set)
    dirs_gone: set[str] = field(default_factory=set)


class TreeWatch:
    """Watches on every directory the walk looked into, so the next snapshot only has to look at
    what changed (cost grows with the files changed, not with the workspace).

    When anything is in doubt (the queue overflowed, out of watches, a watched directory moved)
    :meth:`drain` returns None and the caller walks the whole workspace again, as it would
    without a watch.
    """

    def __init__(self) -> None:
        if not AVAILABLE:
            raise OSError("inotify is not available here")
        mask = (
            flags.CREATE
            | flags.DELETE
            | flags.MODIFY
            | flags.CLOSE_WRITE
            | flags.ATTRIB
            | flags.MOVED_FROM
            | flags.MOVED_TO
            | flags.MOVE_SELF
            | flags.DONT_FOLLOW
            | flags.ONLYDIR
            | flags.EXCL_UNLINK
        )
        self._watch = DirWatch(mask, lost=flags.MOVE_SELF)
        self._dirs: dict[int, str] = {}

    @property
    def broken(self) -> bool:
        return self._watch.broken

    @staticmethod
    def create() -> TreeWatch | None:
        try:
            return TreeWatch()
        except OSError:  # not Linux, or out of inotify instances: walk every time
            return None

    def add(self, directory: Path, rel: str) -> None:
        try:
            wd = self._watch.add(directory)
        except OSError:  # out of watches, or it is gone already
            self._watch.broken = True
            return
        self._dirs[wd] = rel

    def forget(self, rel: str) -> None:
        prefix = rel + "/"
        for wd in [w for w, r in self._dirs.items() if r == rel or r.startswith(prefix)]:
            del self._dirs[wd]
            self._watch.remove(wd)

    def quiet(self) -> bool:
        """Nothing seen since the last :meth:`drain`, and no event lost. Never waits."""
        return self._watch.quiet()

    def drain(self) -> Drained | None:
        events = self._watch.events()
        if events is None:
            return None
        out = Drained()
        for event in events:
            rel_dir = self._dirs.get(event.wd)
            if rel_dir is None:
                continue
            if event.mask & flags.IGNORED:
                del self._dirs[event.wd]
                continue
            if not event.name:
                continue
            child = f"{rel_dir}/{event.name}" if rel_dir else event.name
            if event.mask & flags.ISDIR:
                if event.mask & (flags.CREATE | flags.MOVED_TO):
                    out.dirs_new.add(child)
                elif event.mask & (flags.DELETE | flags.MOVED_FROM):
                    out.dirs_gone.add(child)
                continue
            out.names.add(child)
        return out

    def close(self) -> None:
        self._watch.close()


class NamedFilesWatch:
    """Watches on folders for a few names in each: did any of them change since last asked?

    A name in ``rewatch`` changing (a folder that came, went or was replaced) also makes the watch
    ``broken``, so the owner watches anew. A file that is a symbolic link is not covered by its
    folder's events: the owner then reads every time.
    """

    def __init__(self, folders: Mapping[Path, frozenset[str]], rewatch: frozenset[str] = frozenset()) -> None:
        if not AVAILABLE:
            raise OSError("inotify is not available here")
        mask = (
            flags.CREATE | flags.DELETE | flags.MODIFY | flags.ATTRIB | flags.MOVED_FROM | flags.MOVED_TO
        ) | (flags.DELETE_SELF | flags.MOVE_SELF | flags.ONLYDIR)
        self._watch = DirWatch(mask, lost=flags.IGNORED | flags.DELETE_SELF | flags.MOVE_SELF)
        self._names: dict[int, frozenset[str]] = {}
        self._rewatch = rewatch
        try:
            for folder, names in folders.items():
                wd = self._watch.add(folder)
                self._names[wd] = self._names.get(wd, frozenset()) | names
        except OSError:
            self.close()
            raise

    @property
    def broken(self) -> bool:
        return self._watch.broken

    def changed(self) -> bool:
        """Whether a watched file may have changed since the last call. Never waits."""
        events = self._watch.events()
        if events is None:
            return True
        changed = False
        for event in events:
            if event.name in self._names.get(event.wd, ()):
                changed = True
                if event.name in self._rewatch:
                    self._watch.broken = True
        return changed

    def close(self) -> None:
        self._watch.close()


class OwnWritesWatch:
    """A watch on a file's folder: did anyone but its owner touch the file since last asked?

    The owner's own writes are told apart by their temp file's name (``expect``): the rename's
    MOVED_FROM names it and its MOVED_TO carries the same cookie. Anything else that names the file
    (a write in place, a rename onto it, a delete) is a change; a lost event or a moved folder
    makes the watch ``broken``, which also counts as a change.
    """

    def __init__(self, path: Path) -> None:
        if not AVAILABLE:
            raise OSError("inotify is not available here")
        mask = (
            flags.CREATE
            | flags.DELETE
            | flags.MODIFY
            | flags.ATTRIB
            | flags.MOVED_FROM
            | flags.MOVED_TO
            | flags.MOVE_SELF
            | flags.DELETE_SELF
            | flags.ONLYDIR
            | flags.EXCL_UNLINK
        )
        lost = flags.IGNORED | flags.MOVE_SELF | flags.DELETE_SELF | flags.UNMOUNT
        self.name = path.name
        self._watch = DirWatch(mask, lost)
        try:
            self._watch.add(path.parent)
        except OSError:
            self._watch.close()
            raise
        self._temps: set[str] = set()
        self._cookies: set[int] = set()

    @property
    def broken(self) -> bool:
        return self._watch.broken

    def expect(self, temp_name: str) -> None:
        self._temps.add(temp_name)

    def changed(self) -> bool:
        events = self._watch.events()
        if events is None:
            return True
        changed = False
        for event in events:
            if event.mask & flags.MOVED_FROM and event.name in self._temps:
                self._temps.discard(event.name)
                self._cookies.add(event.cookie)
            elif event.name != self.name:
                continue  # another file in the folder: a temp file, a lock, another store
            elif event.mask & flags.MOVED_TO and event.cookie in self._cookies:
                self._cookies.discard(event.cookie)
            else:
                changed = True
        return changed

    def close(self) -> None:
        self._watch.close()
