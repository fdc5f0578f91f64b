"""The workspace jail, with real symlinks: nothing outside the workspace is read or changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.jail import PathEscapes, resolve_in_workspace
from tool_helpers import RunTool


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret_dir = tmp_path / "outside"
    secret_dir.mkdir()
    (secret_dir / "secret.txt").write_text("top secret\n")
    return secret_dir


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*") if p.is_file()}


@pytest.mark.parametrize("path", ["../../etc/passwd", "../outside/secret.txt", "/etc/passwd", "a/../../x"])
def test_escaping_paths_are_refused(workspace: Path, path: str) -> None:
    with pytest.raises(PathEscapes, match=rf"^Path escapes workspace: {path}$"):
        resolve_in_workspace(workspace, path)


def test_paths_inside_resolve(workspace: Path) -> None:
    (workspace / "src").mkdir()
    root = Path(os.path.realpath(workspace))
    assert resolve_in_workspace(workspace, "src/../a.txt") == root / "a.txt"
    assert resolve_in_workspace(workspace, str(root / "src" / "new.py")) == root / "src" / "new.py"
    assert resolve_in_workspace(workspace, ".") == root


async def test_read_through_escaping_paths(run: RunTool) -> None:
    for path in ["../../etc/passwd", "/etc/passwd"]:
        with pytest.raises(ToolError, match=r"Path escapes workspace"):
            await run("read_file", path=path)


async def test_symlinked_file_pointing_out_is_refused(run: RunTool, workspace: Path, outside: Path) -> None:
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(ToolError, match=r"Path escapes workspace: link.txt"):
        await run("read_file", path="link.txt")
    before = snapshot(outside)
    with pytest.raises(ToolError, match=r"Path escapes workspace: link.txt"):
        await run("write_file", path="link.txt", content="pwned")
    with pytest.raises(ToolError, match=r"Path escapes workspace: link.txt"):
        await run("edit_file", path="link.txt", oldString="top", newString="pwned")
    assert snapshot(outside) == before


async def test_symlinked_dir_pointing_out_is_refused(run: RunTool, workspace: Path, outside: Path) -> None:
    (workspace / "linkdir").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    with pytest.raises(ToolError, match=r"Path escapes workspace: linkdir/secret.txt"):
        await run("read_file", path="linkdir/secret.txt")
    # a file that does not exist yet, behind the link: the nearest existing parent decides
    with pytest.raises(ToolError, match=r"Path escapes workspace: linkdir/new/deeper.txt"):
        await run("write_file", path="linkdir/new/deeper.txt", content="pwned")
    with pytest.raises(ToolError, match=r"Path escapes workspace"):
        await run("list_dir", path="linkdir")
    assert snapshot(outside) == before
    assert not (outside / "new").exists()


async def test_dangling_symlink_to_outside_is_not_written(
    run: RunTool, workspace: Path, outside: Path
) -> None:
    (workspace / "dangling").symlink_to(outside / "created-by-agent.txt")
    with pytest.raises(ToolError, match=r"Path escapes workspace: dangling"):
        await run("write_file", path="dangling", content="pwned")
    assert not (outside / "created-by-agent.txt").exists()


async def test_symlink_inside_the_workspace_is_followed(run: RunTool, workspace: Path) -> None:
    (workspace / "real.txt").write_text("real\n")
    (workspace / "alias.txt").symlink_to(workspace / "real.txt")
    assert await run("read_file", path="alias.txt") == "     1\treal"


async def test_search_tools_do_not_wander_out_through_links(
    run: RunTool, workspace: Path, outside: Path
) -> None:
    (workspace / "linkdir").symlink_to(outside, target_is_directory=True)
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    (workspace / "mine.txt").write_text("not secret\n")
    assert "top secret" not in await run("grep", pattern="secret")
    assert "secret.txt" not in await run("glob", pattern="**/*.txt")
    listing = await run("list_dir", depth=3)
    assert "secret.txt" not in listing and "link.txt" not in listing


async def test_git_tools_refuse_paths_outside(run: RunTool, repo: Path) -> None:
    with pytest.raises(ToolError, match=r"Path escapes workspace"):
        await run("git_blame", path="../../etc/passwd")
    with pytest.raises(ToolError, match=r"Path escapes workspace"):
        await run("git_diff", path="/etc")
