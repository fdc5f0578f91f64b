"""Search/replace blocks: the edit format for files too long to write out whole (Aider's ``diff``
format, which small models follow): the file's path alone on a line, then

    <<<<<<< SEARCH
    lines copied from the file
    =======
    the lines that replace them
    >>>>>>> REPLACE

in a fence or not. Each block becomes an ``edit_file`` call (``oldString``/``newString``), so it
gets edit_file's matching (exact, then whole lines with their indentation ignored, used only when
that finds one place), its refusals (a SEARCH found nowhere, found in several places, or empty is
not applied, and the result says which) and the approvals, checkpoints and limits of any call. A
block with an empty SEARCH creates a file that does not exist yet (``write_file``). The path may
also be the fence's first line, or be left out of a block that follows another block of the same
file. Files longer than :data:`LONG_FILE_LINES` lines are changed so (the view says which).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shiro_lsp.errors import ShiroError, ToolError
from shiro_lsp.fs.jail import Roots, locate

HEAD = re.compile(r"^\s*<{5,9} ?SEARCH\b.*$")
DIVIDER = re.compile(r"^\s*={5,9}\s*$")
TAIL = re.compile(r"^\s*>{5,9} ?REPLACE\b.*$")
_FENCE = re.compile(r"^\s*`{3,}[\w+#.-]*\s*$")
_PATH = re.compile(
    r"^[\s#*>`-]*[`*'\"]*(?P<path>[\w./-]*[\w-]\.[A-Za-z0-9]{1,8}|[\w./-]*(?:Makefile|Dockerfile))[`*'\":]*\s*$"
)
MAX_PATH_LOOKBACK = 3
"""Lines above a block (fences skipped) where its path may be."""

LONG_FILE_LINES = 150
LONG_FILE_CHARS = 6_000
"""A file longer than this is changed with blocks, not written out whole."""
HOW = (
    "Change {files} with SEARCH/REPLACE blocks, never by writing a long file out whole: the file's path alone on a "
    "line, then a line <<<<<<< SEARCH, the lines to change copied exactly from the file, a line "
    "=======, their new lines, a line >>>>>>> REPLACE."
)
"""Said once with the workspace view when it shows a long file (``files``: those it shows)."""


@dataclass(frozen=True)
class EditBlock:
    path: str
    search: str
    replace: str
    span: tuple[int, int]
    """Where the block is in the reply, its path line and fences included."""


def has_edit_blocks(text: str) -> bool:
    return any(HEAD.match(line) for line in text.splitlines())


def edit_blocks(text: str) -> list[EditBlock]:
    """The complete search/replace blocks of a reply, in order; a block whose file cannot be told
    (no path near it, none before it) or that is not closed is left out."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    blocks: list[EditBlock] = []
    last_path: str | None = None
    row = 0
    while row < len(lines):
        if not HEAD.match(lines[row]):
            row += 1
            continue
        found = _path_above(lines, row)
        path = found[0] if found else last_path
        parts = _parts(lines, row)
        if parts is None:
            break
        search, replace, end = parts
        if path is not None:
            start_row = found[1] if found else row
            end_row = _closing_fence(lines, end, start_row)
            blocks.append(EditBlock(path, search, replace, (offsets[start_row], offsets[end_row])))
            last_path = path
        row = end
    return blocks


def _path_above(lines: list[str], head: int) -> tuple[str, int] | None:
    """The path on a line just above the block (fence lines may come between) and its row."""
    row = head - 1
    looked = 0
    while row >= 0 and looked < MAX_PATH_LOOKBACK:
        line = lines[row].strip()
        fence = _FENCE.match(line)
        match = _PATH.match(line) if not fence else None
        if match is not None:
            return match.group("path").removeprefix("./"), row
        if not fence:
            return None
        row -= 1
        looked += 1
    return None


def _parts(lines: list[str], head: int) -> tuple[str, str, int] | None:
    """SEARCH and REPLACE text of the block at ``head``, and the row after its tail; None when the
    block is not closed."""
    row = head + 1
    search: list[str] = []
    while row < len(lines) and not DIVIDER.match(lines[row]):
        if HEAD.match(lines[row]) or TAIL.match(lines[row]):
            return None
        search.append(lines[row])
        row += 1
    if row == len(lines):
        return None
    row += 1
    replace: list[str] = []
    while row < len(lines) and not TAIL.match(lines[row]):
        if HEAD.match(lines[row]) or DIVIDER.match(lines[row]):
            return None
        replace.append(lines[row])
        row += 1
    if row == len(lines):
        return None
    return "".join(search), "".join(replace), row + 1


def _closing_fence(lines: list[str], after: int, start: int) -> int:
    """The row after the block's closing fence, when a fence opened it."""
    opened = any(_FENCE.match(lines[row]) for row in range(start, after))
    if opened and after < len(lines) and _FENCE.match(lines[after]):
        return after + 1
    return after


def is_long(content: str) -> bool:
    return content.count("\n") + 1 > LONG_FILE_LINES or len(content) > LONG_FILE_CHARS


def call_of(block: EditBlock, exists: Callable[[str], bool]) -> tuple[str, dict[str, str]]:
    """The tool call a block is: ``edit_file``, or ``write_file`` for a new file (an empty SEARCH).
    An empty SEARCH for a file that exists is edit_file's refusal to tell the model."""
    if not block.search.strip() and not exists(block.path):
        return "write_file", {"path": block.path, "content": block.replace}
    return "edit_file", {"path": block.path, "oldString": block.search, "newString": block.replace}


def block_calls(text: str, workspace: Roots) -> tuple[list[tuple[str, dict[str, str]]], str, str]:
    """The calls a reply's blocks are, its prose, and the notice that says so (none: no blocks)."""
    blocks = edit_blocks(text)
    if not blocks:
        return [], text, ""
    calls = [call_of(block, lambda path: _exists(workspace, path)) for block in blocks]
    paths = ", ".join(dict.fromkeys(block.path for block in blocks))
    notice = f"The model wrote SEARCH/REPLACE blocks for {paths}; Shiro applies them (edit_file)."
    return calls, without_blocks(text, blocks), notice


def _exists(workspace: Roots, path: str) -> bool:
    try:
        return locate(workspace, path)[1].exists()
    except (ShiroError, ToolError, OSError, ValueError):
        return False


def without_blocks(text: str, blocks: Sequence[EditBlock]) -> str:
    """The reply's prose: the text with its blocks taken out."""
    out, at = [], 0
    for block in sorted(blocks, key=lambda item: item.span):
        out.append(text[at : block.span[0]])
        at = block.span[1]
    out.append(text[at:])
    return re.sub(r"\n{3,}", "\n\n", "".join(out)).strip()
