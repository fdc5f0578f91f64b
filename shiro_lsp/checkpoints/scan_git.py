"""Git mode of the bash checkpoint: what ``git status`` lists, kept current between two looks by an
inotify watcher, so a look asks git only about the paths the kernel saw change (issue 11).

A checkpoint needs, for every file a command may change, its bytes before the command. In a git
repository a clean file's bytes are in the index, so only what ``git status`` lists (changed,
deleted or untracked, not ignored) is recorded. The first look runs a whole ``git status``; the
watcher then has a watch on every directory of the workspace except ``.git``, nested
repositories and the directories git ignores as a whole. A later look drains the watcher and runs
``git status`` on the paths it reported only. The listing so kept is the one a whole status would
give, as long as nothing outside the worktree changed what git compares against or ignores; so a
look runs a whole ``git status`` again (today's way) when:

- the index changed (a ``git add``, ``commit``, ``checkout``, ``stash`` or ``reset``, by the
  command or anyone else; the watch stays);
- an ignore file changed: a ``.gitignore`` in the workspace, ``.git/info/exclude``, the git
  configuration or the global excludes file (the watches are set up again, as the directories git
  ignores may differ);
- the watcher lost events (its queue overflowed, it ran out of watches, a watched directory was
  moved), or more paths changed than fit one command line.

Which directories git ignores is first guessed with the workspace's own ignore files (so the
watch is in place before git is asked) and then checked against git's ``--ignored=matching``
answer: a directory the guess skipped that git does not ignore as a whole (it holds tracked
files, say) is watched too, and git is asked about it again at the next look.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from shiro_lsp.fs.git import run_git
from shiro_lsp.fs.ignore import IgnoreRules, is_ignored_by
from shiro_lsp.fs.secrets import is_secret_file
from shiro_lsp.fs.watch import TreeWatch

GIT_TIMEOUT_S = 60
MAX_PATHSPECS = 2000
"""More changed paths than this (or than :data:`MAX_PATHSPEC_CHARS`): one whole ``git status``."""
MAX_PATHSPEC_CHARS = 100_000
IGNORE_FILE = ".gitignore"
MAX_IGNORED_SECRETS = 64
"""At most this many ignored secrets files are noted (see :attr:`Status.ignored_secrets`)."""
Stat = tuple[int, int, int, int] | None
"""(inode, mtime_ns, ctime_ns, size) of a file git reads, or None when it is not there."""


@dataclass(frozen=True)
class GitEntry:
    index_sha: str | None
    """The index's object for a tracked path (None: untracked)."""
    index_mode: int
    deleted: bool
    """Gone from the worktree."""


@dataclass
class Status:
    entries: dict[str, GitEntry]
    """Workspace-relative path → what git lists for it (not clean, or untracked)."""
    ignored_dirs: set[str] = field(default_factory=set)
    """Directories git ignores as a whole (asked with ``--ignored=matching``), without the slash."""
    ignored_secrets: set[str] = field(default_factory=set)
    """Secrets files git ignores (a ``.env``): the scan never records them, so a command that
    changes one without naming it is caught only by looking at these (at most
    :data:`MAX_IGNORED_SECRETS`)."""


@dataclass
class GitLook:
    listing: dict[str, GitEntry]
    """Everything git lists under the workspace now (the watch keeps it; copy it to keep it)."""
    touched: set[str] | None
    """The paths that may have changed since the last look; None: a whole status was run."""
    ignored_secrets: set[str] = field(default_factory=set)
    """The secrets files git ignores, as of this look (:attr:`Status.ignored_secrets`)."""


def git_out(root: Path, *args: str, stdin: bytes | None = None) -> bytes | None:
    """stdout of ``git <args>`` in ``root`` (run the one safe way); None when it fails (the caller
    falls back to walking)."""
    done = run_git(root, args, stdin=stdin, timeout=GIT_TIMEOUT_S)
    return done.out if done.code == 0 else None


