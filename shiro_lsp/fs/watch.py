"""inotify watches on the workspace's directories, so a bash call's checkpoint looks only at what
the kernel saw change (issue 11). Linux only: elsewhere :meth:`Watcher.create` gives None and the
callers look at everything, as they would without it."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

try:
    from inotify_simple import INotify
    from inotify_simple import flags as _in
except ImportError:  # not Linux: the workspace is walked before and after every command
    INotify = None


@dataclass
class Drained:
    """What the kernel reported since the last drain, as workspace-relative paths."""

    names: set[str] = field(default_factory=set)
    """Entries created, written, removed or renamed (files; a directory's own events are below)."""
    dirs_new: set[str] = field(default_factory=set)
    dirs_gone: set[str] = field(default_factory=set)


class Watcher:
    """inotify watches on every directory the walk looked into, so the next snapshot only has to
    look at what changed (cost grows with the files changed, not with the workspace).

    The kernel queues an event in the same system call that changes the file, so once a command
    has returned, everything it did is in the queue. When anything is in doubt (the queue
    overflowed, out of watches, a watched directory moved) :meth:`drain` returns None and the
    caller walks the whole workspace again, as it would without a watcher.
    """

    def __init__(self) -> None:
        if INotify is None:
            raise OSError("inotify is not available here")
        self._inotify = INotify(nonblocking=True)
        self._dirs: dict[int, str] = {}
        self.broken = False

    @staticmethod
    def create() -> Watcher | None:
        try:
            return Watcher()
        except OSError:  # not Linux, or out of inotify instances: walk every time
            return None

    def add(self, directory: Path, rel: str) -> None:
        mask = (
            _in.CREATE
            | _in.DELETE
            | _in.MODIFY
            | _in.CLOSE_WRITE
            | _in.ATTRIB
            | _in.MOVED_FROM
            | _in.MOVED_TO
            | _in.MOVE_SELF
            | _in.DONT_FOLLOW
            | _in.ONLYDIR
            | _in.EXCL_UNLINK
        )
        try:
            wd = self._inotify.add_watch(directory, mask)
        except OSError:  # out of watches, or it is gone already
            self.broken = True
            return
        self._dirs[wd] = rel

    def forget(self, rel: str) -> None:
        prefix = rel + "/"
        for wd in [w for w, r in self._dirs.items() if r == rel or r.startswith(prefix)]:
            del self._dirs[wd]
            with contextlib.suppress(OSError):
                self._inotify.rm_watch(wd)

    def drain(self) -> Drained | None:
        if self.broken:
            return None
        try:
            events = self._inotify.read(timeout=0)
        except OSError:
            return None
        out = Drained()
        for event in events:
            if event.mask & (_in.Q_OVERFLOW | _in.MOVE_SELF):
                return None  # events were lost, or a watched directory now has another name
            rel_dir = self._dirs.get(event.wd)
            if rel_dir is None:
                continue
            if event.mask & _in.IGNORED:
                del self._dirs[event.wd]
                continue
            if not event.name:
                continue
            child = f"{rel_dir}/{event.name}" if rel_dir else event.name
            if event.mask & _in.ISDIR:
                if event.mask & (_in.CREATE | _in.MOVED_TO):
                    out.dirs_new.add(child)
                elif event.mask & (_in.DELETE | _in.MOVED_FROM):
                    out.dirs_gone.add(child)
                continue
            out.names.add(child)
        return out

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._inotify.close()
