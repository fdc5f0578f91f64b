"""A reply that begins to write out a file the turn keeps as it was (a test file already there, once
the check failed: ``agent/kept_tests.py``). Its writing would be refused, and a small model writes a
test file out whole, as long to generate as the change itself, or longer. So the stream is cut where
that listing begins: what came before stands (a file it changed is written and checked), and a reply
that wrote nothing else is sent back once, with the reason."""

from __future__ import annotations

import re
from collections.abc import Callable

from shiro_lsp.adapt.formats.echoes import Shown
from shiro_lsp.adapt.formats.whole_file import is_path_line
from shiro_lsp.adapt.reflections.base import Reflection, Reply, SendBack, TurnFacts

KEPT_CUT_NOTICE = "The model began to write out tests Shiro keeps as they are; Shiro cut its reply there."
KEPT_INSTRUCTION = (
    "Your reply was cut where it began to write out {path}: it holds the tests, which stay as they are. "
    "Change the code so that `{command}` passes."
)
_FENCE = re.compile(r"^[ \t]{0,8}(`{3,}|~{3,})")
_PATH = re.compile(r"[\w./-]*\w\.[A-Za-z0-9]{1,8}\b")


class KeptCut(Reflection):
    """A reply that begins to write out a file the turn keeps as it was is cut where that listing
    begins; a reply left with nothing written is sent back once, with the reason."""

    name = group = "kept_cut"
    cut_notice = KEPT_CUT_NOTICE

    def __init__(self) -> None:
        self._watch: KeptWatch | None = None

    def watch(self, facts: TurnFacts, shown: Callable[[], Shown]) -> KeptWatch | None:
        self._watch = KeptWatch(facts.keeps) if facts.writes_out else None
        return self._watch

    def answer(self, reply: Reply, facts: TurnFacts) -> SendBack | None:
        path = self._watch.cut_at_path if self._watch is not None else None
        if path is None or facts.check is None:
            return None
        self._watch = None
        return SendBack(
            KEPT_INSTRUCTION.format(path=path, command=facts.check.shown), "it began to rewrite tests"
        )


class KeptWatch:
    """Fed a reply as it streams; says when a fenced block opens as the listing of a kept file: the
    line before it names the file, or the block's first line is its path."""

    def __init__(self, keeps: Callable[[str], bool]) -> None:
        self._keeps = keeps
        self._line = ""
        self._ended_at = 0
        self._in_block = False
        self._opened_at: int | None = None
        """Where the block just opened starts, until its first line ended."""
        self._labelled: tuple[int, str] | None = None
        """The block's start and the kept file its first line names, until a line of body follows."""
        self._last: tuple[str, int] = ("", 0)
        """The last line with text outside a block, and where it starts."""
        self.keep_until = 0
        self.cut_at_path: str | None = None

    def feed(self, text: str) -> bool:
        *ended, self._line = (self._line + text).split("\n")
        for line in ended:
            start, self._ended_at = self._ended_at, self._ended_at + len(line) + 1
            if self._ended(line, start):
                return True
        return False

    def _ended(self, line: str, start: int) -> bool:
        if self._labelled is not None and line.strip():
            labelled, self._labelled = self._labelled, None
            if not _FENCE.match(line):  # the label has a body: the block is that file's listing
                self.keep_until, self.cut_at_path = labelled
                return True
        if self._opened_at is not None and line.strip():
            opened, self._opened_at = self._opened_at, None
            path = self._kept(_PATH.findall(line)) if is_path_line(line) else None
            self._labelled = (opened, path) if path is not None else None
        if _FENCE.match(line):
            self._in_block = not self._in_block
            self._labelled = None
            if self._in_block:
                self._opened_at = start
                return self._cut(*self._last)
            return False
        if not self._in_block and line.strip():
            self._last = (line, start)
        return False

    def _cut(self, line: str, at: int) -> bool:
        """Whether ``line``, before a block, introduces a kept file's listing: nothing but its path, or
        a sentence ending in a colon that names no other file."""
        paths = _PATH.findall(line)
        if not (is_path_line(line) or (line.rstrip().rstrip("*`").endswith(":") and len(set(paths)) == 1)):
            return False
        kept = self._kept(paths)
        if kept is None:
            return False
        self.keep_until, self.cut_at_path = at, kept
        return True

    def _kept(self, paths: list[str]) -> str | None:
        """The first path, when the turn keeps that file."""
        return paths[0] if paths and self._keeps(paths[0]) else None
