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
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shiro_lsp.agent.tools import jail
from shiro_lsp.agent.tools.base import ToolError
from shiro_lsp.agent.tools.ignore import _is_ignored, _Rules, _rules_in
from shiro_lsp.agent.tools.secrets import is_secret_path
from shiro_lsp.state.atomic import write_json_atomic
from shiro_lsp.state.checkpoints import BlobStore, FileState, sha256

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
RACY_NS = 2_000_000_000
"""A file modified this close to a snapshot may change again within the same mtime tick: re-read it."""

Key = tuple[int, int, int, int]
"""(size, mtime_ns, inode, mode)"""


@dataclass
class Snapshot:
    started_ns: int
    files: dict[str, Key]
    """Walk mode: every file. Git mode: the files ``git status`` listed (changed or untracked)."""
    shas: dict[str, str | None]
    """None: not recorded (too large, over the budget, or a secrets file)."""
    not_covered: list[str] = field(default_factory=list)
    skipped_trees: list[str] = field(default_factory=list)
    truncated: bool = False
    git: dict[str, GitEntry] | None = None
    """Git mode: what ``git status`` listed before the command."""


@dataclass(frozen=True)
class GitEntry:
    index_sha: str | None
    """The index's object for a tracked path (None: untracked)."""
    index_mode: int
    deleted: bool
    """Gone from the worktree."""


@dataclass(frozen=True)
class ScanChange:
    path: str
    before: FileState | None
    after: FileState | None
    recorded: bool
    """False: the before-bytes were not recorded (``before`` is then None for an existing file)."""


