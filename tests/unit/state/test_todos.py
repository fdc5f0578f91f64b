"""The reference's todo catalogue (spec §13 test/todo.test.ts) and the rendered forms of §2.3."""

from __future__ import annotations

import pytest

from shiro_lsp.errors import BadParams
from shiro_lsp.state.todos import TaskList, Todo, parse_todos, restore_todos


def tasks(*items: tuple[str, str] | tuple[str, str, str]) -> TaskList:
    task_list = TaskList()
    task_list.replace([Todo(*item) for item in items])
    return task_list


def test_four_distinct_markers_and_blocked_is_bang() -> None:
    reply = TaskList().replace(
        [Todo("a", "done"), Todo("b", "in_progress"), Todo("c", "pending"), Todo("d", "blocked", "why")]
    )
    assert reply.splitlines()[1:5] == ["[x] a", "[~] b", "[ ] c", "[!] d  (why)"]


def test_progress_counts_and_current() -> None:
    progress = tasks(("a", "done"), ("b", "in_progress"), ("c", "pending"), ("d", "blocked", "x")).progress()
    assert (progress.done, progress.total, progress.blocked, progress.current) == (1, 4, 1, "b")


def test_blocked_note_rendered_and_header_counts_blocked() -> None:
    block = tasks(("a", "in_progress"), ("deploy", "blocked", "no credentials")).prompt_block()
    assert "[!] deploy  (no credentials)" in block
    assert block.startswith("\nYour task list (0/2 done, 1 blocked). Keep it current with todo_write:\n")


def test_header_omits_blocked_when_zero() -> None:
    assert "blocked" not in tasks(("a", "in_progress")).prompt_block()


def test_blocked_without_note_is_accepted_with_a_warning() -> None:
    reply = TaskList().replace([Todo("a", "in_progress"), Todo("ship", "blocked")])
    assert reply.endswith('Warning: "ship" is blocked with no note saying why.')


def test_nothing_in_progress_while_work_remains_warns() -> None:
    reply = TaskList().replace([Todo("a", "pending"), Todo("b", "done")])
    assert "Warning: nothing is in_progress; mark what you are working on." in reply


def test_all_done_has_no_warning() -> None:
    reply = TaskList().replace([Todo("a", "done"), Todo("b", "done")])
    assert reply.startswith("Task list updated: 2/2 done.") and "Warning" not in reply


def test_all_remaining_blocked_does_not_ask_for_in_progress() -> None:
    reply = TaskList().replace([Todo("a", "blocked", "x"), Todo("b", "done")])
    assert "Warning" not in reply


def test_two_in_progress_warns() -> None:
    assert "2 tasks are in_progress; keep it to one." in TaskList().replace(
        [Todo("a", "in_progress"), Todo("b", "in_progress")]
    )


def test_progress_line_is_40_cells() -> None:
    line = tasks(("a", "done"), ("b", "in_progress"), ("c", "pending"), ("d", "blocked", "x")).progress_line()
    assert line == "tasks " + "#" * 10 + "." * 30 + " 1/4  1 blocked"


def test_rendered_is_progress_line_then_tasks_and_empty_when_no_list() -> None:
    assert TaskList().rendered() == ""
    assert tasks(("a", "done")).rendered() == "tasks " + "#" * 40 + " 1/1\n[x] a"


def test_todos_panel_markdown() -> None:
    assert TaskList().markdown() == "No task list yet."
    assert tasks(("a", "blocked", "n")).markdown() == "- [!] a (n)"


def test_restore_keeps_valid_items_and_notes() -> None:
    restored = restore_todos(
        [{"content": "a", "status": "blocked", "note": "n"}, {"content": "b", "status": "odd"}, 3]
    )
    assert restored == [Todo("a", "blocked", "n")]


def test_parse_rejects_bad_items_with_their_index() -> None:
    with pytest.raises(BadParams, match=r"todos\[1\]\.status"):
        parse_todos([{"content": "a", "status": "done"}, {"content": "b", "status": "finished"}])
    with pytest.raises(BadParams, match="must be a list"):
        parse_todos("nope")


def test_replace_bumps_revision() -> None:
    task_list = TaskList()
    task_list.replace([Todo("a", "pending")])
    task_list.clear()
    assert task_list.rev == 2 and task_list.todos == []
