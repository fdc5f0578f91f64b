"""A reply that starts over. A small model at temperature 0 that has written its answer (the files it
changes, some prose) may write the whole answer again, word for word, and again, until the request
times out. Each pass is the same as the first, so the first is all there is: the stream is cut where
the second pass began, the first stands (its files are written), and nothing is sent back.

Only a repeat that runs on past the end of a fenced block counts: a file written out a second time
with a change near its top repeats the first listing's end, but not what came after it."""

from __future__ import annotations

import re
from collections.abc import Callable

from shiro_lsp.adapt.formats.echoes import Shown
from shiro_lsp.adapt.reflections.base import Reflection, TurnFacts

REPEATED_CHARS = 1_200
"""A stretch written again word for word must be this long to be a restart (about 30 lines of code)."""
PAST_THE_BLOCK = 80
"""The repeat must run on this far past the end of the block it is in (a line or two of what followed
it the first time)."""
_CHECK_EVERY = 200
"""Characters the reply grows between two checks."""
_FENCE_LINE = re.compile(r"^[ \t]{0,8}(`{3,}|~{3,})", re.M)

RESTART_NOTICE = "The model began its reply again, word for word; Shiro cut it where it started over."


class RestartCut(Reflection):
    """A reply that writes again, word for word, a long stretch it already wrote, on past the end of a
    fenced block, is cut where the repeat began (after the block it began in): the first pass stands."""

    name = group = "restart_cut"
    cut_notice = RESTART_NOTICE

    def watch(self, facts: TurnFacts, shown: Callable[[], Shown]) -> RestartWatch:
        return RestartWatch()


class RestartWatch:
    """Fed a reply as it streams; says when it has started over, and where to cut it."""

    def __init__(self) -> None:
        self._text = ""
        self._checked_at = 0
        self.keep_until = 0

    def feed(self, text: str) -> bool:
        self._text += text
        if len(self._text) - self._checked_at < _CHECK_EVERY:
            return False
        self._checked_at = len(self._text)
        cut = restart_point(self._text)
        if cut is None:
            return False
        self.keep_until = cut
        return True


def restart_point(text: str) -> int | None:
    """Where ``text`` started over (see the module docstring), or None."""
    tail = len(text) - REPEATED_CHARS
    if tail < REPEATED_CHARS:
        return None
    earlier = text.rfind(text[tail:], 0, len(text) - 1)
    if earlier < 0:
        return None
    begins = tail
    while earlier > 0 and text[begins - 1] == text[earlier - 1]:
        begins, earlier = begins - 1, earlier - 1
    cut = _outside_blocks(text, begins)
    return cut if cut is not None and len(text) - cut >= PAST_THE_BLOCK else None


def _outside_blocks(text: str, at: int) -> int | None:
    """``at``, or, when it falls inside a fenced block, the end of that block's closing line (None:
    the block is still open)."""
    fences = list(_FENCE_LINE.finditer(text))
    open_before = sum(1 for m in fences if m.start() < at) % 2 == 1
    if not open_before:
        return at
    closing = next((m for m in fences if m.start() >= at), None)
    if closing is None:
        return None
    line_end = text.find("\n", closing.end())
    return len(text) if line_end < 0 else line_end + 1
