"""Unreadable is not corrupt; stale temp files are ours only by name, age and no live writer."""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path

import pytest

from shiro_lsp.errors import StateUnavailable, from_os_error
from shiro_lsp.state.atomic import clean_stale_temp_files, write_json_atomic
from shiro_lsp.state.jsonstore import Unreadable
from shiro_lsp.state.memory import ProjectMemory


def make_unreadable(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """chmod 000, and (root reads anything) make this one file's read fail as it would for a user."""
    path.chmod(0)
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self == path:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)


def test_an_unreadable_memory_file_is_reported_left_in_place_and_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.json"
    ProjectMemory(path).remember("fact", "keep me")
    before = path.read_bytes()
    make_unreadable(path, monkeypatch)
    memory = ProjectMemory(path)
    for action in (lambda: memory.recall("keep"), memory.listing, lambda: memory.remember("fact", "new")):
        with pytest.raises(Unreadable) as raised:
            action()
        assert "cannot be read" in raised.value.message and "left" in raised.value.message
        assert "Nothing was changed" in raised.value.message
    assert memory.boot_block() == ""  # a chat turn goes on without memory
    monkeypatch.undo()
    path.chmod(0o600)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json", "m.json.lock"]  # nothing set aside


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.ENOSPC, "No space left"),
        (errno.EROFS, "read-only"),
        (errno.EACCES, "Permission denied"),
        (errno.ENOTDIR, "in the way"),
        (errno.EIO, "Could not use"),
    ],
)
def test_os_errors_become_messages_a_person_can_act_on(code: int, words: str) -> None:
    error = from_os_error(OSError(code, os.strerror(code), "/state/memory/x.json"))
    assert isinstance(error, StateUnavailable)
    assert words in error.message and "/state/memory/x.json" in error.message
    assert error.message.endswith("nothing was changed.") and "Errno" not in error.message


def test_only_stale_unheld_temp_files_of_ours_are_removed(tmp_path: Path) -> None:
    old = time.time() - 600
    stale = tmp_path / ".a.json.abcd1234.tmp"
    held = tmp_path / ".b.json.efgh5678.tmp"
    others = [tmp_path / "a.json", tmp_path / "x.tmp", tmp_path / ".a.json.short.tmp"]
    for path in [stale, held, *others]:
        path.write_text("x")
        os.utime(path, (old, old))
    young = tmp_path / ".c.json.ijkl9012.tmp"
    young.write_text("x")
    link = tmp_path / ".d.json.mnop3456.tmp"
    link.symlink_to(tmp_path / "a.json")
    with held.open("rb") as writer:
        fcntl.flock(writer.fileno(), fcntl.LOCK_EX)
        removed = clean_stale_temp_files([tmp_path, tmp_path / "missing"])
    assert removed == [stale]
    assert all(p.exists() for p in [held, young, *others]) and link.is_symlink()


def test_an_atomic_write_in_progress_is_never_cleaned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[Path]] = []
    real_replace = os.replace

    def replace(src: str, dst: str) -> None:  # mid-write: the temp file exists, held by this writer
        os.utime(src, (0, 0))
        seen.append(clean_stale_temp_files([tmp_path]))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    write_json_atomic(tmp_path / "s.json", [1, 2])
    assert seen == [[]]
    assert (tmp_path / "s.json").read_text().startswith("[")
