"""The Exercism set: its checks fail on the stub and pass on the exercise's own example solution.

The exercises are fetched at the pinned commit into the eval's cache, from a local git directory only
(EVAL_EXERCISM_SOURCE or the mirror; never the network from a test): without one the tests that need
the files are skipped, saying why. By default three exercises are checked (a few seconds); every one of
them with EVAL_SETS_TESTS=1 (about five minutes on two cores).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from eval import exercism, sources
from eval.taskset import Task, prepare_workspace, run_checks

TASKS = exercism.load()
EVERY = os.environ.get("EVAL_SETS_TESTS") == "1"
SAMPLE = {"exercism-leap", "exercism-grains", "exercism-acronym"}
CHECKED = [t for t in TASKS if EVERY or t.name in SAMPLE]
needs_source = pytest.mark.skipif(
    not sources.reachable(exercism.PIN, network=False),
    reason=f"exercism/python at {exercism.PIN.commit[:12]} is neither cached nor in a local git directory "
    f"(set EVAL_EXERCISM_SOURCE, or run `python -m eval --set exercism` once to fetch it)",
)


def test_there_are_at_least_forty_distinct_exercises_with_one_plain_prompt() -> None:
    assert len(TASKS) >= 40 and len({t.name for t in TASKS}) == len(TASKS)
    assert set(re.findall(r"\{(\w+)\}", exercism.TEMPLATE)) == {"stub", "tests", "instructions"}
    leap = next(t for t in TASKS if t.name == "exercism-leap")
    assert leap.prompt == exercism.TEMPLATE.format(
        stub="leap.py", tests="leap_test.py", instructions="instructions.md"
    )
    assert len(exercism.PIN.commit) == 40


def _stub(task: Task) -> str:
    return task.placeholders["stub"]


@needs_source
@pytest.mark.parametrize("task", CHECKED, ids=[t.name for t in CHECKED])
def test_the_check_fails_on_the_stub_and_passes_on_the_example(task: Task, tmp_path: Path) -> None:
    untouched = prepare_workspace(task, tmp_path / "untouched")
    assert sorted(p.name for p in untouched.iterdir()) == sorted(
        [_stub(task), task.placeholders["tests"], "instructions.md"]
    )
    assert not run_checks(task, untouched, "").passed
    stub = untouched / _stub(task)
    stub.write_text(stub.read_text() + "\n# started\n")
    result = run_checks(task, untouched, "done")
    assert not result.passed and "pytest" in result.why, f"{task.name}: the stub passes: {result.why}"
    solved = prepare_workspace(task, tmp_path / "solved", with_solution=True)
    result = run_checks(task, solved, "done")
    assert result.passed, f"{task.name}: the example fails: {result.why}"


@needs_source
def test_the_original_tests_decide_not_the_workspace_copy(tmp_path: Path) -> None:
    task = next(t for t in TASKS if t.name == "exercism-leap")
    ws = prepare_workspace(task, tmp_path / "ws")
    (ws / "leap_test.py").write_text("def test_nothing():\n    pass\n")
    (ws / "conftest.py").write_text("collect_ignore_glob = ['*_test.py']\n")
    result = run_checks(task, ws, "done")
    assert not result.passed, result.why
    assert "exited 1" in result.why, result.why


@needs_source
def test_the_instructions_are_the_docs_and_their_appendix(tmp_path: Path) -> None:
    task = next(t for t in TASKS if t.name == "exercism-grains")
    ws = prepare_workspace(task, tmp_path / "ws")
    docs = exercism.PIN.dest / exercism.PRACTICE / "grains" / ".docs"
    text = (ws / "instructions.md").read_text()
    body, appendix = (
        (docs / "instructions.md").read_text().strip(),
        (docs / "instructions.append.md").read_text().strip(),
    )
    assert text.index(body) < text.index(appendix)
    assert not (ws / ".docs").exists() and not (ws / ".meta").exists()
