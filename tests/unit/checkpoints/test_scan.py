"""The bash-checkpoint scanner on real folders: what a command changed, found with the inotify
watcher (incremental) exactly as a whole walk finds it, in git subdirectories too."""

from __future__ import annotations

import os
import random
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from shiro_lsp.checkpoints import scan
from shiro_lsp.checkpoints.scan import ScanChange, WorkspaceScanner
from shiro_lsp.state.checkpoints import BlobStore
from tool_helpers import git

Change = tuple[str, bytes | None, bytes | None]

needs_inotify = pytest.mark.skipif(scan.TreeWatch.create() is None, reason="no inotify here")


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


@pytest.mark.parametrize("in_git", [False, True], ids=["walk", "git"])
def test_a_file_whose_bytes_were_not_recorded_is_said_and_never_looks_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_git: bool
) -> None:
    """Files over the per-file limit existed before the command: a change to them (a removal too)
    comes back as unrecorded, with why, not as a file the command made. A secrets file is recorded
    (its bytes kept for a restore, never shown)."""
    monkeypatch.setattr(scan, "MAX_FILE_BYTES", 1000)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.dat").write_bytes(b"x" * 2000)
    (ws / "gone.dat").write_bytes(b"y" * 2000)
    (ws / ".env").write_text("KEY=real\n")
    (ws / "ok.txt").write_text("one\n")
    if in_git:
        git(ws, "init", "-q")  # all four untracked: what git lists, the snapshot must hold
    s = scanner(tmp_path, ws, "u")
    assert s.git_mode() is in_git
    snapshot = s.snapshot()
    with (ws / "big.dat").open("ab") as handle:
        handle.write(b"more\n")
    (ws / "gone.dat").unlink()
    (ws / ".env").write_text("KEY=\n")
    (ws / "ok.txt").write_text("two\n")
    found, problems = s.changes(snapshot)
    why = {c.path: (c.before is None, c.after is None, c.unrecorded) for c in found}
    assert why["ok.txt"] == (False, False, None)
    assert why[".env"] == (False, False, None)
    assert why["big.dat"][:2] == (True, False) and "per-file limit" in str(why["big.dat"][2])
    assert why["gone.dat"][:2] == (True, True) and "per-file limit" in str(why["gone.dat"][2])
    assert sorted(p.split(":")[0] for p in problems if "not recorded" in p) == ["big.dat", "gone.dat"]


@pytest.fixture
def quick_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file a tenth of a second old counts as old (instead of 2 s), so the tests need not wait."""
    monkeypatch.setattr(scan, "RACY_NS", 100_000_000)


def settle() -> None:
    time.sleep(0.3)  # the files made so far are older than the snapshot by more than RACY_NS


@pytest.mark.usefixtures("quick_clock")
@pytest.mark.parametrize("in_git", [False, True], ids=["walk", "git"])
def test_an_ignored_file_a_command_makes_visible_is_not_taken_for_a_new_one(
    tmp_path: Path, in_git: bool
) -> None:
    """Un-ignored and untouched: no change. Un-ignored and written (or made: the two cannot be
    told apart then): not "added", so a restore never removes it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".gitignore").write_text("*.log\n.env\n")
    (ws / "old.log").write_text("the user's log\n")
    (ws / ".env").write_text("KEY=real\n")
    if in_git:
        git(ws, "init", "-q")
    s = scanner(tmp_path, ws, "i", use_git=in_git)
    assert s.git_mode() is in_git
    settle()
    snapshot = s.snapshot()
    (ws / ".gitignore").write_text("")
    with (ws / ".env").open("a") as env:
        env.write("MORE=1\n")
    (ws / "new.log").write_text("made by the command\n")
    found, _ = s.changes(snapshot)
    why = {c.path: (c.before is None, c.unrecorded) for c in found}
    assert why == {
        ".gitignore": (False, None),
        ".env": (True, scan.RULES_CHANGED),
        "new.log": (True, scan.RULES_CHANGED),
    }


@pytest.mark.usefixtures("quick_clock")
def test_a_file_the_command_made_is_known_new(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".gitignore").write_text("*.log\n")
    (ws / "old.log").write_text("ignored\n")
    s = scanner(tmp_path, ws, "n", use_git=False)
    settle()
    snapshot = s.snapshot()
    (ws / "new.txt").write_text("made\n")
    found, _ = s.changes(snapshot)
    assert [(c.path, c.before, c.unrecorded) for c in found] == [("new.txt", None, None)]


@pytest.mark.usefixtures("quick_clock")
def test_git_rm_cached_does_not_make_a_file_look_new(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "kept.txt").write_text("committed\n")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "init")
    s = scanner(tmp_path, ws, "r")
    assert s.git_mode()
    settle()
    snapshot = s.snapshot()
    git(ws, "rm", "-q", "--cached", "kept.txt")  # untracked now, its bytes untouched
    assert s.changes(snapshot) == ([], [])


def test_a_file_git_rm_cached_untracked_and_the_command_changed_is_not_new(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "kept.txt").write_text("committed\n")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "init")
    s = scanner(tmp_path, ws, "m")
    snapshot = s.snapshot()
    git(ws, "rm", "-q", "--cached", "kept.txt")
    with (ws / "kept.txt").open("a") as handle:
        handle.write("and more\n")
    (ws / "new.txt").write_text("made\n")
    found, _ = s.changes(snapshot)
    why = {c.path: (c.before is None, c.unrecorded) for c in found}
    assert why == {"kept.txt": (True, "git tracked it until the command"), "new.txt": (True, None)}


@needs_inotify
def test_unchanged_since_holds_only_until_something_is_touched_or_looked_at(
    tmp_path: Path, workspace: Path
) -> None:
    """What lets a step's MCP calls skip the look between them: true right after a look while the
    kernel reports nothing, false as soon as a file is written (even back to the same bytes), and
    for any snapshot but the last look."""
    s = scanner(tmp_path, workspace, "w")
    first = s.snapshot()
    assert s.unchanged_since(first)
    (workspace / "d1" / "f1.txt").write_text("1.1\n")  # the same bytes: still a write to look at
    assert not s.unchanged_since(first)
    assert s.changes(first) == ([], [])
    assert not s.unchanged_since(first)  # a later look was made
    second = s.snapshot()
    assert s.unchanged_since(second)
    (workspace / "new").mkdir()
    assert not s.unchanged_since(second)
    found, _ = s.changes(second)
    third = s.snapshot()
    assert found == [] and s.unchanged_since(third)
    (workspace / "new" / "made.txt").write_text("made\n")  # in a directory made since the walk
    assert not s.unchanged_since(third)


def test_without_a_watcher_nothing_is_known_unchanged(tmp_path: Path, workspace: Path) -> None:
    s = scanner(tmp_path, workspace, "w", watch=False)
    assert not s.unchanged_since(s.snapshot())