def parse_status(out: bytes, prefix: str) -> Status:
    """``git status --porcelain=v2 -z`` output; paths made relative to the workspace (``prefix``:
    its path inside the repository), entries outside it dropped."""
    status = Status({})
    fields = out.split(b"\0")
    i = 0
    while i < len(fields):
        line = fields[i].decode("utf-8", "surrogateescape")
        i += 1
        if line.startswith("? "):
            status.entries[line[2:]] = GitEntry(None, 0, False)
        elif line.startswith("! "):
            if line.endswith("/"):
                status.ignored_dirs.add(line[2:-1])
            elif len(status.ignored_secrets) < MAX_IGNORED_SECRETS and is_secret_file(line[2:]):
                status.ignored_secrets.add(line[2:])
        elif line.startswith(("1 ", "2 ", "u ")):
            parts = line.split(" ", 10 if line[0] == "u" else 8 if line[0] == "1" else 9)
            xy, sub = parts[1], parts[2]
            if line[0] == "2":
                i += 1  # the original path of a staged rename
            if not sub.startswith("N"):
                continue  # a submodule: its own repository
            if line[0] == "u":
                path, mode, sha = parts[10], parts[6], parts[9]
            else:
                path, mode, sha = parts[-1], parts[4], parts[7]
            status.entries[path] = GitEntry(sha, int(mode, 8) & 0o777, xy[1] == "D")
    if prefix:  # porcelain paths are relative to the repository's top level
        cut = len(prefix)
        status.entries = {k[cut:]: v for k, v in status.entries.items() if k.startswith(prefix)}
        status.ignored_dirs = {k[cut:] for k in status.ignored_dirs if k.startswith(prefix)}
        status.ignored_secrets = {k[cut:] for k in status.ignored_secrets if k.startswith(prefix)}
    return status


def _stat(path: Path) -> Stat:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)


def _within(path: str, specs: set[str]) -> bool:
    """Whether ``path`` is one of ``specs`` or lies under one of them."""
    path = path.rstrip("/")
    while path:
        if path in specs:
            return True
        path = path.rpartition("/")[0]
    return False


