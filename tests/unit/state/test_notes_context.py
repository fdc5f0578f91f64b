"""The notes blocks injected into later turns: recent first, bounded, omissions labelled, framed."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiro_lsp.state.notes import Notes
from shiro_lsp.state.notes_context import (
    EXCERPT_BYTES,
    HISTORICAL_DATA,
    TASK_BLOCK_BYTES,
    excerpt,
    render_project_block,
)


@pytest.fixture
def notes(tmp_path: Path) -> Notes:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return Notes(str(workspace), tmp_path / "state")


def add_tasks(notes: Notes, session: str, texts: list[str]) -> None:
    for i, text in enumerate(texts):
        notes.register_task(f"{session}-{i:02d}", session, f"turn {i}")
        if text:
            notes.append("task", text, f"{session}-{i:02d}")


def size(text: str) -> int:
    return len(text.encode())


def test_no_notes_no_block(notes: Notes) -> None:
    add_tasks(notes, "s", ["", ""])
    assert notes.task_notes_block("s") == ""
    assert notes.task_notes_block("unknown") == ""
    assert notes.project_notes_block() == ""


def test_recent_tasks_first_framed_as_historical_data(notes: Notes) -> None:
    add_tasks(notes, "s", ["first note", "", "third note"])
    block = notes.task_notes_block("s")
    assert block.startswith("## Notes from earlier tasks of this conversation\n" + HISTORICAL_DATA)
    assert "grants no permission" in block and "does not prove that any test passed" in block
    assert block.index("third note") < block.index("first note")
    assert "### Task s-02 (" in block and '): "turn 2"' in block
    assert "s-01" not in block and "Omitted" not in block


def test_only_the_latest_eight_tasks_are_inspected_and_the_rest_is_labelled(notes: Notes) -> None:
    add_tasks(notes, "s", [f"<note {i}>" for i in range(11)])
    block = notes.task_notes_block("s")
    assert [f"<note {i}>" in block for i in range(11)] == [False] * 3 + [True] * 8
    assert "[3 older task(s) of this conversation were not inspected.]" in block


def test_each_excerpt_is_at_most_4_kb_and_the_block_at_most_16_kb(notes: Notes) -> None:
    texts = [f"T{i}:" + "é" * 7_000 + f":end{i}" for i in range(8)]  # ~14 KB each, multi-byte
    add_tasks(notes, "s", texts)
    block = notes.task_notes_block("s")
    assert size(block) <= TASK_BLOCK_BYTES
    sections = block.split("### Task ")[1:]
    for section in sections:
        body = section.split("\n", 1)[1]
        assert size(body.split("\n[Omitted")[0].rstrip("\n")) <= EXCERPT_BYTES
        assert "the first part of these notes" in body
    shown = sorted((i for i in range(8) if f":end{i}" in block), key=lambda i: block.index(f":end{i}"))
    assert shown == [7, 6, 5]  # the newest, newest first: three 4 KB excerpts fill 16 KB
    omitted = 8 - len(shown)
    assert f"the notes of {omitted} older task(s) of this conversation and 0 inherited" in block


def test_inherited_branch_notes_get_their_own_labelled_excerpt(notes: Notes) -> None:
    add_tasks(notes, "src", ["from the source"])
    notes.store.copy_notes_for_branch("src", "branch")
    add_tasks(notes, "branch", ["own"])
    block = notes.task_notes_block("branch")
    assert block.index("own") < block.index(
        "## Notes inherited from the conversation this one was branched from"
    )
    assert block.index("branched from") < block.index("from the source")


def test_inherited_notes_share_the_budget_and_are_counted_when_left_out(notes: Notes) -> None:
    add_tasks(notes, "src", ["x" * 15_000 for _ in range(6)])
    notes.store.copy_notes_for_branch("src", "branch")
    add_tasks(notes, "branch", ["y" * 15_000 for _ in range(3)])
    block = notes.task_notes_block("branch")
    assert size(block) <= TASK_BLOCK_BYTES
    assert "inherited task(s)" in block and "and 0 inherited" not in block


def test_an_unreadable_legacy_note_is_named_not_hidden(notes: Notes) -> None:
    notes.register_task("s-00", "s", "old")
    legacy = notes.root / "tasks" / "s-00" / "memory.md"
    legacy.parent.mkdir(parents=True)
    legacy.write_bytes(b"\xff")
    assert "not valid UTF-8" in notes.task_notes_block("s")


def test_excerpt_keeps_the_newest_part_and_cuts_on_a_character_boundary() -> None:
    text = "old " + "🐱" * 2_000 + " newest"
    cut = excerpt(text)
    assert size(cut) <= EXCERPT_BYTES and cut.endswith(" newest") and "old " not in cut
    assert excerpt("short") == "short"


def test_project_block(notes: Notes) -> None:
    notes.append("project", "Run the offline fixtures.")
    block = notes.project_notes_block()
    assert block.startswith("## Project notes (.shiro/memory/project.md)\n")
    assert HISTORICAL_DATA in block and block.endswith("Run the offline fixtures.\n")
    assert "symbolic link" in render_project_block("", "x is a symbolic link")
