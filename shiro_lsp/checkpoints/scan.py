"""The workspace as a stat index, so a turn that ran ``bash`` knows what the command changed.

Before a command: walk the workspace (``.gitignore``/``.shiroignore`` honoured, heavy trees like
``node_modules`` and ``.venv`` skipped), ``lstat`` every file, and make sure the bytes of each
one are in the blob store. A stat cache (size, mtime_ns, inode, mode → sha) kept in the state
root means a file unchanged since the last snapshot costs one ``lstat``: only new or changed
files are read and hashed. After the command: walk and ``lstat`` again and compare; only the
files whose stat differs are read. So the cost grows with the files changed, not with the size
of the workspace (beyond the walk itself, which ``git status`` does too).

What it cannot cover is said, not hidden: files over :data:`MAX_FILE_BYTES`, a snapshot over
:data:`MAX_TOTAL_NEW_BYTES` of new content, more than :data:`MAX_FILES` files, and the trees it
never looks into.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from shiro_lsp.checkpoints.scan_git import (
    MAX_IGNORED_SECRETS,
    GitEntry,
    GitLook,
    GitWatch,
    Status,
    git_out,
    parse_status,
)
from shiro_lsp.errors import ToolError
from shiro_lsp.fs.ignore import IgnoreRules, is_ignored_by, rules_in
from shiro_lsp.fs.reader import HARD_MAX_BYTES, read_bytes
from shiro_lsp.fs.secrets import is_secret_file
from shiro_lsp.fs.watch import Drained, TreeWatch
from shiro_lsp.state.atomic import write_bytes_atomic
from shiro_lsp.state.checkpoints import UNRECORDED_NOTE, BlobStore, FileState, sha256

SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".gradle",
        ".next",
    }
)
MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_TOTAL_NEW_BYTES = 256 * 1024 * 1024
MAX_FILES = 100_000
MAX_SECRET_BYTES = 1024 * 1024
"""An ignored secrets file larger than this is not kept before a command (see :attr:`Snapshot.ignored_secrets`)."""
RACY_NS = 2_000_000_000
"""A file modified this close to a snapshot may change again within the same mtime tick: re-read it."""
CLOCK_SLACK_NS = 50_000_000
"""How far a file's ctime may lag the clock the snapshot read (the kernel stamps files coarsely)."""
UNSEEN = "it was not watched when the command started (ignored, or past the scan's limits)"
RULES_CHANGED = "the command changed an ignore file, so whether it existed before is not known"
PAST_LIMIT = f"the workspace has over {MAX_FILES} files, so whether it existed before is not known"

Key = tuple[int, int, int, int]
"""(size, mtime_ns, inode, mode)"""
RULE_FILES = frozenset({".gitignore", ".shiroignore"})
LINK_NOTE = "a symbolic link the command changed (links are not recorded, so a restore leaves it)"


V = TypeVar("V")


class _Gone:
    """Not in the dict when it was frozen."""


_GONE = _Gone()


class Frozen(Mapping[str, V], Generic[V]):
    """A dict as it was when frozen, while its owner goes on changing it in place: the owner calls
    :meth:`changing` before each change, which keeps the old value here (copy on write). So a
    snapshot of a 10,000-file index costs nothing until files change."""

    __slots__ = ("__weakref__", "_saved", "live")

    def __init__(self, live: dict[str, V]) -> None:
        self.live = live
        self._saved: dict[str, V | _Gone] = {}

    def changing(self, key: str) -> None:
        if key not in self._saved:
            self._saved[key] = self.live.get(key, _GONE)

    def __getitem__(self, key: str) -> V:
        if key in self._saved:
            value = self._saved[key]
            if isinstance(value, _Gone):
                raise KeyError(key)
            return value
        return self.live[key]

    def __contains__(self, key: object) -> bool:
        if key in self._saved:
            return not isinstance(self._saved[key], _Gone)
        return key in self.live

    def __iter__(self) -> Iterator[str]:
        saved, live = self._saved, self.live
        for key in live:
            if key not in saved or not isinstance(saved[key], _Gone):
                yield key
        for key, value in saved.items():
            if key not in live and not isinstance(value, _Gone):
                yield key

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass
class Snapshot:
    started_ns: int
    files: Mapping[str, Key]
    """Walk mode: every file. Git mode: the files ``git status`` listed (changed or untracked)."""
    shas: Mapping[str, str | None]
    """None: not recorded (too large, over the budget, or unreadable)."""
    not_covered: list[str] = field(default_factory=list)
    skipped_trees: list[str] = field(default_factory=list)
    truncated: bool = False
    git: dict[str, GitEntry] | None = None
    """Git mode: what ``git status`` listed before the command."""
    links: dict[str, str] = field(default_factory=dict)
    """Walk mode: symbolic links (path → target). They are not recorded, only compared."""
    ignored_secrets: tuple[str, ...] = ()
    """Secrets files the scan does not watch because they are ignored (a git-ignored ``.env``),
    regular and small: a command may overwrite one without naming it, so the checkpoint keeps
    their bytes before it runs and compares them after."""
    look: int = 0
    """Which look of the workspace this is: the next one tells what changed since only if it is
    the one right after (else everything is compared)."""


