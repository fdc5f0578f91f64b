"""A reply that has made its change and goes on to copy what it was shown. Told to write out each file
that must change, a small model writes the file it changes, then the other files it was shown,
unchanged and whole (notes, instructions, tests). None of those copies is written (the echo rule), and
each takes as long to generate as the change did. Once a reply has written a fenced block of its own
and then a block that copies text it was shown, the stream is cut after that copy: the reply stands,
its change is written, and nothing is sent back. Should the work need another file after all, the
check that follows the change says so."""

from __future__ import annotations

import re
from collections.abc import Callable

from shiro_lsp.adapt.formats.echoes import Shown, unspaced
from shiro_lsp.adapt.formats.whole_file import MARKDOWN_LANGS, is_path_line
from shiro_lsp.adapt.reflections.base import Reflection, TurnFacts

MIN_BLOCK_CHARS = 60
"""Characters (whitespace aside) a block needs to count as a file's text: a command or a one-line
example is neither a change nor a copy."""
_FENCE = re.compile(r"^[ \t]{0,8}(?P<fence>`{3,})[ \t]*(?P<lang>[^\s`]*)[^`\n]*$")

COPY_NOTICE = "The model went on to copy text it was shown, unchanged; Shiro cut its reply there."


class CopyCut(Reflection):
    """A reply that, after a fenced block of its own, writes a fenced block copying text it was shown
    is cut after that copy: the reply stands."""

    name = group = "copy_cut"
    cut_notice = COPY_NOTICE

    def watch(self, facts: TurnFacts, shown: Callable[[], Shown]) -> CopyWatch | None:
        return CopyWatch(shown) if facts.writes_out else None


class CopyWatch:
    """Fed a reply as it streams; reads its fenced blocks as they close, as the whole-file reader
    reads them (a Markdown block's inner fences nest; a block indented under a list item ends at a
    line indented less; an unbalanced Markdown block ends at the path line of the next listing), and
    says when a copy follows a block of the model's own."""

    def __init__(self, shown: Callable[[], Shown]) -> None:
        self._shown_of = shown
        self._shown: Shown | None = None
        """What the model was shown, read when the first block closes."""
        self._line = ""
        self._ended_at = 0
        """Where the line still being written starts."""
        self._fence: str | None = None
        """The open block's fence (None: outside a block)."""
        self._indent = 0
        self._markdown = False
        self._depth = 0
        self._body: list[tuple[int, str]] = []
        """The open block's lines, each with where it starts in the reply."""
        self._own = False
        """A block of the model's own closed."""
        self.keep_until = 0

    def feed(self, text: str) -> bool:
        *ended, self._line = (self._line + text).split("\n")
        for line in ended:
            start, self._ended_at = self._ended_at, self._ended_at + len(line) + 1
            cut = self._ended_line(line, start)
            if cut is not None:
                self.keep_until = cut
                return True
        return False

    def _ended_line(self, line: str, start: int) -> int | None:
        """Where to cut the reply once ``line`` (starting at ``start``) ended, or None."""
        fence = _FENCE.match(line)
        if self._fence is not None and self._ended_before(line, fence):
            at = self._body[-1][0] if self._markdown and fence is not None else start
            body = [text for begins, text in self._body if begins < at]
            self._fence = None
            if self._closed("\n".join(body)):
                return at
        if self._fence is None:
            if fence is not None:
                self._fence, self._body, self._depth = fence["fence"], [], 0
                self._indent = len(line) - len(line.lstrip())
                self._markdown = fence["lang"].lower() in MARKDOWN_LANGS
            return None
        if fence is not None and fence["fence"] == self._fence and (self._markdown or not fence["lang"]):
            if fence["lang"]:
                self._depth += 1
            elif self._depth:
                self._depth -= 1
            else:
                self._fence = None
                return self._ended_at if self._closed("\n".join(t for _, t in self._body)) else None
        if line.strip():
            self._body.append((start, line))
        return None

    def _ended_before(self, line: str, fence: re.Match[str] | None) -> bool:
        """The open block ended before ``line`` without its closing fence: ``line`` is indented less
        than a block under a list item, or opens a listing right after its path line inside an
        unbalanced Markdown block."""
        if line.strip() and len(line) - len(line.lstrip()) < self._indent:
            return True
        return (
            self._markdown
            and self._depth == 0
            and fence is not None
            and bool(fence["lang"])
            and bool(self._body)
            and is_path_line(self._body[-1][1])
        )

    def _closed(self, body: str) -> bool:
        """A block closed: True when it copies shown text after a block of the model's own."""
        if len(unspaced(body)) < MIN_BLOCK_CHARS:
            return False
        if self._shown is None:
            self._shown = self._shown_of()
        if self._shown.holds([body]):
            return self._own
        self._own = True
        return False
