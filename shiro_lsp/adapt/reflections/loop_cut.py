"""A reply stuck repeating itself. At temperature 0 a small model can write one line shape forever
(an assert whose numbers count up or down), or a block of a few lines over and over (a numbered
comment and its assert; a list of three items), until the request times out. The stream is cut once
its last lines repeat one block of line shapes, and the model is asked once to write it again."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable

from shiro_lsp.adapt.formats.echoes import Shown
from shiro_lsp.adapt.reflections.base import Reflection, SendBack, TurnFacts

SAME_LINES = 40
"""Lines a repeated block must cover to make a loop (an answer's table or test list stays under it)."""
MAX_BLOCK = 16
"""The longest block of lines whose repetition counts (a cycle of three small blocks can span 13)."""
LOOSE_SAME_LINES = 120
"""Lines a repeated block must cover when its strings are made alike too: a model listing one call
per character (``text.replace("?", "")``, every punctuation mark and then some) until the timeout.
A table written with sense (a mapping of codes, a dictionary of names) stays under it."""
MIN_REPEATS = 4
"""A block of several lines must also come back this many times: four similar functions can be fine."""
KEPT_LINES = 8
"""Lines of a loop kept when it is cut: the first lines a model repeats were often written with sense."""
MIN_LOOPED_CHARS = 1_000
"""A line that ends in a stretch this long repeating one piece of text is a loop (a paragraph repeating
three sentences, with no line break, until the timeout)."""
MAX_PIECE = 600
"""The longest piece whose repetition inside a line counts (three sentences: about 300)."""
_CHECK_EVERY = 256
"""Characters a line grows between two checks of it."""
_NUMBERS = re.compile(r"-?\d+")
_STRINGS = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'")

CUT_NOTICE = "The model repeated itself over and over; Shiro cut its reply."
WRITE_AGAIN = (
    "Your reply kept repeating the same kind of line, so it was cut. Write it again, shorter, without "
    "repeating yourself."
)


class LoopCut(Reflection):
    """A reply that repeats itself over and over is cut where its repetition began, and the model is
    asked once to write it again."""

    name = group = "loop_cut"
    cut_notice = CUT_NOTICE

    def watch(self, facts: TurnFacts, shown: Callable[[], Shown]) -> RepetitionWatch:
        return RepetitionWatch()

    def after_cut(self) -> SendBack:
        return SendBack(WRITE_AGAIN, "its reply repeated itself over and over, so it was cut")


def shape(line: str) -> str:
    """A line with its numbers made alike: the lines of a counting loop share one shape."""
    return _NUMBERS.sub("0", line.strip())


def loose_shape(line: str) -> str:
    """A line with its strings and numbers made alike."""
    return shape(_STRINGS.sub('""', line))


class _Lens:
    """How many lines in a row repeat the block before them, for each block length, with lines seen
    through one shape."""

    def __init__(self, shaper: Callable[[str], str], same_lines: int) -> None:
        self.shaper = shaper
        self.same_lines = same_lines
        self.recent: deque[str] = deque(maxlen=MAX_BLOCK + 1)
        self.matched = [0] * (MAX_BLOCK + 1)

    def covered(self, line: str) -> tuple[int, int] | None:
        """After ``line``: the block length and the lines its repetition covers, once it is a loop."""
        current = self.shaper(line)
        self.recent.append(current)
        for block in range(1, MAX_BLOCK + 1):
            earlier = len(self.recent) - 1 - block
            same = earlier >= 0 and self.recent[earlier] == current
            self.matched[block] = self.matched[block] + 1 if same else 0
            covered = self.matched[block] + block  # the first block, then each line that repeats it
            if covered >= self.same_lines and covered >= block * MIN_REPEATS:
                return block, covered
        return None


class RepetitionWatch:
    """Fed a reply as it streams; says when its last lines are one block of shapes repeated."""

    def __init__(self) -> None:
        self._line = ""
        """The line still being written."""
        self._line_start = 0
        self._lenses = (_Lens(shape, SAME_LINES), _Lens(loose_shape, LOOSE_SAME_LINES))
        self._starts: deque[int] = deque(maxlen=LOOSE_SAME_LINES * MIN_REPEATS)
        """Where each of the last non-blank lines starts in the reply."""
        self._checked_at = 0
        """How long the line still being written was when it was last checked."""
        self.loop_starts = 0
        """Where in the reply the repeated lines began (meaningful once a loop was seen)."""
        self.keep_until = 0
        """Where the reply is cut: after the loop's first :data:`KEPT_LINES` lines (or first block, or
        first piece of a line), which a model often wrote with sense before it repeated them."""

    def feed(self, text: str) -> bool:
        *ended, self._line = (self._line + text).split("\n")
        for line in ended:
            start, self._line_start = self._line_start, self._line_start + len(line) + 1
            self._checked_at = 0
            if self._ended_line(line, start):
                return True
        if len(self._line) - self._checked_at < _CHECK_EVERY:
            return False
        self._checked_at = len(self._line)
        looped = looped_tail(self._line)
        if looped is None:
            return False
        begins, piece = looped
        self.loop_starts = self._line_start + begins
        self.keep_until = self.loop_starts + piece
        return True

    def _ended_line(self, line: str, start: int) -> bool:
        if not line.strip():
            return False
        self._starts.append(start)
        for lens in self._lenses:
            loop = lens.covered(line)
            if loop is not None:
                block, covered = loop
                kept = max(block, KEPT_LINES)
                self.loop_starts = self._starts[-covered]
                self.keep_until = self._starts[-covered + kept]
                return True
        return False


def looped_tail(line: str) -> tuple[int, int] | None:
    """Where the stretch of at least :data:`MIN_LOOPED_CHARS` that ends ``line`` and repeats one
    piece of text (at least three times) begins, and the piece's length; or None."""
    for piece in range(20, MAX_PIECE + 1):
        span = max(MIN_LOOPED_CHARS, 3 * piece)
        if span > len(line):
            return None
        if line[-span + piece :] == line[-span:-piece]:
            begins = len(line) - span
            while begins > 0 and line[begins - 1] == line[begins - 1 + piece]:
                begins -= 1
            return begins, piece
    return None
