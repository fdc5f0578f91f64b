"""shiro_lsp/fs/git.py is the one place Shiro starts git (issue 20), and its bounds hold."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import shiro_lsp
from shiro_lsp.fs.git import run_git

PACKAGE = Path(shiro_lsp.__file__).parent
RUNNER = PACKAGE / "fs" / "git.py"
STARTERS = {"Popen", "run", "call", "check_call", "check_output", "create_subprocess_exec", "execvp"}


def _starts_git(call: ast.Call) -> bool:
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if name not in STARTERS or not call.args:
        return False
    first = call.args[0]
    if isinstance(first, ast.List | ast.Tuple) and first.elts:
        first = first.elts[0]
    return isinstance(first, ast.Constant) and first.value == "git"


def test_no_module_but_the_runner_starts_git() -> None:
    starters = [
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in PACKAGE.rglob("*.py")
        if path != RUNNER
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and _starts_git(node)
    ]
    assert starters == []


def test_output_past_the_limit_stops_git_and_keeps_the_head(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    for i in range(30):
        subprocess.run(
            [
                "git",
                "-c",
                "user.email=t@e",
                "-c",
                "user.name=t",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                f"c{i}",
            ],
            cwd=tmp_path,
            check=True,
        )
    whole = run_git(tmp_path, ["log", "--format=%s"])
    assert whole.ok and not whole.truncated and whole.out.count(b"\n") == 30
    head = run_git(tmp_path, ["log", "--format=%s"], limit=10)
    assert head.ok and head.truncated and head.out == whole.out[:10]


def test_git_outside_a_repository_fails_with_its_message(tmp_path: Path) -> None:
    done = run_git(tmp_path, ["status"])
    assert not done.ok and "not a git repository" in done.err.lower()


def test_a_filter_driver_whose_name_holds_an_equals_sign_stops_git(tmp_path: Path) -> None:
    """``-c filter.a=b.clean=`` would name another key: git is not run at all."""
    marker = tmp_path / "ran"
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "config", "filter.a=b.clean", f"touch {marker}; cat"], cwd=repo, check=True)
    (repo / ".gitattributes").write_text("* filter=a=b\n")
    (repo / "f.txt").write_text("x\n")
    done = run_git(repo, ["status", "--porcelain"])
    assert not done.ok and done.problem is not None and "'='" in done.problem
    assert not marker.exists()


def test_core_worktree_cannot_point_git_outside_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("not the workspace's\n")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "inside.txt").write_text("x\n")
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    subprocess.run(["git", "config", "core.worktree", str(tmp_path)], cwd=workspace, check=True)
    listed = run_git(workspace, ["status", "--porcelain", "--untracked-files=all"])
    assert listed.ok and listed.out.decode().split() == ["??", "inside.txt"]


def test_a_bare_repository_in_the_workspace_is_not_taken_for_one(tmp_path: Path) -> None:
    """An embedded bare repository (its ``config`` shipped with the files) is never discovered."""
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path)], check=True)
    done = run_git(tmp_path, ["rev-parse", "--git-dir"])
    assert not done.ok and "bare repository" in done.err
