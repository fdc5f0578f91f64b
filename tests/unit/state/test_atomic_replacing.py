"""`atomic.replacing`, the one atomic writer: old file or new, never a mix; nothing left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shiro_lsp.state.atomic import clean_stale_temp_files, replacing, write_text_atomic


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_the_block_writes_the_new_file_and_stat_describes_it(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "f.bin"
    with replacing(target, durable=True) as staged:
        staged.file.write(b"one ")
        staged.file.writelines([b"two", b"!"])
        assert not target.exists()  # nothing shows before the block ends
    assert target.read_bytes() == b"one two!"
    assert staged.stat is not None
    on_disk = os.stat(target)
    assert (staged.stat.st_mtime_ns, staged.stat.st_size, staged.stat.st_ino) == (
        on_disk.st_mtime_ns,
        on_disk.st_size,
        on_disk.st_ino,
    )
    assert leftovers(target.parent) == []


def test_a_failing_block_keeps_the_old_file_and_removes_the_temp(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    write_text_atomic(target, "old")
    with pytest.raises(RuntimeError), replacing(target) as staged:
        staged.file.write(b"half of the new")
        raise RuntimeError("disk full")
    assert target.read_text() == "old"
    assert leftovers(tmp_path) == []


def test_before_replace_runs_after_the_data_is_written_and_can_veto(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    write_text_atomic(target, "old")
    seen: list[bytes] = []

    def check() -> None:
        (staged_file,) = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        seen.append(staged_file.read_bytes())
        raise ValueError("changed on disk meanwhile")

    with pytest.raises(ValueError), replacing(target, before_replace=check) as staged:
        staged.file.write(b"new")
    assert seen == [b"new"]  # the new text was complete beside the file when the check ran
    assert target.read_text() == "old" and staged.stat is None
    assert leftovers(tmp_path) == []


def test_the_temp_file_is_held_while_the_block_writes(tmp_path: Path) -> None:
    with replacing(tmp_path / "s.json") as staged:
        staged.file.write(b"[1]")
        (temp,) = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        os.utime(temp, (0, 0))  # old enough to be stale, but a live writer holds it
        assert clean_stale_temp_files([tmp_path]) == []
    assert (tmp_path / "s.json").read_text() == "[1]"
