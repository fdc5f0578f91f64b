"""A reply stuck repeating itself. At temperature 0 a 1.5B model can write one line shape forever
(``assert clamp(10, -97, -97) == -97``, then -98, -99 …) until the request times out; the stream is
cut once the last lines have all had the same shape, and the model is asked once to write it again."""

from __future__ import annotations

import re

SAME_LINES = 40
"""Consecutive lines of one shape that make a loop (an answer's table or test list stays under it)."""
_DIGITS = re.compile(r"\d+")

CUT_NOTICE = "The model repeated one line over and over; Shiro cut its reply."
WRITE_AGAIN = (
    "Your reply kept repeating the same kind of line, so it was cut. Write it again, shorter, without "
    "repeating yourself."
)


def shape(line: str) -> str:
    return _DIGITS.sub("0", line.strip())


class RepetitionWatch:
    """Fed a reply as it streams; says when its last :data:`SAME_LINES` lines share one shape."""

    def __init__(self) -> None:
        self._line = ""
        """The line still being written."""
        self._line_start = 0
        self._shape = ""
        self._run = 0
        self.loop_starts = 0
        """Where in the reply the repeated lines began (meaningful once a loop was seen)."""

    def feed(self, text: str) -> bool:
        *ended, self._line = (self._line + text).split("\n")
        for line in ended:
            start, self._line_start = self._line_start, self._line_start + len(line) + 1
            if self._ended_line(line, start):
                return True
        return False

    def _ended_line(self, line: str, start: int) -> bool:
        current = shape(line)
        if not current:
            return False
        if current == self._shape:
            self._run += 1
        else:
            self._shape, self._run, self.loop_starts = current, 1, start
        return self._run >= SAME_LINES
