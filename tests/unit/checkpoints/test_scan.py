"""The bash-checkpoint scanner on real folders: what a command changed, found with the inotify
watcher (incremental) exactly as a whole walk finds it, in git subdirectories too."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from shiro_lsp.checkpoints import scan
from shiro_lsp.checkpoints.scan import ScanChange, WorkspaceScanner
from shiro_lsp.state.checkpoints import BlobStore
from tool_helpers import git

Change = tuple[str, bytes | None, bytes | None]

needs_inotify = pytest.mark.skipif(scan.Watcher.create() is None, reason="no inotify here")


def scanner(tmp_path: Path, workspace: Path, name: str, **kwargs: bool) -> WorkspaceScanner:
    return WorkspaceScanner(
        workspace, BlobStore(tmp_path / name / "blobs"), tmp_path / name / "c.json", **kwargs
    )


def readable(s: WorkspaceScanner, found: list[ScanChange]) -> list[Change]:
    def data(state: object) -> bytes | None:
        return None if state is None else s.blobs.get(state.sha)  # type: ignore[attr-defined]

    return sorted((c.path, data(c.before), data(c.after)) for c in found)


def around(s: WorkspaceScanner, command: Callable[[], object]) -> tuple[list[Change], list[str]]:
    snapshot = s.snapshot()
    command()
    found, problems = s.changes(snapshot)
    return readable(s, found), problems


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for d in range(4):
        (ws / f"d{d}").mkdir(parents=True)
        for f in range(4):
            (ws / f"d{d}" / f"f{f}.txt").write_text(f"{d}.{f}\n")
    (ws / ".gitignore").write_text("*.log\n")
    return ws


@needs_inotify
def test_the_watcher_sees_what_a_command_did_and_what_the_user_did_in_between(
    tmp_path: Path, workspace: Path
) -> None:
    s = scanner(tmp_path, workspace, "w")
    assert around(s, lambda: None) == ([], [])
    assert s._watcher is not None  # the second snapshot on is incremental
    (workspace / "d2" / "f2.txt").write_text("the user's edit\n")  # between two turns

    def command() -> None:
        (workspace / "d2" / "f2.txt").write_text("bash\n")
        (workspace / "gen" / "sub").mkdir(parents=True)
        (workspace / "gen" / "sub" / "out.txt").write_text("made\n")
        (workspace / "d3" / "f0.txt").unlink()
        (workspace / "noise.log").write_text("ignored\n")
        os.symlink("d1/f1.txt", workspace / "link")

    found, problems = around(s, command)
    assert found == [
        ("d2/f2.txt", b"the user's edit\n", b"bash\n"),  # the before is the user's, not the original
        ("d3/f0.txt", b"3.0\n", None),
        ("gen/sub/out.txt", None, b"made\n"),
    ]
    assert problems == [f"link: {scan.LINK_NOTE}"]
    found, _ = around(s, lambda: shutil.rmtree(workspace / "gen"))
    assert found == [("gen/sub/out.txt", b"made\n", None)]


@needs_inotify
def test_the_watcher_agrees_with_a_whole_walk_over_random_commands(tmp_path: Path, workspace: Path) -> None:
    watched = scanner(tmp_path, workspace, "w")
    walked = WorkspaceScanner(
        workspace, BlobStore(tmp_path / "k" / "blobs"), tmp_path / "k" / "c.json", watch=False
    )
    pick = random.Random(11)

    def command() -> None:
        for _ in range(pick.randint(1, 4)):
            d = workspace / f"d{pick.randint(0, 5)}"
            f = d / f"f{pick.randint(0, 5)}.txt"
            action = pick.choice(["write", "write", "delete", "mkdir", "rmdir", "rename", "chmod"])
            if action == "write":
                d.mkdir(exist_ok=True)
                f.write_text(f"{pick.random()}\n")
            elif action == "delete" and f.is_file():
                f.unlink()
            elif action == "mkdir":
                (d / "deep").mkdir(parents=True, exist_ok=True)
                (d / "deep" / "x.txt").write_text(f"{pick.random()}\n")
            elif action == "rmdir" and d.is_dir():
                shutil.rmtree(d)
            elif action == "rename" and f.is_file():
                os.replace(f, d / "renamed.txt")
            elif action == "chmod" and f.is_file():
                f.chmod(0o755 if pick.random() < 0.5 else 0o644)

    for _ in range(40):
        s_watched, s_walked = watched.snapshot(), walked.snapshot()
        command()
        found_watched = readable(watched, watched.changes(s_watched)[0])
        found_walked = readable(walked, walked.changes(s_walked)[0])
        assert found_watched == found_walked
    assert watched._watcher is not None and walked._watcher is None


def test_a_workspace_inside_a_repository_uses_git(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    sub = repo / "packages" / "app"
    sub.mkdir(parents=True)
    (sub / "tracked.txt").write_text("committed\n")
    (repo / "outside-the-workspace.txt").write_text("top\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    s = scanner(tmp_path, sub, "g")
    assert s.git_mode()

    def command() -> None:
        (sub / "tracked.txt").write_text("changed\n")
        (sub / "new.txt").write_text("new\n")
        (repo / "outside-the-workspace.txt").write_text("not ours\n")

    found, _ = around(s, command)
    assert found == [("new.txt", None, b"new\n"), ("tracked.txt", b"committed\n", b"changed\n")]
    assert git(repo, "diff", "--cached", "--name-only") == ""  # the scan staged nothing
