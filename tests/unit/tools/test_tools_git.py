"""git tools against a real repository made with git init in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiro_lsp.errors import ToolError
from tool_helpers import RunTool, git


async def test_status_clean_and_changed(run: RunTool, repo: Path) -> None:
    assert await run("git_status") == "On main, working tree clean."
    (repo / "app.py").write_text("changed\n")
    (repo / "new.txt").write_text("new\n")
    (repo / "staged.txt").write_text("s\n")
    git(repo, "add", "staged.txt")
    assert await run("git_status") == (
        "On main, 3 changed:\napp.py  (modified)\nstaged.txt  (staged added)\nnew.txt  (untracked)"
    )


async def test_status_in_a_fresh_repo_and_outside_git(run: RunTool, workspace: Path) -> None:
    with pytest.raises(ToolError, match=r"is not a git repository\.$"):
        await run("git_status")
    git(workspace, "init", "-q", "-b", "trunk")
    assert await run("git_status") == "On No commits yet on trunk, working tree clean."
    assert await run("git_log") == "No commits."


async def test_diff_worktree_staged_and_path(run: RunTool, repo: Path) -> None:
    assert await run("git_diff") == "No uncommitted changes."
    (repo / "app.py").write_text("def main():\n    return 3\n")
    diff = await run("git_diff")
    assert "-    return 2\n+    return 3" in diff
    assert await run("git_diff", staged=True) == "Nothing staged."
    git(repo, "add", "app.py")
    assert "+    return 3" in await run("git_diff", staged=True)
    assert await run("git_diff", staged=True, path="other.py") == "Nothing staged."


async def test_log_limit_and_path(run: RunTool, repo: Path) -> None:
    lines = (await run("git_log")).splitlines()
    assert [line.split("  ", 3)[1:] for line in lines] == [
        ["2024-05-01", "Ada", "second commit"],
        ["2024-05-01", "Ada", "first commit"],
    ]
    assert len((await run("git_log", limit=1)).splitlines()) == 1
    assert await run("git_log", path="nothing-here.txt") == "No commits."
    with pytest.raises(ToolError, match=r"'limit' must be at most 40"):
        await run("git_log", limit=41)


async def test_show_a_commit_and_a_path(run: RunTool, repo: Path) -> None:
    shown = await run("git_show", ref="HEAD~1")
    assert "first commit" in shown and "+    return 1" in shown
    assert "second commit" in await run("git_show", ref="HEAD", path="app.py")
    with pytest.raises(ToolError, match=r"unknown revision|bad revision|ambiguous argument"):
        await run("git_show", ref="no-such-branch")


@pytest.mark.parametrize("ref", ["--output=/tmp/pwned", "-p", "HEAD --stat", "a\nb", ""])
async def test_show_refuses_refs_that_could_be_options(run: RunTool, repo: Path, ref: str) -> None:
    with pytest.raises(ToolError, match="Invalid ref"):
        await run("git_show", ref=ref)
    assert not Path("/tmp/pwned").exists()


async def test_blame_whole_file_and_range(run: RunTool, repo: Path) -> None:
    blame = (await run("git_blame", path="app.py")).splitlines()
    assert len(blame) == 2
    assert "Ada" in blame[0] and "def main():" in blame[0]
    assert "return 2" in blame[1]
    ranged = (await run("git_blame", path="app.py", startLine=2, endLine=2)).splitlines()
    assert len(ranged) == 1 and "return 2" in ranged[0]
    with pytest.raises(ToolError, match=r"endLine \(1\) is before startLine \(2\)"):
        await run("git_blame", path="app.py", startLine=2, endLine=1)
    with pytest.raises(ToolError, match="no such path"):
        await run("git_blame", path="missing.py")
