"""Line diffs of two texts: counts, hunks, a short unified diff, and putting hunks back.

Pure functions over strings. A *hunk* here is one contiguous changed region (no context lines),
so each block the editor shows as changed is one hunk the user can keep or undo on its own; the
unified diff shown on tool cards keeps the usual three lines of context.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

SHORT_DIFF_CHARS = 4_000
"""A tool card's diff is cut here (the whole change is one click away in the diff editor)."""


@dataclass(frozen=True)
class Hunk:
    index: int
    old_start: int
    """0-based index of the first replaced line in ``before``."""
    old_end: int
    new_start: int
    new_end: int

    @property
    def old_lines(self) -> int:
        return self.old_end - self.old_start

    @property
    def new_lines(self) -> int:
        return self.new_end - self.new_start

    def header(self) -> str:
        return f"@@ -{_range(self.old_start, self.old_lines)} +{_range(self.new_start, self.new_lines)} @@"

    def wire_old_start(self) -> int:
        """1-based, and for an empty range the line before it (unified-diff convention)."""
        return self.old_start + 1 if self.old_lines else self.old_start

    def wire_new_start(self) -> int:
        return self.new_start + 1 if self.new_lines else self.new_start


def _range(start: int, length: int) -> str:
    first = start + 1 if length else start
    return f"{first},{length}" if length != 1 else f"{first}"


def lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def hunks(before: str, after: str) -> list[Hunk]:
    a, b = lines(before), lines(after)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    out: list[Hunk] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            out.append(Hunk(len(out), i1, i2, j1, j2))
    return out


def counts(before: str, after: str) -> tuple[int, int]:
    """(lines added, lines deleted)."""
    found = hunks(before, after)
    return sum(h.new_lines for h in found), sum(h.old_lines for h in found)


def revert(before: str, after: str, indices: Iterable[int]) -> str:
    """``after`` with the listed hunks put back as they were in ``before``."""
    a, b = lines(before), lines(after)
    chosen = set(indices)
    found = hunks(before, after)
    unknown = sorted(i for i in chosen if i >= len(found))
    if unknown:
        raise IndexError(f"hunk {unknown[0]} does not exist (there are {len(found)})")
    out: list[str] = []
    cursor = 0
    for hunk in found:
        out.extend(b[cursor : hunk.new_start])
        out.extend(
            a[hunk.old_start : hunk.old_end] if hunk.index in chosen else b[hunk.new_start : hunk.new_end]
        )
        cursor = hunk.new_end
    out.extend(b[cursor:])
    return "".join(out)


def cut(text: str, limit: int = SHORT_DIFF_CHARS) -> str:
    """``text`` cut at ``limit`` characters, saying how much was left out."""
    if len(text) > limit:
        return text[:limit] + f"... [diff cut, {len(text) - limit} more chars]\n"
    return text


def unified(before: str | None, after: str | None, path: str, *, limit: int = SHORT_DIFF_CHARS) -> str:
    """A unified diff (3 lines of context) for a tool card, cut at ``limit`` characters."""
    old_name = f"a/{path}" if before is not None else "/dev/null"
    new_name = f"b/{path}" if after is not None else "/dev/null"
    body = difflib.unified_diff(lines(before or ""), lines(after or ""), old_name, new_name)
    text = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in body
    )
    return cut(text, limit)
