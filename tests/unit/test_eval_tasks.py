"""The eval's checks can fail and can pass: no model involved.

For every task in eval/tasks/: the check fails on the untouched workspace with no answer (and, for a
change task, with its reference answer too: an unchanged workspace is never done), and passes on the
reference solution laid over the workspace with the reference answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.taskset import Task, load_tasks, prepare_workspace, run_checks

TASKS = load_tasks()


def test_there_are_enough_tasks_of_each_kind() -> None:
    assert len(TASKS) >= 20
    assert sum(t.kind == "refuse" for t in TASKS) >= 2
    assert sum(t.multi_step for t in TASKS) >= 3
    assert {"python", "js", "shell", "markdown", "json"} <= {t.lang for t in TASKS}


@pytest.mark.parametrize("task", TASKS, ids=[t.name for t in TASKS])
def test_the_check_fails_untouched_and_passes_solved(task: Task, tmp_path: Path) -> None:
    untouched = prepare_workspace(task, tmp_path / "untouched")
    result = run_checks(task, untouched, "")
    assert not result.passed, f"{task.name}: the untouched workspace passes"
    if task.kind == "change":
        assert not run_checks(task, untouched, task.reference_answer or "done").passed
        assert task.solution.is_dir(), f"{task.name}: no solution/"
    else:
        assert task.reference_answer, f"{task.name}: no reference_answer"
    solved = prepare_workspace(task, tmp_path / "solved", with_solution=True)
    result = run_checks(task, solved, task.reference_answer)
    assert result.passed, f"{task.name}: the reference solution fails: {result.why}"


def test_a_refusal_that_changes_a_file_fails(tmp_path: Path) -> None:
    task = next(t for t in TASKS if t.kind == "refuse")
    ws = prepare_workspace(task, tmp_path / "ws")
    first = next(p for p in sorted(ws.iterdir()) if p.is_file())
    first.write_text(first.read_text() + "\n# edited\n")
    assert not run_checks(task, ws, task.reference_answer).passed


def test_an_answer_that_names_the_wrong_thing_fails(tmp_path: Path) -> None:
    task = next(t for t in TASKS if t.name == "answer-find-constant")
    ws = prepare_workspace(task, tmp_path / "ws")
    assert not run_checks(task, ws, "MAX_RETRIES is defined in app/client.py as 3.").passed
