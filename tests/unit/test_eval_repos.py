"""The repository set: every task's check fails on the start state and passes on the reference solution.

The repositories are fetched at their pinned commits into the eval's cache, from a local git directory
only (EVAL_REPO_<NAME> or the mirror; never the network from a test), else the tests that need them
skip, saying why. By default the tests check the set's shape and that every injected bug, solution edit
and mutant applies to the pinned files (seconds). With EVAL_SETS_TESTS=1 each task's check also runs on
the start state and on the solution, in the repository's test virtualenv (installed from PyPI into the
cache on first use: a few minutes).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from eval import harnesses, repos, sources
from eval.taskset import Task, prepare_workspace, run_checks

TASKS = repos.load()
REPOS = repos.load_repos()
EVERY = os.environ.get("EVAL_SETS_TESTS") == "1"
SPECS = {t.name: json.loads((repos.TASKS_DIR / t.name / "task.json").read_text()) for t in TASKS}


def _local(repo: repos.Repo) -> bool:
    return sources.reachable(repo.pin, network=False)


def test_at_least_twelve_tasks_in_three_repositories_of_every_kind() -> None:
    assert len(TASKS) >= 12
    assert len({s["repo"] for s in SPECS.values()}) >= 3
    kinds = Counter(
        "bug" if s.get("inject") else "answer" if s["kind"] == "answer"
        else "test" if any("mutants" in c for c in s["checks"]) else "feature"
        for s in SPECS.values()
    )  # fmt: skip
    assert set(kinds) == {"bug", "feature", "test", "answer"}, kinds
    assert all(len(r.pin.commit) == 40 for r in REPOS.values())


def test_most_prompts_name_a_function_or_behaviour_not_a_source_file() -> None:
    names_a_source = [t.name for t in TASKS if re.search(r"[\w/]+\.py\b", t.prompt.replace("tests/", "@"))]
    assert len(names_a_source) <= len(TASKS) / 2, names_a_source


def test_a_bug_prompt_does_not_give_the_fix_away() -> None:
    for name, spec in SPECS.items():
        for edit in spec.get("inject", []):
            assert edit["search"] not in spec["prompt"] and edit["replace"] not in spec["prompt"], name


@pytest.mark.parametrize("key", sorted(REPOS))
def test_each_repository_holds_fifty_to_a_thousand_files(key: str) -> None:
    repo = REPOS[key]
    if not _local(repo):
        pytest.skip(f"{repo.pin.repo} is not available locally (set {repo.pin.env})")
    root = sources.checkout(repo.pin, network=False)
    files = [p for p in root.rglob("*") if p.is_file() and p.name != ".complete"]
    assert 50 <= len(files) <= 1000, len(files)


@pytest.mark.parametrize("task", TASKS, ids=[t.name for t in TASKS])
def test_every_edit_and_mutant_applies_once_to_the_pinned_files(task: Task) -> None:
    repo = REPOS[SPECS[task.name]["repo"]]
    if not _local(repo):
        pytest.skip(f"{repo.pin.repo} is not available locally (set {repo.pin.env})")
    root = sources.checkout(repo.pin, network=False)
    spec = SPECS[task.name]
    mutants = [m for c in spec["checks"] for m in c.get("mutants", [])]
    for edit in [*spec.get("inject", []), *spec.get("solution", []), *mutants]:
        text = (root / edit["file"]).read_text(encoding="utf-8")
        assert text.count(edit["search"]) == 1, f"{task.name}: {edit['search']!r} in {edit['file']}"


@pytest.mark.skipif(not EVERY, reason="runs each task's checks in the repository's venv: EVAL_SETS_TESTS=1")
@pytest.mark.parametrize("task", TASKS, ids=[t.name for t in TASKS])
def test_the_check_fails_on_the_start_and_passes_on_the_solution(task: Task, tmp_path: Path) -> None:
    repo = REPOS[SPECS[task.name]["repo"]]
    if not _local(repo):
        pytest.skip(f"{repo.pin.repo} is not available locally (set {repo.pin.env})")
    start = prepare_workspace(task, tmp_path / "start")
    assert not run_checks(task, start, "").passed
    readme = next(p for p in sorted(start.iterdir()) if p.name.startswith("README"))
    readme.write_text(readme.read_text() + "\n")  # a change, so the checks themselves must fail
    wrong = "It is somewhere in the code." if task.kind == "answer" else "done"
    result = run_checks(task, start, wrong)
    assert not result.passed, f"{task.name}: the start state passes"
    solved = prepare_workspace(task, tmp_path / "solved", with_solution=True)
    result = run_checks(task, solved, task.reference_answer or "done")
    assert result.passed, f"{task.name}: the reference solution fails: {result.why}"
    if SPECS[task.name].get("inject"):
        assert (tmp_path / "solved").joinpath(SPECS[task.name]["inject"][0]["file"]).read_text() == (
            repo.pristine / SPECS[task.name]["inject"][0]["file"]
        ).read_text()


@pytest.mark.skipif(not EVERY, reason="builds a task folder in the repository's venv: EVAL_SETS_TESTS=1")
def test_the_start_is_a_clean_git_repository_that_aider_maps_itself(tmp_path: Path) -> None:
    task = next(t for t in TASKS if SPECS[t.name].get("inject"))
    repo = REPOS[SPECS[task.name]["repo"]]
    if not _local(repo):
        pytest.skip(f"{repo.pin.repo} is not available locally (set {repo.pin.env})")
    ws = prepare_workspace(task, tmp_path / "ws")
    status = subprocess.run(["git", "-C", str(ws), "status", "--porcelain"], capture_output=True, text=True)
    log = subprocess.run(["git", "-C", str(ws), "log", "--oneline"], capture_output=True, text=True)
    assert status.returncode == 0 and status.stdout == "" and len(log.stdout.splitlines()) == 1
    inv = harnesses.invocation("aider", "p", ws, tmp_path / "home", "http://127.0.0.1:9/v1", "m")
    assert "--no-git" not in inv.argv and "--no-auto-commits" in inv.argv
    assert inv.argv[-2:] == ["--message", "p"]  # no files added to the chat: its repository map finds them