class NotRecorded(LookupError):
    """The bytes a file had before the command cannot be had, and why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class ScanChange:
    path: str
    before: FileState | None
    after: FileState | None
    unrecorded: str | None = None
    """The file existed before the command but its bytes were not recorded, and why (``before``
    is then None): not "added", and nothing a restore can put back."""


class WorkspaceScanner:
    def __init__(
        self,
        root: Path,
        blobs: BlobStore,
        cache_path: Path,
        *,
        exclude: Path | None = None,
        use_git: bool = True,
        watch: bool = True,
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self.use_git = use_git
        self.watch = watch
        """Keep an inotify watcher between snapshots (walk mode); False: walk every time."""
        self._git: bool | None = None
        self._top: Path | None = None
        self._prefix = ""
        """Git mode: the workspace's path inside the repository (``sub/dir/``, or empty)."""
        self.blobs = blobs
        self.cache_path = cache_path
        self.exclude = Path(os.path.realpath(exclude)) if exclude else None
        self._cache: dict[str, list[Any]] | None = None
        self._rules: dict[str, tuple[tuple[int, int], list[IgnoreRules]]] = {}
        self._watcher: TreeWatch | None = None
        self._index: dict[str, Key] | None = None
        """Walk mode with a watcher: every file as of the last look, kept current by its events."""
        self._links: dict[str, str] = {}
        self._ignored_secrets: set[str] = set()
        """Walk mode: the ignored secrets files met in the walked directories."""
        self._stacks: dict[str, list[IgnoreRules]] = {}
        """The ignore rules in force in each walked directory."""
        self._skipped: list[str] = []
        self._truncated = False
        self._notes: dict[str, str] = {}
        """Files not recorded because of their size, and why (said in every checkpoint)."""
        self._shas: dict[str, str | None] = {}
        """The shas of the last snapshot, for the files no event has touched since."""
        self._unsettled: set[str] = set()
        """Files a command changed: the next snapshot looks at them again."""
        self._resync = False
        """A whole walk replaced the index after a snapshot: the next one looks at every file."""
        self._views: list[weakref.ref[Frozen[Any]]] = []
        """The frozen views of the index and the shas that snapshots hold."""
        self._looks = 0
        self._gitwatch: GitWatch | None = None
        self._lock = threading.Lock()
        """One snapshot or comparison at a time (they share the index and the watcher)."""

    # -- the stat cache

    def _load_cache(self) -> dict[str, list[Any]]:
        if self._cache is None:
            try:
                raw = json.loads(self.cache_path.read_text(encoding="utf-8"))
                files = raw.get("files", {}) if raw.get("root") == str(self.root) else {}
                self._cache = {
                    str(k): list(v) for k, v in files.items() if isinstance(v, list) and len(v) == 5
                }
            except (OSError, ValueError, AttributeError):
                self._cache = {}
        return self._cache

    def _save_cache(self) -> None:
        if self._cache is not None:
            data = json.dumps({"root": str(self.root), "files": self._cache}, separators=(",", ":"))
            write_bytes_atomic(self.cache_path, data.encode("utf-8"), sync=False)

    # -- walking

    def _ignore_rules(self, directory: Path, rel: str, names: set[str]) -> list[IgnoreRules]:
        sources: list[str] = [n for n in (".gitignore", ".shiroignore") if n in names]
        if rel == "" and (directory / ".git" / "info" / "exclude").is_file():
            sources.append(".git/info/exclude")
        if not sources:
            return []
        signature = (0, 0)
        for name in sources:
            with contextlib.suppress(OSError):
                st = os.stat(directory / name)
                signature = (signature[0] ^ st.st_mtime_ns, signature[1] + st.st_size)
        cached = self._rules.get(rel)
        if cached is not None and cached[0] == signature:
            return cached[1]
        rules = rules_in(directory, rel, with_exclude=rel == "")
        self._rules[rel] = (signature, rules)
        return rules

    def walk(self) -> tuple[dict[str, Key], list[str], bool]:
        """Every regular file not ignored: rel path → stat key; plus the skipped trees; truncated?"""
        files: dict[str, Key] = {}
        skipped: list[str] = []
        truncated = self._walk_from(self.root, "", [], files, skipped, {}, None)
        return files, sorted(skipped), truncated

    def _walk_from(
        self,
        top: Path,
        top_rel: str,
        top_stack: list[IgnoreRules],
        files: dict[str, Key],
        skipped: list[str],
        links: dict[str, str],
        watcher: TreeWatch | None,
    ) -> bool:
        pending: list[tuple[Path, str, list[IgnoreRules]]] = [(top, top_rel, top_stack)]
        truncated = False
        while pending:
            directory, rel, stack = pending.pop()
            if watcher is not None:
                watcher.add(directory, rel)  # before listing it: nothing made meanwhile is missed
            try:
                with os.scandir(directory) as scan:
                    entries = list(scan)
            except OSError:
                continue
            names = {e.name for e in entries}
            stack = stack + self._ignore_rules(directory, rel, names)
            self._stacks[rel] = stack
            prefix = rel + "/" if rel else ""
            for entry in entries:
                child = prefix + entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name in SKIPPED_DIRS:
                            skipped.append(child + "/")
                            continue
                        if self.exclude is not None and Path(entry.path) == self.exclude:
                            continue
                        if stack and is_ignored_by(child, True, stack):
                            continue
                        pending.append((Path(entry.path), child, stack))
                    elif entry.is_file(follow_symlinks=False):
                        if stack and is_ignored_by(child, False, stack):
                            self._note_ignored(child, True)
                            continue
                        if len(files) >= MAX_FILES:
                            truncated = True
                            continue
                        st = entry.stat(follow_symlinks=False)
                        files[child] = (st.st_size, st.st_mtime_ns, st.st_ino, stat.S_IMODE(st.st_mode))
                    elif entry.is_symlink():
                        if stack and is_ignored_by(child, False, stack):
                            continue
                        links[child] = os.readlink(entry.path)
                except OSError:
                    continue
        return truncated

    def _note_ignored(self, rel: str, exists: bool) -> None:
        """An ignored file met (or gone): kept in mind when it is a secrets file (bounded)."""
        if not exists:
            self._ignored_secrets.discard(rel)
        elif len(self._ignored_secrets) < MAX_IGNORED_SECRETS and is_secret_file(rel):
            self._ignored_secrets.add(rel)

    def _look(self) -> tuple[dict[str, Key], dict[str, str], set[str] | None]:
        """Walk mode: the workspace's files and links now, and which paths changed since the last
        look (None: all of them may have; a whole walk was done)."""
        self._looks += 1
        if self._watcher is not None and self._index is not None:
            drained = self._watcher.drain()
            if drained is not None:
                touched = self._apply(drained)
                if touched is not None:
                    return self._index, self._links, touched
            self._watcher.close()
            self._watcher, self._index = None, None
        watcher = TreeWatch.create() if self.watch else None
        files: dict[str, Key] = {}
        skipped: list[str] = []
        links: dict[str, str] = {}
        self._stacks = {}
        self._ignored_secrets = set()
        truncated = self._walk_from(self.root, "", [], files, skipped, links, watcher)
        self._skipped, self._links = sorted(skipped), links
        self._truncated = truncated
        if watcher is not None and (watcher.broken or truncated):
            watcher.close()
            watcher = None
        self._watcher, self._index = watcher, (files if watcher is not None else None)
        return files, links, None

    def _freeze(self, live: dict[str, V]) -> Frozen[V]:
        """A view of ``live`` as it is now, kept so by :meth:`_changing`."""
        view: Frozen[V] = Frozen(live)
        self._views = [ref for ref in self._views if ref() is not None]
        self._views.append(weakref.ref(view))
        return view

    def _changing(self, live: dict[str, Any], key: str) -> None:
        """Before ``live[key]`` changes in place: the snapshots holding a view of it keep the old."""
        for ref in self._views:
            view = ref()
            if view is not None and view.live is live:
                view.changing(key)

    def _apply(self, drained: Drained) -> set[str] | None:
        """Bring the index up to date with a drain; the paths it touched (None: walk again)."""
        index = self._index
        watcher = self._watcher
        assert index is not None and watcher is not None
        touched: set[str] = set()
        for gone in drained.dirs_gone:
            prefix = gone + "/"
            self._ignored_secrets = {r for r in self._ignored_secrets if not r.startswith(prefix)}
            for rel in [r for r in index if r.startswith(prefix)]:
                self._changing(index, rel)
                del index[rel]
                touched.add(rel)
            for rel in [r for r in self._links if r.startswith(prefix)]:
                del self._links[rel]
                touched.add(rel)
            watcher.forget(gone)
        for new in sorted(drained.dirs_new, key=len):
            parent, _, name = new.rpartition("/")
            stack = self._stacks.get(parent)
            if stack is None:
                continue  # inside a new directory already walked below, or not watched
            if name in SKIPPED_DIRS or (stack and is_ignored_by(new, True, stack)):
                continue
            if self.exclude is not None and self.root / new == self.exclude:
                continue
            found: dict[str, Key] = {}
            skipped: list[str] = []
            if self._walk_from(self.root / new, new, stack, found, skipped, self._links, watcher):
                return None
            for rel in found:
                self._changing(index, rel)
            index.update(found)
            touched.update(found)
            touched.update(r for r in self._links if r.startswith(new + "/"))
        for rel in drained.names:
            parent, _, name = rel.rpartition("/")
            if name in RULE_FILES:
                return None  # the ignore rules changed: walk again
            stack = self._stacks.get(parent, [])
            if stack and is_ignored_by(rel, False, stack):
                self._note_ignored(rel, os.path.isfile(self.root / rel))
                continue
            try:
                st = os.lstat(self.root / rel)
            except OSError:
                st = None
            self._changing(index, rel)
            if st is not None and stat.S_ISREG(st.st_mode):
                index[rel] = (st.st_size, st.st_mtime_ns, st.st_ino, stat.S_IMODE(st.st_mode))
                self._links.pop(rel, None)
            elif st is not None and stat.S_ISLNK(st.st_mode):
                index.pop(rel, None)
                with contextlib.suppress(OSError):
                    self._links[rel] = os.readlink(self.root / rel)
            else:
                index.pop(rel, None)
                self._links.pop(rel, None)
            touched.add(rel)
        if watcher.broken or len(index) > MAX_FILES:
            return None
        return touched

    # -- before and after a command

    # -- git: when the workspace is a repository's top level, git says what is not clean

    def git_mode(self) -> bool:
        """Whether the workspace is in a git repository: its top level or any folder below it."""
        if not self.use_git:
            return False
        if self._git is None:
            top = git_out(self.root, "rev-parse", "--show-toplevel")
            self._git = False
            if top is not None:
                self._top = Path(os.path.realpath(top.decode("utf-8", "surrogateescape").strip()))
                if self.root.is_relative_to(self._top):
                    rel = self.root.relative_to(self._top).as_posix()
                    self._prefix = "" if rel == "." else rel + "/"
                    self._git = True
        return self._git

    def git_status(self, paths: list[str] | None = None, *, ignored: bool = False) -> Status | None:
        """What git lists as not clean under the workspace (or under ``paths``, taken literally),
        by workspace-relative path; ``ignored``: also the directories git ignores as a whole."""
        out = git_out(
            self.root,
            "--no-optional-locks",
            "--literal-pathspecs",
            "status",
            "--porcelain=v2",
            "-z",
            "--untracked-files=all",
            *(["--ignored=matching"] if ignored else []),
            "--",
            *(paths if paths is not None else ["."]),
        )
        if out is None:
            return None
        status = parse_status(out, self._prefix)
        if self.exclude is not None and self.exclude.is_relative_to(self.root):
            inside = self.exclude.relative_to(self.root).as_posix() + "/"
            status.entries = {k: v for k, v in status.entries.items() if not k.startswith(inside)}
            status.ignored_secrets = {k for k in status.ignored_secrets if not k.startswith(inside)}
        return status

    def _git_look(self) -> GitLook | None:
        """Git mode: what git lists now (kept by the watcher between looks when there is one)."""
        self._looks += 1
        if not self.watch:
            status = self.git_status(ignored=True)
            return None if status is None else GitLook(status.entries, None, status.ignored_secrets)
        if self._gitwatch is None:
            self._gitwatch = GitWatch(
                self.root,
                lambda paths: self.git_status(paths, ignored=True),
                self._ignore_rules,
                self.exclude,
            )
        return self._gitwatch.look()

    def _index_states(self, wanted: dict[str, GitEntry]) -> dict[str, FileState]:
        """The bytes git has for files that were clean (worktree = index) before the command, all
        from one ``git cat-file --batch --filters`` (a path git cannot give is left out)."""
        asked = {
            rel: entry
            for rel, entry in wanted.items()
            if entry.index_sha and set(entry.index_sha) != {"0"} and "\n" not in rel
        }
        if not asked:
            return {}
        order = list(asked)
        lines = "".join(f"{asked[rel].index_sha} {self._prefix}{rel}\n" for rel in order)
        out = git_out(self._top or self.root, "cat-file", "--batch", "--filters", stdin=lines.encode())
        if out is None:
            return {}
        states: dict[str, FileState] = {}
        at = 0
        for rel in order:
            end = out.find(b"\n", at)
            if end < 0:
                break
            header = out[at:end].split(b" ")
            at = end + 1
            if len(header) != 3 or header[1] != b"blob":
                continue  # "<object> missing", or not a file
            size = int(header[2])
            data = out[at : at + size]
            at += size + 1
            entry = asked[rel]
            states[rel] = FileState(self.blobs.put(data), entry.index_mode or 0o644, len(data))
        return states

    # -- before and after a command

    def snapshot(self) -> Snapshot:
        with self._lock:
            return self._snapshot()

    def _snapshot(self) -> Snapshot:
        started = time.time_ns()
        looked = self._git_look() if self.git_mode() else None
        git = None if looked is None else dict(looked.listing)
        files: Mapping[str, Key]
        if git is not None:
            files = {}
            for rel in git:
                with contextlib.suppress(OSError):
                    st = os.lstat(self.root / rel)
                    if stat.S_ISREG(st.st_mode):
                        files[rel] = (st.st_size, st.st_mtime_ns, st.st_ino, stat.S_IMODE(st.st_mode))
            skipped: list[str] = []
            truncated = False
            links: dict[str, str] = {}
            touched: set[str] | None = None
            ignored = looked.ignored_secrets if looked is not None else set()
        else:
            index, found_links, touched = self._look()
            files, links = self._freeze(index), dict(found_links)
            skipped, truncated = list(self._skipped), self._truncated
            ignored = set(self._ignored_secrets)
        secrets = self._small_files(ignored)
        cache = self._load_cache()
        shas: dict[str, str | None] = {}
        """What this snapshot found for its candidates (with a watcher, the rest stay as they were)."""
        not_covered: list[str] = []
        budget = MAX_TOTAL_NEW_BYTES
        dirty = False
        if touched is not None:  # a watcher said what changed: only that is looked at again
            candidates = touched | self._unsettled
            if self._resync:  # a whole walk after the last snapshot: files it never hashed
                candidates |= files.keys() - self._shas.keys()
                candidates |= self._shas.keys() - files.keys()
                self._resync = False
            for rel in [k for k in candidates if k not in files and k in cache]:
                del cache[rel]
            for rel in [k for k in self._notes if k not in files]:
                del self._notes[rel]
        else:
            candidates = set(files)
            self._notes = {}
            if git is None:
                for rel in [k for k in cache if k not in files]:
                    del cache[rel]
                    dirty = True
        self._unsettled = set()
        for rel in candidates:
            key = files.get(rel)
            if key is None:
                continue
            cached = cache.get(rel)
            if (
                cached is not None
                and tuple(cached[:4]) == key
                and started - key[1] > RACY_NS
                and cached[4]
                and self.blobs.has(cached[4])
            ):
                shas[rel] = cached[4]
                continue
            size = key[0]
            if size > MAX_FILE_BYTES or size > budget:
                shas[rel] = None
                self._notes[rel] = f"{rel} ({_mb(size)}, over the {_mb(MAX_FILE_BYTES)} per-file limit)"
                continue
            self._notes.pop(rel, None)
            sha = self._store(rel)
            shas[rel] = sha
            if sha is not None:
                budget -= size
                cache[rel] = [*key, sha]
                dirty = True
        if dirty and touched is None:  # (with a watcher, the next whole walk saves it)
            self._save_cache()
        not_covered.extend(self._notes[rel] for rel in sorted(self._notes) if rel in files)
        if truncated:
            not_covered.append(f"files past the first {MAX_FILES} of the workspace")
        if git is not None:
            return Snapshot(
                started, files, shas, not_covered, skipped, truncated, git, links, secrets, self._looks
            )
        if touched is None:
            self._shas = shas
        else:  # in place: the earlier snapshots' views keep what they saw
            live = self._shas
            for rel in candidates:
                if rel in shas or rel in live:
                    self._changing(live, rel)
                if rel in shas:
                    live[rel] = shas[rel]
                else:
                    live.pop(rel, None)
        view = self._freeze(self._shas)
        return Snapshot(
            started, files, view, not_covered, skipped, truncated, None, links, secrets, self._looks
        )

    def _small_files(self, rels: set[str]) -> tuple[str, ...]:
        """Of these paths, the regular files of at most :data:`MAX_SECRET_BYTES`."""
        small: list[str] = []
        for rel in sorted(rels):
            with contextlib.suppress(OSError):
                st = os.lstat(self.root / rel)
                if stat.S_ISREG(st.st_mode) and st.st_size <= MAX_SECRET_BYTES:
                    small.append(rel)
        return tuple(small)

    def _store(self, rel: str) -> str | None:
        """The file's bytes into the blob store, read through the jail: a symlink swapped in, a
        special file or a hard link (whose data may live outside the workspace) is not recorded."""
        try:
            data = read_bytes(self.root, rel, limit=MAX_FILE_BYTES, secrets=True).data
        except (OSError, ToolError):
            return None
        return self.blobs.put(data)

    def unchanged_since(self, before: Snapshot) -> bool:
        """Whether nothing the scan looks at can have changed since ``before``, the last look: the
        watcher holds no event and nothing waits to be looked at again, so :meth:`changes` would
        find nothing and a new :meth:`snapshot` would hold what ``before`` holds. Never waits on
        the disk (a non-blocking look at the watcher, in git mode a few stats), so it is asked on
        the loop, without the thread hop a look costs; False whenever in doubt."""
        if not self._lock.acquire(blocking=False):  # a look is under way in a thread
            return False
        try:
            if before.look != self._looks or self._unsettled or self._resync:
                return False
            if before.git is not None:
                return self._gitwatch is not None and self._gitwatch.quiet()
            return self._watcher is not None and self._index is not None and self._watcher.quiet()
        finally:
            self._lock.release()

    def changes(self, before: Snapshot) -> tuple[list[ScanChange], list[str]]:
        """What differs now from ``before``: (changes, what could not be recorded)."""
        with self._lock:
            return self._changes(before)

    def _changes(self, before: Snapshot) -> tuple[list[ScanChange], list[str]]:
        if before.git is not None:
            looked = self._git_look()
            if looked is not None:
                fresh = looked.touched is not None and self._looks == before.look + 1
                return self._git_changes(
                    before, before.git, looked.listing, looked.touched if fresh else None
                )
        after, links, touched = self._look()
        if touched is None:
            self._resync = True
        else:
            self._unsettled |= touched
        fresh = touched is not None and self._looks == before.look + 1
        paths = touched if fresh and touched is not None else set(before.files) | set(after)
        found, problems = self._compare(before, after, paths, lambda rel: None)
        for rel in sorted(set(before.links) | set(links)):
            if before.links.get(rel) != links.get(rel):
                problems.append(f"{rel}: {LINK_NOTE}")
        return found, problems

    def _git_changes(
        self,
        before: Snapshot,
        was: dict[str, GitEntry],
        now: dict[str, GitEntry],
        touched: set[str] | None,
    ) -> tuple[list[ScanChange], list[str]]:
        """``touched``: the paths that may have changed (the watcher's); None: every listed one."""
        listed = set(was) | set(now)
        paths = listed if touched is None else listed & touched
        after: dict[str, Key] = {}
        links: list[str] = []
        for rel in paths:
            with contextlib.suppress(OSError):
                st = os.lstat(self.root / rel)
                if stat.S_ISREG(st.st_mode):
                    after[rel] = (st.st_size, st.st_mtime_ns, st.st_ino, stat.S_IMODE(st.st_mode))
                elif stat.S_ISLNK(st.st_mode) and (rel not in was or now.get(rel) != was.get(rel)):
                    links.append(rel)

        clean = self._index_states(
            {
                rel: entry
                for rel, entry in now.items()
                if rel in paths and rel not in was and entry.index_sha is not None
            }
        )

        in_head = self._in_head(
            [rel for rel, entry in now.items() if rel in paths and rel not in was and entry.index_sha is None]
        )

        def clean_before(rel: str) -> FileState | None:
            """Not listed before the command: the file was exactly what the index holds."""
            if rel in was:
                return None  # listed but not a file before (deleted in the worktree): absent
            entry = now.get(rel)
            if entry is None or entry.index_sha is None:
                if rel in in_head:  # untracked by the command (`git rm --cached`): it was there
                    raise NotRecorded("git tracked it until the command")
                return None  # untracked now and not listed before: it is new
            state = clean.get(rel)
            if state is None:
                raise NotRecorded("git could not give it")
            return state

        found, problems = self._compare(before, after, paths, clean_before)
        problems += [f"{rel}: {LINK_NOTE}" for rel in sorted(links)]
        return found, problems

    def _in_head(self, rels: list[str]) -> set[str]:
        """Which of these paths the ``HEAD`` commit holds (one ``git cat-file --batch-check``)."""
        asked = [rel for rel in rels if "\n" not in rel]
        if not asked:
            return set()
        lines = "".join(f"HEAD:{self._prefix}{rel}\n" for rel in asked)
        out = git_out(self._top or self.root, "cat-file", "--batch-check", stdin=lines.encode())
        if out is None:
            return set(asked)  # git could not say: none of them is known to be new
        answers = out.decode("utf-8", "surrogateescape").splitlines()
        if len(answers) != len(asked):
            return set(asked)
        return {rel for rel, answer in zip(asked, answers, strict=True) if not answer.endswith(" missing")}

    def _compare(
        self,
        before: Snapshot,
        after: dict[str, Key],
        paths: set[str],
        clean_before: Callable[[str], FileState | None],
    ) -> tuple[list[ScanChange], list[str]]:
        out: list[ScanChange] = []
        problems: list[str] = []
        # Files the snapshot could not see may have existed: a new-looking one is then not "added".
        unseen = (
            PAST_LIMIT
            if before.truncated
            else RULES_CHANGED
            if _rules_changed(before, after, paths)
            else None
        )
        for rel in sorted(paths):
            key = before.files.get(rel)
            now = after.get(rel)
            unrecorded: str | None = None
            if key is not None:
                racy = key[1] >= before.started_ns - RACY_NS
                if now == key and not racy:
                    continue
                old_sha = before.shas.get(rel)
                old = FileState(old_sha, key[3], key[0]) if old_sha else None
                if old is None:
                    if now == key:
                        continue  # unrecorded and (as far as a stat can tell) unchanged
                    unrecorded = _why_unrecorded(rel, key[0])
            else:
                found = self._unseen_before(rel, before.started_ns, now is not None, clean_before, unseen)
                if found is None:
                    continue  # there all along, unseen (ignored before), and untouched since
                old, unrecorded = found
            current = self._state(rel, now) if now is not None else None
            if now is not None and current is None:
                continue
            if (
                old is not None
                and current is not None
                and old.sha == current.sha
                and old.mode == current.mode
            ):
                continue
            if old is None and current is None and unrecorded is None:
                continue
            if unrecorded is not None:
                problems.append(f"{rel}{UNRECORDED_NOTE} ({unrecorded})")
            out.append(ScanChange(rel, old, current, unrecorded))
        return out, problems

    def _unseen_before(
        self,
        rel: str,
        started_ns: int,
        exists: bool,
        clean_before: Callable[[str], FileState | None],
        unseen: str | None,
    ) -> tuple[FileState | None, str | None] | None:
        """A file the snapshot did not hold: (its state before, why that is not recorded), or
        None when it did not change. Absent before ("added") only when that is known; ``unseen``:
        why the snapshot may have missed files that existed (None: it saw them all)."""
        try:
            old, why = clean_before(rel), None
        except NotRecorded as missing:
            old, why = None, missing.reason
        if old is not None or not exists:
            return old, why
        age = self._unseen_age(rel, started_ns)
        if age == "old":
            return None
        return None, why or (UNSEEN if age == "unsure" else unseen)

    def _unseen_age(self, rel: str, started_ns: int) -> Literal["new", "old", "unsure"]:
        """A file the snapshot did not hold: "new" (made, or at least changed, since it was taken),
        "old" (unchanged since well before it: it existed, unseen, e.g. ignored until the command
        edited an ignore file or ran ``git rm --cached``) or "unsure". Only "new" may be removed by
        a restore. Any write, chmod or rename sets a file's ctime, and nothing can set it back."""
        try:
            ctime = os.lstat(self.root / rel).st_ctime_ns
        except OSError:
            return "new"  # gone again: nothing a restore would touch
        if ctime >= started_ns - CLOCK_SLACK_NS:
            return "new"
        return "old" if ctime < started_ns - RACY_NS else "unsure"

    def _state(self, rel: str, key: Key) -> FileState | None:
        if key[0] > HARD_MAX_BYTES:  # never read whole: its stat stands for its content
            return FileState("stat-" + sha256(repr(key).encode()), key[3], key[0])
        try:
            data = read_bytes(self.root, rel, secrets=True).data
        except (OSError, ToolError):
            return None
        if key[0] <= MAX_FILE_BYTES:
            digest = self.blobs.put(data)
            cache = self._load_cache()
            cache[rel] = [*key, digest]
        else:
            digest = sha256(data)
        return FileState(digest, key[3], len(data))

    def remember(self) -> None:
        """Persist the stat cache after a command (its new files are known next time)."""
        self._save_cache()


def _rules_changed(before: Snapshot, after: Mapping[str, Key], paths: set[str]) -> bool:
    """Whether the command changed an ignore file: what the snapshot skipped may show up now."""
    return any(
        rel.rpartition("/")[2] in RULE_FILES and before.files.get(rel) != after.get(rel) for rel in paths
    )


def _why_unrecorded(rel: str, size: int) -> str:
    """Why a snapshot has no bytes for a file it listed (see :meth:`WorkspaceScanner._snapshot`)."""
    if size > MAX_FILE_BYTES:
        return f"{_mb(size)}, over the {_mb(MAX_FILE_BYTES)} per-file limit"
    return "over the snapshot's size budget, or not readable through the workspace jail"


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"
