"""Git mode of the bash-checkpoint scanner with its inotify watcher: after the first look it asks
git only about the paths the kernel saw change, and finds exactly what two whole ``git status``
runs find (today's way, ``watch=False``), whatever the command does to the worktree, the index or
the ignore rules."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from test_scan import Change, around, readable

from shiro_lsp.checkpoints import scan
from shiro_lsp.checkpoints.scan import WorkspaceScanner
from shiro_lsp.checkpoints.scan_git import Status
from shiro_lsp.state.checkpoints import BlobStore
from tool_helpers import git

needs_inotify = pytest.mark.skipif(scan.TreeWatch.create() is None, reason="no inotify here")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "repo"
    for d in range(4):
        (ws / f"d{d}").mkdir(parents=True)
        for f in range(4):
            (ws / f"d{d}" / f"f{f}.txt").write_text(f"{d}.{f}\n")
    (ws / ".gitignore").write_text("*.log\nbuild/\nvendor/\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.bin").write_bytes(b"\x00built\n")
    (ws / "vendor" / "lib").mkdir(parents=True)
    (ws / "vendor" / "lib" / "kept.txt").write_text("tracked in an ignored dir\n")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "add", "-f", "vendor/lib/kept.txt")
    git(ws, "commit", "-qm", "init")
    (ws / "d0" / "f0.txt").write_text("dirty before the first turn\n")
    (ws / "notes.txt").write_text("untracked\n")
    return ws


def scanner(tmp_path: Path, workspace: Path, name: str, *, watch: bool = True) -> WorkspaceScanner:
    return WorkspaceScanner(
        workspace, BlobStore(tmp_path / name / "blobs"), tmp_path / name / "c.json", watch=watch
    )


def counting(s: WorkspaceScanner) -> list[list[str] | None]:
    """Record the paths of every ``git status`` the scanner runs (None: a whole status)."""
    calls: list[list[str] | None] = []
    real = s.git_status

    def status(paths: list[str] | None = None, *, ignored: bool = False) -> Status | None:
        calls.append(None if paths is None else list(paths))
        return real(paths, ignored=ignored)

    s.git_status = status  # type: ignore[method-assign]
    return calls


@needs_inotify
def test_after_the_first_look_git_is_asked_only_about_what_changed(tmp_path: Path, repo: Path) -> None:
    s = scanner(tmp_path, repo, "w")
    calls = counting(s)
    assert around(s, lambda: None) == ([], [])
    # The first look: one whole status (the watch is set up before it); the next asks again about
    # the ignored directory that holds a tracked file, watched only once git said so.
    assert calls == [None, ["vendor", "vendor/lib"]]

    def command() -> None:
        (repo / "d1" / "f1.txt").write_text("sed -i\n")
        (repo / "d2" / "f2.txt").unlink()
        (repo / "d3" / "new.txt").write_text("made\n")
        (repo / "build" / "more.bin").write_bytes(b"ignored\n")
        (repo / "vendor" / "lib" / "kept.txt").write_text("changed too\n")
        (repo / "vendor" / "lib" / "junk.txt").write_text("ignored\n")

    calls.clear()
    found, problems = around(s, command)
    assert found == [
        ("d1/f1.txt", b"1.1\n", b"sed -i\n"),
        ("d2/f2.txt", b"2.2\n", None),
        ("d3/new.txt", None, b"made\n"),
        ("vendor/lib/kept.txt", b"tracked in an ignored dir\n", b"changed too\n"),
    ]
    assert problems == []
    (asked,) = calls  # nothing before the command (nothing changed), the changed paths after it
    assert sorted(asked or []) == [
        "d1/f1.txt",
        "d2/f2.txt",
        "d3/new.txt",
        "vendor/lib/junk.txt",
        "vendor/lib/kept.txt",
    ]

    calls.clear()
    (repo / "notes.txt").write_text("the user's edit between turns\n")
    found, _ = around(s, lambda: (repo / "notes.txt").write_text("bash\n"))
    assert found == [("notes.txt", b"the user's edit between turns\n", b"bash\n")]
    assert calls == [["notes.txt"], ["notes.txt"]]

    calls.clear()
    found, _ = around(s, lambda: git(repo, "add", "d3/new.txt"))  # the index changed
    assert found == [] and calls == [None]
    calls.clear()
    assert around(s, lambda: None) == ([], []) and calls == []
    git(repo, "commit", "-qm", "the user's commit, between turns")
    calls.clear()
    assert around(s, lambda: None) == ([], []) and calls == [None]  # seen at the next look

    def ignore_logs_no_more() -> None:
        (repo / ".gitignore").write_text("build/\nvendor/\n")
        (repo / "d0" / "run.log").write_text("now seen\n")

    calls.clear()
    found, _ = around(s, ignore_logs_no_more)
    assert found == [
        (".gitignore", b"*.log\nbuild/\nvendor/\n", b"build/\nvendor/\n"),
        ("d0/run.log", None, b"now seen\n"),
    ]
    assert calls[-1] is None  # an ignore file changed: a whole status, and the watch is set up again


def test_without_inotify_every_look_is_a_whole_status(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("shiro_lsp.checkpoints.scan_git.TreeWatch.create", staticmethod(lambda: None))
    s = scanner(tmp_path, repo, "n")
    calls = counting(s)
    found, _ = around(s, lambda: (repo / "d1" / "f1.txt").write_text("x\n"))
    assert found == [("d1/f1.txt", b"1.1\n", b"x\n")]
    found, _ = around(s, lambda: (repo / "d1" / "f1.txt").write_text("y\n"))
    assert found == [("d1/f1.txt", b"x\n", b"y\n")]
    assert calls == [None, None, None, None]


def _command(repo: Path, pick: random.Random) -> None:
    for _ in range(pick.randint(1, 3)):
        d = repo / pick.choice(["d0", "d1", "d2", "d3", "d4", "build", "vendor/lib", "d1/deep"])
        f = d / f"f{pick.randint(0, 4)}.txt"
        action = pick.choice(
            ["write", "write", "write", "delete", "mkdir", "rmdir", "rename", "chmod", "log", "git", "ignore"]
        )
        if action == "write":
            d.mkdir(parents=True, exist_ok=True)
            f.write_text(f"{pick.random()}\n")
        elif action == "delete" and f.is_file():
            f.unlink()
        elif action == "mkdir":
            (d / "sub").mkdir(parents=True, exist_ok=True)
            (d / "sub" / "x.txt").write_text(f"{pick.random()}\n")
        elif action == "rmdir" and d.is_dir() and d.name.startswith("d"):
            shutil.rmtree(d)
        elif action == "rename" and f.is_file():
            os.replace(f, d / "renamed.txt")
        elif action == "chmod" and f.is_file():
            f.chmod(0o755 if pick.random() < 0.5 else 0o644)
        elif action == "log":
            d.mkdir(parents=True, exist_ok=True)
            (d / "run.log").write_text(f"{pick.random()}\n")
        elif action == "ignore":
            rules = (repo / ".gitignore").read_text()
            toggled = rules.replace("*.log\n", "") if "*.log\n" in rules else rules + "*.log\n"
            (repo / ".gitignore").write_text(toggled)
        elif action == "git":
            step = pick.choice(["add", "commit", "checkout", "stash", "pop"])
            args = {
                "add": ["add", "-A"],
                "commit": ["commit", "-qam", "wip", "--allow-empty"],
                "checkout": ["checkout", "-q", "--", "."],
                "stash": ["stash", "-q"],
                "pop": ["stash", "pop", "-q"],
            }[step]
            with contextlib.suppress(subprocess.CalledProcessError):  # nothing to pop, a conflict
                git(repo, *args)


@needs_inotify
def test_the_watched_git_mode_agrees_with_two_whole_statuses_over_random_commands(
    tmp_path: Path, repo: Path
) -> None:
    watched = scanner(tmp_path, repo, "w")
    whole = scanner(tmp_path, repo, "k", watch=False)
    calls = counting(watched)
    pick = random.Random(int(os.environ.get("SEED", "7")))
    seen: list[Change] = []
    for round_ in range(60):
        if round_ % 7 == 3:  # the user, between two turns
            (repo / "d2").mkdir(exist_ok=True)
            (repo / "d2" / "f1.txt").write_text(f"user {round_}\n")
        s_watched, s_whole = watched.snapshot(), whole.snapshot()
        _command(repo, pick)
        found_watched, problems_watched = watched.changes(s_watched)
        found_whole, problems_whole = whole.changes(s_whole)
        assert readable(watched, found_watched) == readable(whole, found_whole), round_
        assert problems_watched == problems_whole
        seen += readable(watched, found_watched)
    assert watched._gitwatch is not None and watched._gitwatch.watcher is not None
    assert len(seen) > 40  # the commands did change things
    assert sum(c is not None for c in calls) > 30  # and most looks asked git about a few paths only


@needs_inotify
def test_unchanged_since_in_git_mode_sees_the_worktree_and_the_index(tmp_path: Path, repo: Path) -> None:
    s = scanner(tmp_path, repo, "w")
    first = s.snapshot()
    assert not s.unchanged_since(first)  # git is still to be asked about vendor/ (watched since)
    s.changes(first)
    first = s.snapshot()
    assert first.git is not None and s.unchanged_since(first)
    (repo / "d3" / "f3.txt").write_text("a clean tracked file, changed\n")
    assert not s.unchanged_since(first)
    found, _ = s.changes(first)
    assert [c.path for c in found] == ["d3/f3.txt"]
    second = s.snapshot()
    assert s.unchanged_since(second)
    git(repo, "add", "d3/f3.txt")  # only the index changes (.git is not watched)
    assert not s.unchanged_since(second)


@pytest.mark.parametrize("mode", ["git-watched", "git-whole", "walk"])
def test_the_ignored_secrets_files_are_noted_and_kept_current(tmp_path: Path, repo: Path, mode: str) -> None:
    (repo / ".gitignore").write_text("*.log\nbuild/\nvendor/\n.env*\n*.pem\n")
    (repo / ".env").write_text("A=1\n")
    (repo / "d1" / "server.pem").write_text("key\n")
    (repo / "d1" / "run.log").write_text("not a secret\n")
    (repo / "big.pem").write_bytes(b"k" * (scan.MAX_SECRET_BYTES + 1))
    s = WorkspaceScanner(
        repo,
        BlobStore(tmp_path / "b" / "blobs"),
        tmp_path / "b" / "c.json",
        watch=mode != "git-whole",
        use_git=mode != "walk",
    )
    assert s.snapshot().ignored_secrets == (".env", "d1/server.pem")  # not the log, not the big one
    (repo / ".env").unlink()
    (repo / "d2" / ".env.local").write_text("B=2\n")
    assert s.snapshot().ignored_secrets == ("d1/server.pem", "d2/.env.local")