class WorkspaceScanner:
    def __init__(
        self,
        root: Path,
        blobs: BlobStore,
        cache_path: Path,
        *,
        exclude: Path | None = None,
        use_git: bool = True,
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self.use_git = use_git
        self._git: bool | None = None
        self.blobs = blobs
        self.cache_path = cache_path
        self.exclude = Path(os.path.realpath(exclude)) if exclude else None
        self._cache: dict[str, list[Any]] | None = None
        self._rules: dict[str, tuple[tuple[int, int], list[_Rules]]] = {}

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
            write_json_atomic(self.cache_path, {"root": str(self.root), "files": self._cache}, sync=False)

    # -- walking

    def _ignore_rules(self, directory: Path, rel: str, names: set[str]) -> list[_Rules]:
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
        rules = _rules_in(directory, rel, with_exclude=rel == "")
        self._rules[rel] = (signature, rules)
        return rules

    def walk(self) -> tuple[dict[str, Key], list[str], bool]:
        """Every regular file not ignored: rel path → stat key; plus the skipped trees; truncated?"""
        files: dict[str, Key] = {}
        skipped: list[str] = []
        pending: list[tuple[Path, str, list[_Rules]]] = [(self.root, "", [])]
        truncated = False
        while pending:
            directory, rel, stack = pending.pop()
            try:
                with os.scandir(directory) as scan:
                    entries = list(scan)
            except OSError:
                continue
            names = {e.name for e in entries}
            stack = stack + self._ignore_rules(directory, rel, names)
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
                        if stack and _is_ignored(child, True, stack):
                            continue
                        pending.append((Path(entry.path), child, stack))
                    elif entry.is_file(follow_symlinks=False):
                        if stack and _is_ignored(child, False, stack):
                            continue
                        if len(files) >= MAX_FILES:
                            truncated = True
                            continue
                        st = entry.stat(follow_symlinks=False)
                        files[child] = (st.st_size, st.st_mtime_ns, st.st_ino, stat.S_IMODE(st.st_mode))
                except OSError:
                    continue
        return files, sorted(skipped), truncated

    # -- before and after a command

    # -- git: when the workspace is a repository's top level, git says what is not clean

    def git_mode(self) -> bool:
        if not self.use_git or not (self.root / ".git").exists():
            return False
        if self._git is None:
            top = _git(self.root, "rev-parse", "--show-toplevel")
            self._git = top is not None and Path(os.path.realpath(top.decode().strip())) == self.root
        return self._git

    def git_status(self) -> dict[str, GitEntry] | None:
        out = _git(
            self.root, "--no-optional-locks", "status", "--porcelain=v2", "-z", "--untracked-files=all"
        )
        if out is None:
            return None
        entries: dict[str, GitEntry] = {}
        fields = out.split(b"\0")
        i = 0
        while i < len(fields):
            line = fields[i].decode("utf-8", "surrogateescape")
            i += 1
            if line.startswith("? "):
                entries[line[2:]] = GitEntry(None, 0, False)
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
                entries[path] = GitEntry(sha, int(mode, 8) & 0o777, xy[1] == "D")
        if self.exclude is not None and self.exclude.is_relative_to(self.root):
            inside = self.exclude.relative_to(self.root).as_posix() + "/"
            entries = {k: v for k, v in entries.items() if not k.startswith(inside)}
        return entries

    def _index_state(self, rel: str, entry: GitEntry) -> FileState | None:
        """The bytes git has for a file that was clean (worktree = index) before the command."""
        if entry.index_sha is None or set(entry.index_sha) == {"0"}:
            return None
        data = _git(self.root, "cat-file", "--filters", f"--path={rel}", entry.index_sha)
        if data is None:
            return None
        return FileState(self.blobs.put(data), entry.index_mode or 0o644, len(data))

    # -- before and after a command

    def snapshot(self) -> Snapshot:
        started = time.time_ns()
        git = self.git_status() if self.git_mode() else None
        if git is not None:
            files: dict[str, Key] = {}
            for rel in git:
                with contextlib.suppress(OSError):
                    st = os.lstat(self.root / rel)
                    if stat.S_ISREG(st.st_mode):
                        files[rel] = (st.st_size, st.st_mtime_ns, st.st_ino, stat.S_IMODE(st.st_mode))
            skipped: list[str] = []
            truncated = False
        else:
            files, skipped, truncated = self.walk()
        cache = self._load_cache()
        shas: dict[str, str | None] = {}
        not_covered: list[str] = []
        budget = MAX_TOTAL_NEW_BYTES
        dirty = False
        if git is None:
            for rel in [k for k in cache if k not in files]:
                del cache[rel]
                dirty = True
        for rel, key in files.items():
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
            if is_secret_path(rel):
                shas[rel] = None
                continue
            if size > MAX_FILE_BYTES or size > budget:
                shas[rel] = None
                not_covered.append(f"{rel} ({_mb(size)}, over the {_mb(MAX_FILE_BYTES)} per-file limit)")
                continue
            sha = self._store(rel)
            shas[rel] = sha
            if sha is not None:
                budget -= size
                cache[rel] = [*key, sha]
                dirty = True
        if dirty:
            self._save_cache()
        if truncated:
            not_covered.append(f"files past the first {MAX_FILES} of the workspace")
        return Snapshot(started, files, shas, not_covered, skipped, truncated, git)

    def _store(self, rel: str) -> str | None:
        """The file's bytes into the blob store, read through the jail: a symlink swapped in, a
        special file or a hard link (whose data may live outside the workspace) is not recorded."""
        try:
            with jail.reading(self.root, rel) as (_, handle):
                data = handle.read()
        except (OSError, ToolError):
            return None
        return self.blobs.put(data)

    def changes(self, before: Snapshot) -> tuple[list[ScanChange], list[str]]:
        """What differs now from ``before``: (changes, what could not be recorded)."""
        if before.git is not None:
            after_git = self.git_status()
            if after_git is not None:
                return self._git_changes(before, before.git, after_git)
        after, _, _ = self.walk()
        return self._compare(before, after, set(before.files) | set(after), lambda rel: None)

    def _git_changes(
        self, before: Snapshot, was: dict[str, GitEntry], now: dict[str, GitEntry]
    ) -> tuple[list[ScanChange], list[str]]:
        after: dict[str, Key] = {}
        for rel in set(was) | set(now):
            with contextlib.suppress(OSError):
                st = os.lstat(self.root / rel)
                if stat.S_ISREG(st.st_mode):
                    after[rel] = (st.st_size, st.st_mtime_ns, st.st_ino, stat.S_IMODE(st.st_mode))

        def clean_before(rel: str) -> FileState | None:
            """Not listed before the command: the file was exactly what the index holds."""
            if rel in was:
                return None  # listed but not a file before (deleted in the worktree): absent
            entry = now.get(rel)
            if entry is None or entry.index_sha is None:
                return None  # untracked now and not listed before: it is new
            state = self._index_state(rel, entry)
            if state is None:
                raise LookupError(rel)
            return state

        return self._compare(before, after, set(was) | set(now), clean_before)

    def _compare(
        self,
        before: Snapshot,
        after: dict[str, Key],
        paths: set[str],
        clean_before: Callable[[str], FileState | None],
    ) -> tuple[list[ScanChange], list[str]]:
        out: list[ScanChange] = []
        problems: list[str] = []
        for rel in sorted(paths):
            key = before.files.get(rel)
            now = after.get(rel)
            if key is not None:
                racy = key[1] >= before.started_ns - RACY_NS
                if now == key and not racy:
                    continue
                old_sha = before.shas.get(rel)
                old = FileState(old_sha, key[3], key[0]) if old_sha else None
                recorded = old is not None
            else:
                try:
                    old = clean_before(rel)
                    recorded = True
                except LookupError:
                    problems.append(f"{rel}: changed, but git could not give its earlier content")
                    continue
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
            if old is None and current is None:
                continue
            if key is not None and old is None:
                if now == key:
                    continue  # unrecorded and (as far as a stat can tell) unchanged
                problems.append(f"{rel}: changed, but its earlier content was not recorded")
            out.append(ScanChange(rel, old, current, recorded))
        return out, problems

    def _state(self, rel: str, key: Key) -> FileState | None:
        try:
            data = (self.root / rel).read_bytes()
        except OSError:
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


GIT_TIMEOUT_S = 60


def _git(root: Path, *args: str) -> bytes | None:
    """Run git read-only in ``root``; None when it fails (the caller falls back to walking)."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=root,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"
