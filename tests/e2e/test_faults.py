"""Faults give clear errors and lose nothing: a state root that is a file, read-only or full, an
unreadable store, temp files left by killed writes. The real server over stdio; tmpfs as root."""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from raw_lsp import RawServer

from shiro_lsp.state.paths import project_key

STATE_UNAVAILABLE = -32006


def assert_clear_error(reply: dict[str, object], *words: str) -> str:
    """A ShiroError a person can act on: no traceback, no Python exception text."""
    error = reply.get("error")
    assert isinstance(error, dict), reply
    message = str(error["message"])
    assert error["code"] == STATE_UNAVAILABLE, reply
    assert "Traceback" not in str(error) and "[Errno" not in message and "Error:" not in message
    assert "nothing was changed" in message
    for word in words:
        assert word in message, message
    return message


def result(reply: dict[str, object]) -> dict[str, object]:
    assert "result" in reply, reply
    value = reply["result"]
    assert isinstance(value, dict)
    return value


@contextlib.contextmanager
def running(home: Path, workspace: Path) -> Iterator[RawServer]:
    server = RawServer(home, workspace, log_dir=home.parent.parent)  # the log is not on the tmpfs
    try:
        result(server.initialize())
        yield server
    finally:
        server.close()


def can_mount() -> str | None:
    if os.geteuid() != 0:
        return "tmpfs tests need root (mount -t tmpfs)"
    probe = Path("/tmp") / f"shiro-mount-probe-{os.getpid()}"
    probe.mkdir(exist_ok=True)
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True
        )
        if done.returncode != 0:
            return f"mount is not permitted here: {done.stderr.decode(errors='replace').strip()[:120]}"
        subprocess.run(["umount", str(probe)], check=True)
        return None
    finally:
        probe.rmdir()


MOUNT_SKIP = can_mount()
needs_mount = pytest.mark.skipif(MOUNT_SKIP is not None, reason=MOUNT_SKIP or "")


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A small tmpfs of its own (1 MiB) to fill up or make read-only."""
    mountpoint = tmp_path / "tmpfs"
    mountpoint.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mountpoint)], check=True)
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], check=False)


def fill(directory: Path) -> Path:
    """Fill the file system holding ``directory`` until a write fails with ENOSPC."""
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as handle, contextlib.suppress(OSError):
        while True:
            handle.write(b"\0" * 4096)
    return filler


def seed(home: Path, workspace: Path) -> None:
    with running(home, workspace) as server:
        result(server.call("shiro/memory/remember", {"kind": "fact", "text": "the tests run with make test"}))
        result(server.call("shiro/notes/append", {"note": "first note"}))


def test_a_state_root_that_is_a_file_answers_reads_and_refuses_writes_clearly(
    home: Path, workspace: Path
) -> None:
    home.parent.mkdir(parents=True, exist_ok=True)
    home.write_text("I am a file, not a folder")
    with running(home, workspace) as server:
        assert result(server.call("shiro/memory/list", {}))["entries"] == []
        assert result(server.call("shiro/memory/recall", {"query": "tests"}))["entries"] == []
        assert result(server.call("shiro/session/list", {}))["sessions"] == []
        assert result(server.call("shiro/history", {}))["prompts"] == []
        assert result(server.call("shiro/notes/read", {}))["project"] == ""
        assert_clear_error(
            server.call("shiro/memory/remember", {"kind": "fact", "text": "x"}), str(home), "move it"
        )
        assert_clear_error(server.call("shiro/notes/append", {"note": "n"}), "move it")
        assert "Traceback" not in server.stderr()
    assert home.read_text() == "I am a file, not a folder"


@needs_mount
def test_a_read_only_state_root_keeps_reads_working(tmpfs: Path) -> None:
    home, workspace = tmpfs / "state", tmpfs / "ws"
    workspace.mkdir()
    seed(home, workspace)
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    with running(home, workspace) as server:
        entries = result(server.call("shiro/memory/list", {}))["entries"]
        assert [e["text"] for e in entries] == ["the tests run with make test"]  # type: ignore[index]
        recalled = result(server.call("shiro/memory/recall", {"query": "tests"}))
        assert recalled["entries"]
        assert "first note" in str(result(server.call("shiro/notes/read", {}))["project"])
        result(server.call("shiro/session/list", {}))
        assert_clear_error(
            server.call("shiro/memory/remember", {"kind": "fact", "text": "more"}), "read-only"
        )
        assert_clear_error(server.call("shiro/notes/append", {"note": "second"}), "read-only")
        assert "Traceback" not in server.stderr()


@needs_mount
def test_a_full_disk_refuses_writes_clearly_and_a_retry_does_not_duplicate(tmpfs: Path) -> None:
    home, workspace = tmpfs / "state", tmpfs / "ws"
    workspace.mkdir()
    seed(home, workspace)
    notes = workspace / ".shiro" / "memory" / "project.md"
    memory_file = home / "memory" / f"{project_key(str(workspace))}.json"
    with running(home, workspace) as server:
        before = memory_file.read_bytes()
        filler = fill(tmpfs)
        assert_clear_error(
            server.call("shiro/memory/remember", {"kind": "fact", "text": "y" * 300}), "No space left", "free"
        )
        assert memory_file.read_bytes() == before
        for _ in range(3):  # the client retries: still refused, nothing half-written
            reply = server.call("shiro/notes/append", {"note": "second note " + "z" * 2000})
            assert "error" in reply and reply["error"]["code"] != -32603, reply  # type: ignore[index]
        assert notes.read_text().count("second note") == 0
        assert result(server.call("shiro/memory/recall", {"query": "tests"}))["entries"]
        result(server.call("shiro/session/list", {}))
        filler.unlink()
        result(server.call("shiro/notes/append", {"note": "second note"}))
        assert notes.read_text().count("second note") == 1
        assert "Traceback" not in server.stderr()
    assert not list(tmpfs.rglob("*.tmp"))


def test_stale_temp_files_of_interrupted_writes_are_cleaned_at_start(home: Path, workspace: Path) -> None:
    memory = home / "memory"
    sessions = home / "sessions"
    notes = workspace / ".shiro" / "memory"
    for folder in (memory, sessions, notes):
        folder.mkdir(parents=True)
    stale = [
        memory / f".{project_key(str(workspace))}.json.k3j4h5g6.tmp",
        sessions / ".0193bb11-5555-7000-8000-00000000beef.json.a1b2c3d4.tmp",
        notes / ".project.md.zz99yy88.tmp",
    ]
    fresh = memory / ".other.json.abcdefgh.tmp"
    held = sessions / ".held.json.qwertyui.tmp"
    not_ours = [memory / "notes.tmp", memory / ".x.tmp", sessions / "keep.json"]
    old = time.time() - 3600
    for path in [*stale, held, *not_ours]:
        path.write_text("partial")
        os.utime(path, (old, old))
    fresh.write_text("being written right now")
    soon = time.time() + 120  # younger than the stale limit however slowly the server starts
    os.utime(fresh, (soon, soon))
    with held.open("rb") as writer:  # a live writer in another process holds its temp file
        fcntl.flock(writer.fileno(), fcntl.LOCK_EX)
        with running(home, workspace) as server:
            deadline = time.monotonic() + 20
            while any(p.exists() for p in stale) and time.monotonic() < deadline:
                server.drain(0.2)
            assert not [p for p in stale if p.exists()]
            assert fresh.exists() and held.exists()
            assert all(p.exists() for p in not_ours)
