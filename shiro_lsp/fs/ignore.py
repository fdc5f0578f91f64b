"""Walking the workspace the way git sees it.

Honoured: ``.gitignore`` (nested), ``.shiroignore``, ``.git/info/exclude``.

Blocking by design (``os.scandir``); tools call it through ``asyncio.to_thread``. The walk is
depth-first in name order so results are stable, never enters ``.git``, never descends a symlinked
directory (it can point anywhere, including back into the tree), never yields a symlink whose
target lies outside the workspace, and never enters or yields Shiro's state root (a home folder
opened as the workspace holds it).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.jail import inside, workspace_root
from shiro_lsp.fs.reader import read_text
from shiro_lsp.fs.secrets import is_private

if TYPE_CHECKING:
    import pathspec

IGNORE_FILES = (".gitignore", ".shiroignore")
ALWAYS_SKIPPED = frozenset({".git"})
SKIPPED_UNLESS_IGNORED_INCLUDED = frozenset({"node_modules"})
MAX_IGNORE_FILE_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Entry:
    rel: str
    """Workspace-relative posix path."""
    path: Path
    is_dir: bool


@dataclass(frozen=True)
class IgnoreRules:
    """The rules of one folder's ignore files; ``base`` is that folder, relative to the walk's root."""

    base: str
    spec: pathspec.GitIgnoreSpec


def _read_lines(directory: Path, path: Path) -> list[str] | None:
    """An ignore file's lines through the confined reader (no link out of ``directory``, no FIFO, bounded)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # the usual folder has none: one stat
            return None
        return read_text(directory, str(path), limit=MAX_IGNORE_FILE_BYTES).splitlines()
    except (OSError, ToolError):
        return None


def rules_in(directory: Path, base: str, *, with_exclude: bool = False) -> list[IgnoreRules]:
    """The rules ``directory``'s ignore files give (none: an empty list), to push on a walk's stack."""
    lines: list[str] = []
    sources = [directory / name for name in IGNORE_FILES]
    if with_exclude:
        sources.insert(0, directory / ".git" / "info" / "exclude")
    for source in sources:
        read = _read_lines(directory, source)
        if read:
            lines.extend(read)
    if not lines:
        return []
    import pathspec  # loaded on the first listing or search, not at server start

    return [IgnoreRules(base, pathspec.GitIgnoreSpec.from_lines(lines))]


def is_ignored_by(rel: str, is_dir: bool, stack: list[IgnoreRules]) -> bool:
    """Whether ``rel`` (relative to the walk's root) is ignored by the rules of its folders, outermost first."""
    # The deepest ignore file with an opinion decides, as in git.
    for rules in reversed(stack):
        if rules.base:
            if not rel.startswith(rules.base + "/"):
                continue
            sub = rel[len(rules.base) + 1 :]
        else:
            sub = rel
        result = rules.spec.check_file(sub + "/" if is_dir else sub)
        if result.include is not None:
            return bool(result.include)
    return False


class Walker:
    """Walks a directory inside one workspace, honouring its ignore files unless told not to."""

    def __init__(self, workspace: Path, *, include_ignored: bool = False) -> None:
        self.root = workspace_root(workspace)
        self.include_ignored = include_ignored

    def _stack_down_to(self, start: Path) -> list[IgnoreRules]:
        if self.include_ignored:
            return []
        stack = rules_in(self.root, "", with_exclude=True)
        rel_parts = start.relative_to(self.root).parts
        for depth in range(1, len(rel_parts) + 1):
            base = "/".join(rel_parts[:depth])
            stack.extend(rules_in(self.root / base, base))
        return stack

    def is_ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether one workspace-relative path is ignored (rules of all its ancestors apply)."""
        if self.include_ignored:
            return False
        parts = rel.split("/")
        if any(p in ALWAYS_SKIPPED or p in SKIPPED_UNLESS_IGNORED_INCLUDED for p in parts):
            return True
        stack = rules_in(self.root, "", with_exclude=True)
        for depth in range(1, len(parts)):
            prefix = "/".join(parts[:depth])
            stack.extend(rules_in(self.root / prefix, prefix))
            if is_ignored_by(prefix, True, stack):
                return True
        return is_ignored_by(rel, is_dir, stack)

    def walk(
        self, start: Path, *, max_depth: int | None = None, prune: Callable[[Entry], bool] | None = None
    ) -> Iterator[Entry]:
        """Entries under ``start`` (a resolved directory inside the workspace), depth-first.
        ``prune``: folders (yielded) whose content is not walked."""
        yield from self._walk_dir(start, self._stack_down_to(start), 1, max_depth, prune)

    def _skipped_name(self, name: str) -> bool:
        if name in ALWAYS_SKIPPED:
            return True
        return not self.include_ignored and name in SKIPPED_UNLESS_IGNORED_INCLUDED

    def _walk_dir(
        self,
        directory: Path,
        stack: list[IgnoreRules],
        depth: int,
        max_depth: int | None,
        prune: Callable[[Entry], bool] | None,
    ) -> Iterator[Entry]:
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError:
            return
        for item in entries:
            if self._skipped_name(item.name):
                continue
            entry = self._classify(item)
            if entry is None:
                continue
            if not self.include_ignored and is_ignored_by(entry.rel, entry.is_dir, stack):
                continue
            yield entry
            if entry.is_dir and not item.is_symlink() and (max_depth is None or depth < max_depth):
                if prune is not None and prune(entry):
                    continue
                nested = stack if self.include_ignored else stack + rules_in(entry.path, entry.rel)
                yield from self._walk_dir(entry.path, nested, depth + 1, max_depth, prune)

    def _classify(self, item: os.DirEntry[str]) -> Entry | None:
        path = Path(item.path)
        rel = path.relative_to(self.root).as_posix()
        try:
            if item.is_symlink():
                target = Path(os.path.realpath(path))
                if not inside(self.root, target) or not target.exists() or is_private(target):
                    return None
                return Entry(rel, path, target.is_dir())
            if is_private(path):
                return None
            return Entry(rel, path, item.is_dir())
        except OSError:
            return None
