"""edit_file's second chance: an oldString that matches whole lines once the indentation is ignored.

Small models copy code with its indentation changed: the block without its leading spaces, or
with two spaces where the file has four on every line. As Aider and Cline do, a failed exact match
is tried again line by line with each line's leading and trailing whitespace ignored. It is used
only when it finds exactly one place; the replacement then gets the file's indentation back when
the two differ by the same prefix on every line. Anything else (two places, indentation that
differs unevenly) is refused with the file's own lines, so the next try can copy them.
Nothing else is forgiven: the words and their order must match, so no near miss is ever edited.
"""

from __future__ import annotations

from dataclasses import dataclass

from shiro_lsp.errors import ToolError


@dataclass(frozen=True)
class LooseMatch:
    start: int
    """Offset of the first matched line in the text."""
    end: int
    """Offset of the end of the last matched line (before its line break)."""
    lines: list[str]
    """The file's matched lines, without line breaks."""


def _trimmed(lines: list[str]) -> list[str]:
    """The lines without blank lines at either end."""
    first = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    last = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip()), -1)
    return lines[first : last + 1]


def _lines_of(text: str) -> list[str]:
    return [line.rstrip("\r") for line in text.split("\n")]


def loose_matches(text: str, old: str) -> list[LooseMatch]:
    """Every run of whole lines of ``text`` equal to ``old``'s lines with indentation ignored."""
    wanted = [line.strip() for line in _trimmed(_lines_of(old))]
    if not wanted:
        return []
    rows = text.split("\n")
    stripped = [row.strip() for row in rows]
    offsets: list[int] = []
    at = 0
    for row in rows:
        offsets.append(at)
        at += len(row) + 1
    found: list[LooseMatch] = []
    for i in range(len(rows) - len(wanted) + 1):
        if stripped[i : i + len(wanted)] == wanted:
            last = rows[i + len(wanted) - 1]
            end = offsets[i + len(wanted) - 1] + len(last.rstrip("\r"))
            found.append(LooseMatch(offsets[i], end, [r.rstrip("\r") for r in rows[i : i + len(wanted)]]))
    return found


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _shift(file_lines: list[str], old_lines: list[str]) -> tuple[str, str] | None:
    """(removed, added): the one indentation change that turns every old line into the file's."""
    pairs = [(_indent(f), _indent(o)) for f, o in zip(file_lines, old_lines, strict=True) if f.strip()]
    for file_indent, old_indent in pairs:
        if file_indent.startswith(old_indent):
            shift = ("", file_indent[len(old_indent) :])
        elif old_indent.startswith(file_indent):
            shift = (old_indent[len(file_indent) :], "")
        else:
            return None
        break
    else:
        return ("", "")
    removed, added = shift
    for file_indent, old_indent in pairs:
        if not old_indent.startswith(removed) or added + old_indent[len(removed) :] != file_indent:
            return None
    return shift


def _reindent(new: str, removed: str, added: str, newline: str) -> str:
    out: list[str] = []
    for line in _trimmed(_lines_of(new)):
        if line.strip():
            line = added + (line[len(removed) :] if line.startswith(removed) else line.lstrip())
        out.append(line)
    return newline.join(out)


def loose_replace(text: str, old: str, new: str, where: str) -> str | None:
    """``text`` with the one loose match of ``old`` replaced by ``new`` (re-indented), None when
    there is no loose match, or a ToolError when the match is ambiguous or unevenly indented."""
    found = loose_matches(text, old)
    if not found:
        return None
    if len(found) > 1:
        raise ToolError(
            f"{where}: oldString is not in the file exactly, and ignoring indentation it matches "
            f"{len(found)} places. Copy it exactly from the file, with more lines around it."
        )
    match = found[0]
    shift = _shift(match.lines, _trimmed(_lines_of(old)))
    if shift is None:
        shown = "\n".join(match.lines)
        raise ToolError(
            f"{where}: oldString's indentation differs from the file's. The file has these lines; "
            f"copy them exactly:\n{shown}"
        )
    newline = "\r\n" if "\r\n" in text else "\n"
    return text[: match.start] + _reindent(new, *shift, newline) + text[match.end :]
