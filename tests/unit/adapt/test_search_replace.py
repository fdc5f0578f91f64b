"""Search/replace blocks in a reply: read as edit_file calls, applied by edit_file's own matching."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiro_lsp.adapt.formats.search_replace import (
    EditBlock,
    block_calls,
    call_of,
    edit_blocks,
    has_edit_blocks,
    is_long,
    without_blocks,
)
from shiro_lsp.errors import ToolError
from shiro_lsp.tools.base import ToolContext
from shiro_lsp.tools.files import EDIT_FILE

ORCHARD = """def ripe(apples):
    return [a for a in apples if a.colour == "red"]


def count(apples):
    total = 0
    for apple in apples:
        total += 1
    return total
"""


def block(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def test_a_fenced_block_under_its_path_is_read() -> None:
    reply = (
        "The colour check is too strict.\n\norchard.py\n```python\n"
        + block(
            '    return [a for a in apples if a.colour == "red"]\n',
            "    return [a for a in apples if a.ripe]\n",
        )
        + "```\nThat is all."
    )
    (found,) = edit_blocks(reply)
    assert found.path == "orchard.py"
    assert found.search == '    return [a for a in apples if a.colour == "red"]\n'
    assert found.replace == "    return [a for a in apples if a.ripe]\n"
    assert without_blocks(reply, [found]) == "The colour check is too strict.\n\nThat is all."


def test_the_path_may_be_the_fences_first_line_and_a_next_block_may_leave_it_out() -> None:
    reply = "```\n`src/orchard.py`\n" + block("a\n", "b\n") + "```\n\n```\n" + block("c\n", "d\n") + "```\n"
    assert [(b.path, b.search, b.replace) for b in edit_blocks(reply)] == [
        ("src/orchard.py", "a\n", "b\n"),
        ("src/orchard.py", "c\n", "d\n"),
    ]


def test_unclosed_or_pathless_blocks_are_not_edits() -> None:
    assert edit_blocks("Here:\n" + block("a\n", "b\n")) == []  # no path anywhere
    assert edit_blocks("orchard.py\n<<<<<<< SEARCH\na\n=======\nb\n") == []  # never closed


def test_an_empty_search_creates_a_new_file_and_edit_file_refuses_it_for_an_existing_one() -> None:
    new = EditBlock("basket.py", "", "EMPTY = []\n", (0, 0))
    assert call_of(new, lambda path: False) == (
        "write_file",
        {"path": "basket.py", "content": "EMPTY = []\n"},
    )
    assert call_of(new, lambda path: True) == (
        "edit_file",
        {"path": "basket.py", "oldString": "", "newString": "EMPTY = []\n"},
    )


def test_a_reply_s_blocks_are_its_calls_and_its_prose_stays(tmp_path: Path) -> None:
    (tmp_path / "orchard.py").write_text(ORCHARD)
    reply = "Counting with len.\n\norchard.py\n" + block("    total = 0\n", "    total = len(apples)\n")
    calls, prose, notice = block_calls(reply, tmp_path)
    assert calls == [
        (
            "edit_file",
            {"path": "orchard.py", "oldString": "    total = 0\n", "newString": "    total = len(apples)\n"},
        )
    ]
    assert prose == "Counting with len." and "orchard.py" in notice
    assert block_calls("no blocks here", tmp_path) == ([], "no blocks here", "")


async def applied(workspace: Path, reply: str) -> str:
    for found in edit_blocks(reply):
        call = call_of(found, lambda path: (workspace / path).exists())
        assert call[0] == "edit_file"
        await EDIT_FILE.run(call[1], ToolContext(workspace=workspace))
    return (workspace / "orchard.py").read_text()


async def test_blocks_are_applied_exactly_or_with_the_indentation_forgiven(tmp_path: Path) -> None:
    (tmp_path / "orchard.py").write_text(ORCHARD)
    exact = "orchard.py\n" + block("    total = 0\n", "    total = len(apples)\n")
    assert "total = len(apples)" in await applied(tmp_path, exact)
    unindented = "orchard.py\n" + block("for apple in apples:\n    total += 1\n", "pass\n")
    assert await applied(tmp_path, unindented) == ORCHARD.replace(
        "    total = 0\n", "    total = len(apples)\n"
    ).replace("    for apple in apples:\n        total += 1\n", "    pass\n")


@pytest.mark.parametrize(
    ("search", "said"),
    [("    return total * 2\n", "not found"), ("(apples):\n", "appears 2 times")],
)
async def test_a_block_found_nowhere_or_in_several_places_is_not_applied(
    tmp_path: Path, search: str, said: str
) -> None:
    (tmp_path / "orchard.py").write_text(ORCHARD)
    with pytest.raises(ToolError, match=said):
        await applied(tmp_path, "orchard.py\n" + block(search, "x\n"))
    assert (tmp_path / "orchard.py").read_text() == ORCHARD


def test_a_reply_is_told_by_its_head_and_a_long_file_by_its_size() -> None:
    assert has_edit_blocks("x.py\n<<<<<<< SEARCH\n") and not has_edit_blocks("a ======= b")
    assert is_long("x\n" * 200) and is_long("x" * 7_000) and not is_long(ORCHARD)
