"""``ProjectMemory.recall_now``: a recall from memory (no I/O) only while the file is known unchanged."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shiro_lsp.fs import watch as fswatch
from shiro_lsp.state import jsonstore
from shiro_lsp.state.memory import ProjectMemory

REMEMBER_ELSEWHERE = """
import sys
from pathlib import Path
from shiro_lsp.state.memory import ProjectMemory
ProjectMemory(Path(sys.argv[1])).remember("fact", sys.argv[2])
"""


def warm(memory: ProjectMemory, query: str) -> list[str]:
    """A recall in the thread path (it reads the file and starts the watch), then one from memory;
    then the hits are written, so no timer thread reads the file behind the test's back."""
    memory.recall(query)
    now = memory.recall_now(query)
    assert now is not None
    memory.flush_hits()
    return [e.text for e in now.entries]


def texts(memory: ProjectMemory, query: str) -> list[str] | None:
    result = memory.recall_now(query)
    return None if result is None else [e.text for e in result.entries]


def test_once_read_a_recall_needs_no_file_access(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = ProjectMemory(tmp_path / "memory" / "p.json")
    assert memory.recall_now("alpha") is None  # nothing read yet: the caller reads in a thread
    memory.remember("fact", "alpha one")
    assert warm(memory, "alpha") == ["alpha one"]

    def no_disk(*args: object, **kwargs: object) -> None:
        raise AssertionError("the file system was used")

    monkeypatch.setattr(jsonstore.os, "stat", no_disk)
    monkeypatch.setattr(jsonstore.os, "lstat", no_disk)
    monkeypatch.setattr(Path, "read_bytes", no_disk)
    result = memory.recall_now("alpha")
    assert result is not None and [(e.text, e.hits) for e in result.entries] == [("alpha one", 3)]


def test_its_own_writes_keep_it_current(tmp_path: Path) -> None:
    memory = ProjectMemory(tmp_path / "p.json")
    memory.remember("fact", "alpha one")
    warm(memory, "alpha")
    memory.remember("fact", "alpha two")
    assert texts(memory, "alpha") == ["alpha two", "alpha one"]
    memory.forget("one")
    assert texts(memory, "alpha") == ["alpha two"]
    memory.flush_hits()  # the hit counts' write is this store's too
    assert texts(memory, "alpha") == ["alpha two"]


def test_another_process_writing_the_file_sends_the_next_recall_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    memory = ProjectMemory(path)
    memory.remember("fact", "alpha one")
    warm(memory, "alpha")
    subprocess.run([sys.executable, "-c", REMEMBER_ELSEWHERE, str(path), "alpha elsewhere"], check=True)
    assert memory.recall_now("alpha") is None
    assert [e.text for e in memory.recall("alpha").entries] == ["alpha elsewhere", "alpha one"]
    assert texts(memory, "alpha") == ["alpha elsewhere", "alpha one"]


def test_a_second_store_object_in_this_process_is_another_writer(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    memory, other = ProjectMemory(path), ProjectMemory(path)
    memory.remember("fact", "alpha one")
    warm(memory, "alpha")
    other.remember("fact", "alpha other")
    assert memory.recall_now("alpha") is None
    assert warm(memory, "alpha") == ["alpha other", "alpha one"]


@pytest.mark.parametrize("change", ["in place", "deleted", "renamed away", "made a link", "folder moved"])
def test_any_other_change_to_the_file_or_its_folder_is_noticed(tmp_path: Path, change: str) -> None:
    folder = tmp_path / "memory"
    path = folder / "p.json"
    memory = ProjectMemory(path)
    memory.remember("fact", "alpha one")
    warm(memory, "alpha")
    if change == "in place":
        entries = json.loads(path.read_text())
        entries[0]["text"] = "alpha edited"
        with path.open("r+", encoding="utf-8") as handle:  # same inode, same size: only the event tells
            handle.write(json.dumps(entries, indent=2).ljust(path.stat().st_size))
        expected = ["alpha edited"]
    elif change == "deleted":
        path.unlink()
        expected = []
    elif change == "renamed away":
        path.rename(folder / "kept.json")
        expected = []
    elif change == "made a link":
        target = tmp_path / "target.json"
        target.write_text(json.dumps([{**json.loads(path.read_text())[0], "text": "alpha linked"}]))
        path.unlink()
        os.symlink(target, path)
        expected = ["alpha linked"]
    else:
        shutil.move(folder, tmp_path / "moved")
        folder.mkdir()
        expected = []
    assert memory.recall_now("alpha") is None
    assert [e.text for e in memory.recall("alpha").entries] == expected
    if change == "made a link":  # the link's target is in a folder nobody watches: always read
        assert memory.recall_now("alpha") is None
    elif change == "in place":
        assert texts(memory, "alpha") == expected
    else:  # no file: every recall reads again, until there is one
        assert memory.recall_now("alpha") is None
        memory.remember("fact", "alpha again")
        assert warm(memory, "alpha") == ["alpha again"]


def test_without_inotify_every_recall_reads_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fswatch, "AVAILABLE", False)
    memory = ProjectMemory(tmp_path / "p.json")
    memory.remember("fact", "alpha one")
    assert [e.text for e in memory.recall("alpha").entries] == ["alpha one"]
    assert memory.recall_now("alpha") is None
