"""Line diffs of two texts: counts, hunks, a short unified diff, and putting hunks back.

Pure functions over strings. A *hunk* here is one contiguous changed region (no context lines),
so each block the editor shows as changed is one hunk the user can keep or undo on its own; the
unified diff shown on tool cards keeps the usual three lines of context.
"""

from __future__ import annotations

import difflib
import operator
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


Opcode = tuple[str, int, int, int, int]


def opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """difflib's opcodes, with the common head and tail matched first (edits are usually local,
    and ``SequenceMatcher`` is slow on long runs of repeated lines such as blank ones)."""
    limit = min(len(a), len(b))
    head = _common_run(a, b, limit)
    tail = _common_run(reversed(a[head:]), reversed(b[head:]), limit - head)
    middle_a, middle_b = a[head : len(a) - tail], b[head : len(b) - tail]
    out: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    if middle_a and middle_b and set(middle_a).isdisjoint(middle_b):
        out.append(("replace", head, len(a) - tail, head, len(b) - tail))  # what difflib would say
    elif middle_a or middle_b:
        matcher = difflib.SequenceMatcher(None, middle_a, middle_b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            out.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        out.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return out


_OTHER_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")
_OTHER_BREAKS_WIDE = ("\x85", "\u2028", "\u2029")
"""Line breaks ``str.splitlines`` knows besides "\\n": a text with none is split on "\\n" alone."""


def _only_newlines(text: str) -> bool:
    """Whether "\\n" is the only line break in ``text`` (each ``in`` is a fast search in C)."""
    if any(mark in text for mark in _OTHER_BREAKS):
        return False
    return text.isascii() or not any(mark in text for mark in _OTHER_BREAKS_WIDE)


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix: slices compared in C, halving the range each time."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while hi - lo > 1:  # a[:lo] == b[:lo], a[:hi] != b[:hi]
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def _common_suffix(a: str, b: str, bound: int) -> int:
    """Length of the longest common suffix, at most ``bound``."""
    lo, hi = 0, bound
    if hi <= 0 or a[len(a) - hi :] == b[len(b) - hi :]:
        return max(hi, 0)
    while hi - lo > 1:  # the last lo characters agree, the last hi do not
        mid = (lo + hi) // 2
        if a[len(a) - mid : len(a) - lo] == b[len(b) - mid : len(b) - lo]:
            lo = mid
        else:
            hi = mid
    return lo


def _window(before: str, after: str, context: int) -> tuple[int, list[str], list[str]] | None:
    """The changed lines and ``context`` lines either side, found without splitting the rest.

    Returns (the window's first line number, its lines in ``before``, its lines in ``after``): the
    lines outside are the same in both, so :func:`opcodes` of the window, shifted by that number,
    are the opcodes of the whole texts. None when a text has line breaks other than "\\n" (then
    the whole texts are split, as ``str.splitlines`` splits them).
    """
    if not (_only_newlines(before) and _only_newlines(after)):
        return None
    cut = before.rfind("\n", 0, _common_prefix(before, after)) + 1  # the whole lines both start with
    same = _common_suffix(before, after, min(len(before), len(after)) - cut)
    end_a, end_b = len(before) - same, len(after) - same
    if not ((end_a == 0 or before[end_a - 1] == "\n") and (end_b == 0 or after[end_b - 1] == "\n")):
        newline = before.find("\n", end_a)  # the common tail starts at a line start in both
        step = (newline + 1 if newline != -1 else len(before)) - end_a
        end_a, end_b = end_a + step, end_b + step
    start = cut
    for _ in range(context):
        if start == 0:
            break
        start = before.rfind("\n", 0, start - 1) + 1
    for _ in range(context):
        if end_a == len(before):
            break
        newline = before.find("\n", end_a)
        step = (newline + 1 if newline != -1 else len(before)) - end_a
        end_a, end_b = end_a + step, end_b + step
    return before.count("\n", 0, start), lines(before[start:end_a]), lines(after[start:end_b])


def _windowed(before: str, after: str, context: int) -> tuple[int, list[str], list[str], list[Opcode]]:
    """(offset, lines of before, lines of after, their opcodes): the lines may be a window (see
    :func:`_window`) starting at line ``offset`` of the texts."""
    window = _window(before, after, context)
    if window is None:
        a, b = lines(before), lines(after)
        return 0, a, b, opcodes(a, b)
    offset, a, b = window
    return offset, a, b, opcodes(a, b)


def _common_run(a: Iterable[str], b: Iterable[str], limit: int) -> int:
    """How many leading items of ``a`` and ``b`` are equal (at most ``limit``), compared in C."""
    same = list(map(operator.eq, a, b))
    try:
        return min(same.index(False), limit)
    except ValueError:
        return min(len(same), limit)


def hunks(before: str, after: str) -> list[Hunk]:
    out: list[Hunk] = []
    offset, _, _, codes = _windowed(before, after, 0)
    for tag, i1, i2, j1, j2 in codes:
        if tag != "equal":
            out.append(Hunk(len(out), i1 + offset, i2 + offset, j1 + offset, j2 + offset))
    return out


def counts(before: str, after: str) -> tuple[int, int]:
    """(lines added, lines deleted): the one count of a change that every card and row shows."""
    return _tally(_windowed(before, after, 0)[3])


def _tally(codes: list[Opcode]) -> tuple[int, int]:
    added = sum(j2 - j1 for tag, _, _, j1, j2 in codes if tag != "equal")
    deleted = sum(i2 - i1 for tag, i1, i2, _, _ in codes if tag != "equal")
    return added, deleted


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


def _grouped(codes: list[Opcode], context: int = 3) -> list[list[Opcode]]:
    """Changes with ``context`` lines around them, near ones merged (difflib's grouping)."""
    if not codes or all(code[0] == "equal" for code in codes):
        return []
    codes = list(codes)
    if codes[0][0] == "equal":
        _, i1, i2, j1, j2 = codes[0]
        codes[0] = ("equal", max(i1, i2 - context), i2, max(j1, j2 - context), j2)
    if codes[-1][0] == "equal":
        _, i1, i2, j1, j2 = codes[-1]
        codes[-1] = ("equal", i1, min(i2, i1 + context), j1, min(j2, j1 + context))
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > context * 2:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups


def _line(prefix: str, text: str) -> str:
    return prefix + text if text.endswith("\n") else prefix + text + "\n\\ No newline at end of file\n"


def unified(before: str | None, after: str | None, path: str, *, limit: int = SHORT_DIFF_CHARS) -> str:
    """A unified diff (3 lines of context) for a tool card, cut at ``limit`` characters."""
    return card(before, after, path, limit=limit)[2]


def card(
    before: str | None, after: str | None, path: str, *, limit: int = SHORT_DIFF_CHARS
) -> tuple[int, int, str]:
    """(lines added, lines deleted, the unified diff) from one comparison."""
    offset, a, b, codes = _windowed(before or "", after or "", 3)
    added, deleted = _tally(codes)
    return added, deleted, _unified(a, b, codes, before is not None, after is not None, path, limit, offset)


def _unified(
    a: list[str],
    b: list[str],
    codes: list[Opcode],
    old: bool,
    new: bool,
    path: str,
    limit: int,
    offset: int = 0,
) -> str:
    """``offset``: the line number of ``a[0]`` and ``b[0]`` in the texts (a window of them)."""
    groups = _grouped(codes)
    if not groups:
        return ""
    out = [f"--- {'a/' + path if old else '/dev/null'}\n"]
    out.append(f"+++ {'b/' + path if new else '/dev/null'}\n")
    for group in groups:
        first, last = group[0], group[-1]
        old_range = _range(first[1] + offset, last[2] - first[1])
        new_range = _range(first[3] + offset, last[4] - first[3])
        out.append(f"@@ -{old_range} +{new_range} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(_line(" ", text) for text in a[i1:i2])
                continue
            out.extend(_line("-", text) for text in a[i1:i2])
            out.extend(_line("+", text) for text in b[j1:j2])
        if len(out) > limit:  # enough lines for the card already
            break
    return cut("".join(out), limit)