class GitWatch:
    """The listing of a whole ``git status``, kept current by a watcher (see the module's text)."""

    def __init__(
        self,
        root: Path,
        status: Callable[[list[str] | None], Status | None],
        rules: Callable[[Path, str, set[str]], list[IgnoreRules]],
        exclude: Path | None,
    ) -> None:
        self.root = root
        self._status = status
        """A ``git status --ignored=matching`` of these workspace-relative paths (None: all)."""
        self._rules = rules
        self.exclude = exclude
        self.watcher: TreeWatch | None = None
        self.listing: dict[str, GitEntry] | None = None
        self._stacks: dict[str, list[IgnoreRules]] = {}
        """The ignore rules in force in each watched directory."""
        self._skipped: set[str] = set()
        """Directories not watched because the workspace's ignore files ignore them."""
        self._pending: set[str] = set()
        """Directories watched after git was last asked about them: asked again at the next look."""
        self._index: Stat = None
        self._ignores: tuple[Stat, ...] = ()
        self._index_path: Path | None = None
        self._ignore_paths: list[Path] = []
        self.secrets: set[str] = set()
        """The secrets files git ignores, kept current like the listing."""
        self._unwatchable = False
        """No inotify here, or not enough watches for this tree: every look is a whole status."""

    # -- what git reads besides the worktree

    def _locate(self) -> None:
        if self._index_path is not None:
            return
        out = git_out(
            self.root,
            "rev-parse",
            "--git-path",
            "index",
            "--git-path",
            "info/exclude",
            "--git-path",
            "config",
        )
        configured = git_out(self.root, "config", "--path", "--get", "core.excludesFile")
        lines = (out or b"").decode("utf-8", "surrogateescape").splitlines()
        paths = [self.root / line for line in lines]
        self._index_path = paths[0] if paths else self.root / ".git" / "index"
        home = Path.home()
        xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
        self._ignore_paths = [
            *paths[1:],
            home / ".gitconfig",
            xdg / "git" / "config",
            xdg / "git" / "ignore",
        ]
        if configured and configured.strip():
            self._ignore_paths.append(Path(configured.decode("utf-8", "surrogateescape").strip()))

    def _ignore_signature(self) -> tuple[Stat, ...]:
        return tuple(_stat(p) for p in self._ignore_paths)

    def _index_signature(self) -> Stat:
        return _stat(self._index_path) if self._index_path is not None else None

    # -- looking

    def look(self) -> GitLook | None:
        """The listing now and what may have changed since the last look; None when git fails."""
        if self.watcher is not None and self.listing is not None:
            quick = self._quick()
            if quick is not None:
                return quick
        return self._whole()

    def quiet(self) -> bool:
        """Whether :meth:`look` would find nothing new: the watcher saw nothing, and git's index and
        ignore files are as they were. Never waits (a few stats)."""
        return (
            self.watcher is not None
            and self.listing is not None
            and not self._pending
            and self.watcher.quiet()
            and self._index_signature() == self._index
            and self._ignore_signature() == self._ignores
        )

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.close()
        self.watcher, self.listing = None, None

    def _quick(self) -> GitLook | None:
        watcher, listing = self.watcher, self.listing
        assert watcher is not None and listing is not None
        drained = watcher.drain()
        if (
            drained is None
            or any(name.rpartition("/")[2] == IGNORE_FILE for name in drained.names)
            or self._ignore_signature() != self._ignores
        ):
            self.close()  # events lost, or other ignore rules: watch again from scratch
            return None
        for gone in drained.dirs_gone:
            watcher.forget(gone)
            for rel in [r for r in self._stacks if _within(r, {gone})]:
                del self._stacks[rel]
            self._skipped = {r for r in self._skipped if not _within(r, {gone})}
        for new in sorted(drained.dirs_new, key=len):
            parent = new.rpartition("/")[0]
            if new not in self._stacks and parent in self._stacks:
                self._watch_dir(new, self._stacks[parent])
        if watcher.broken:
            self.close()
            return None
        if self._index_signature() != self._index:
            return None  # the index changed: a whole status, the watch stays
        dirs = drained.dirs_new | drained.dirs_gone | self._pending
        specs = drained.names | dirs
        if not specs:
            return GitLook(listing, set(), set(self.secrets))
        if len(specs) > MAX_PATHSPECS or sum(len(s) for s in specs) > MAX_PATHSPEC_CHARS:
            return None
        self._pending = set()
        status = self._status(sorted(specs))
        if status is None:
            return None
        touched = set(drained.names) | set(status.entries)
        for rel in [r for r in listing if _within(r, specs)]:
            del listing[rel]
            touched.add(rel)
        listing.update(status.entries)
        kept = {r for r in self.secrets if not _within(r, specs)}
        self.secrets = set(sorted(kept | status.ignored_secrets)[:MAX_IGNORED_SECRETS])
        self._check_skipped(status.ignored_dirs, specs)
        return GitLook(listing, touched, set(self.secrets))

    def _whole(self) -> GitLook | None:
        if self.watcher is None:
            self._watch_all()
        self._index = self._index_signature()
        self._ignores = self._ignore_signature()
        self._pending = set()
        status = self._status(None)
        if status is None:
            self.close()
            return None
        self.secrets = set(status.ignored_secrets)
        if self.watcher is None:
            return GitLook(status.entries, None, set(self.secrets))
        self.listing = status.entries
        self._check_skipped(status.ignored_dirs, None)
        return GitLook(self.listing, None, set(self.secrets))

    # -- the watches

    def _watch_all(self) -> None:
        if self._unwatchable:
            return
        self._locate()
        self.watcher = TreeWatch.create()
        self._stacks, self._skipped = {}, set()
        if self.watcher is None:
            self._unwatchable = True
            return
        self._watch_dir("", [])
        if self.watcher.broken:
            self._unwatchable = True
            self.close()

    def _watch_dir(self, top_rel: str, top_stack: list[IgnoreRules]) -> None:
        """Watch ``top_rel`` and the directories below it (not ``.git``, nested repositories, the
        state root, or what the ignore files ignore: those are noted in ``_skipped``)."""
        watcher = self.watcher
        assert watcher is not None
        pending: list[tuple[str, list[IgnoreRules]]] = [(top_rel, top_stack)]
        while pending:
            rel, stack = pending.pop()
            directory = self.root / rel if rel else self.root
            watcher.add(directory, rel)  # before listing it: nothing made meanwhile is missed
            try:
                with os.scandir(directory) as scan:
                    listed = list(scan)
            except OSError:
                continue
            names = {e.name for e in listed}
            entries = []
            for e in listed:
                with contextlib.suppress(OSError):
                    if e.is_dir(follow_symlinks=False):
                        entries.append(e)
            stack = stack + self._rules(directory, rel, names)
            self._stacks[rel] = stack
            prefix = rel + "/" if rel else ""
            for entry in entries:
                child = prefix + entry.name
                if entry.name == ".git" or (self.exclude is not None and Path(entry.path) == self.exclude):
                    continue
                if os.path.lexists(os.path.join(entry.path, ".git")):
                    continue  # a nested repository: git lists it as one entry, never its files
                if stack and is_ignored_by(child, True, stack):
                    self._skipped.add(child)
                    continue
                pending.append((child, stack))

    def _check_skipped(self, ignored: set[str], specs: set[str] | None) -> None:
        """Watch the skipped directories (under ``specs``; None: all) that git does not ignore as a
        whole, and ask git about them at the next look (they were watched after it answered)."""
        if self.watcher is None:
            return
        work = [d for d in self._skipped if specs is None or _within(d, specs)]
        while work:
            rel = work.pop()
            if _within(rel, ignored):
                continue
            self._skipped.discard(rel)
            before = set(self._skipped)
            self._watch_dir(rel, self._stacks.get(rel.rpartition("/")[0], []))
            self._pending.add(rel)
            work.extend(self._skipped - before)
        if self.watcher.broken:
            self.close()
