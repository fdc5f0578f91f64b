"""Compacting the checkpoint journal: only each checkpoint's last version stays, nothing a live
checkpoint refers to is lost (its blobs are files first), a kill at any point leaves a whole
journal, and an append made while a compaction runs is never lost."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from shiro_lsp.state import checkpoints as checkpoints_module
from shiro_lsp.state.atomic import read_records
from shiro_lsp.state.checkpoints import (
    COMPACT_MIN_BYTES,
    JOURNAL,
    Checkpoint,
    CheckpointStore,
    FileRecord,
    FileState,
    sha256,
)


def checkpoint(id: str, prompt: str = "p") -> Checkpoint:
    return Checkpoint(
        id=id, session_id="s1", task_id="t", created_at="2026-12-01T00:00:00Z", prompt=prompt, message_index=0
    )


def journal_of(root: Path) -> Path:
    return root / "s1" / JOURNAL


def a_session_with_superseded_versions(root: Path, edits: int = 6) -> tuple[CheckpointStore, list[bytes]]:
    """Three turns, each saved once per edit as the recorder does; every file's earlier bytes
    inline in the journal only (held, never flushed: the server died before the turn's end)."""
    store = CheckpointStore(root)
    befores: list[bytes] = []
    for turn in range(3):
        record = checkpoint(f"0{turn}", f"turn {turn}")
        for edit in range(edits):
            data = f"turn {turn} file {edit}\n".encode() * 50
            befores.append(data)
            sha, fresh = store.blobs.hold(data)
            state = FileState(sha, 0o644, len(data))
            record.files[f"f{edit}.txt"] = FileRecord(state, FileState(sha256(b"x"), 0o644, 1))
            store.save(record, [sha] if fresh else [])
    (root / "s1" / JOURNAL).open("ab").write(b"not json, kept as it is\n")
    return store, befores


def live(store: CheckpointStore) -> list[dict[str, Any]]:
    return [c.to_json() for c in store.list("s1")]


def test_only_the_last_versions_stay_and_every_blob_they_need_is_a_file(tmp_path: Path) -> None:
    root = tmp_path / "checkpoints"
    notes: list[str] = []
    store, befores = a_session_with_superseded_versions(root)
    before = live(store)
    size = journal_of(root).stat().st_size
    assert store.compact("s1")
    records = read_records(journal_of(root))
    assert len(records) == 3 + 1  # one per checkpoint, and the unreadable line
    assert b'"blobs"' not in b"".join(records) and journal_of(root).stat().st_size < size / 4
    restarted = CheckpointStore(root, notes.append)  # another process: nothing held in memory
    assert live(restarted) == before
    for data in befores:
        assert restarted.blobs.get(sha256(data)) == data
    assert len(notes) == 1 and "damaged" in notes[0]  # the unreadable line, reported, not dropped
    restarted.save(checkpoint("03", "after"))  # the compacted journal takes appends as before
    assert [c.id for c in restarted.list("s1")] == ["00", "01", "02", "03"]


def test_a_turns_end_compacts_only_a_large_journal_mostly_superseded(tmp_path: Path) -> None:
    root = tmp_path / "checkpoints"
    store, _ = a_session_with_superseded_versions(root)
    assert not store.maybe_compact("s1")  # small: left alone
    big = checkpoint("10", "x" * 1000)
    while journal_of(root).stat().st_size < COMPACT_MIN_BYTES:
        big.prompt += "y"
        store.save(big)  # one checkpoint, hundreds of versions
    before = live(store)
    assert store.maybe_compact("s1")
    assert live(CheckpointStore(root)) == before
    assert journal_of(root).stat().st_size < 16 * 1024  # the four checkpoints, once each
    for n in range(400):  # now mostly live records: distinct checkpoints
        store.save(checkpoint(f"2{n:03}", "z" * 1000))
    assert journal_of(root).stat().st_size > COMPACT_MIN_BYTES
    assert not store.maybe_compact("s1")


def test_a_kill_at_any_point_of_a_compaction_leaves_every_live_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compaction is cut at each of its renames and syncs in turn (a forked child that exits at
    once there, running no cleanup); the journal a new process then reads has every live
    checkpoint, and every blob they refer to."""
    original = tmp_path / "original"
    store, befores = a_session_with_superseded_versions(original)
    expected = live(store)
    calls: list[str] = []
    real = {name: getattr(os, name) for name in ("replace", "fsync", "write")}

    def counting(name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return real[name](*args, **kwargs)

        return call

    dry = tmp_path / "dry"
    shutil.copytree(original, dry)
    with monkeypatch.context() as patch:
        for name in real:
            patch.setattr(os, name, counting(name))
        CheckpointStore(dry).compact("s1")
    assert calls.count("replace") >= 2 and calls.count("fsync") >= 2
    for point in range(len(calls) + 1):
        here = tmp_path / f"kill-{point}"
        shutil.copytree(original, here)
        pid = os.fork()
        if pid == 0:
            _compact_dying_at(here, point, real)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == (9 if point < len(calls) else 0)
        restarted = CheckpointStore(here)
        assert live(restarted) == expected, f"killed before call {point} ({calls[point : point + 1]})"
        for data in befores:
            assert restarted.blobs.get(sha256(data)) == data
        assert restarted.compact("s1") or point == len(calls)  # and it compacts on the next try
        assert live(CheckpointStore(here)) == expected
        leftovers = [p.name for p in (here / "s1").iterdir() if p.name.endswith(".tmp")]
        assert leftovers == [] or point < len(calls)


def _compact_dying_at(here: Path, point: int, real: dict[str, Any]) -> None:
    """In a forked child: compact, dying (no cleanup runs) just before os call number ``point``."""
    seen = [0]

    def dying(name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if seen[0] == point:
                os._exit(9)
            seen[0] += 1
            return real[name](*args, **kwargs)

        return call

    for name in real:
        setattr(os, name, dying(name))
    try:
        CheckpointStore(here).compact("s1")
    finally:
        os._exit(0)


APPENDS_EACH = 80


def test_appends_made_while_compactions_run_are_never_lost(tmp_path: Path) -> None:
    root = tmp_path / "checkpoints"
    store, _ = a_session_with_superseded_versions(root)
    written: dict[str, str] = {}
    halfway = [threading.Event(), threading.Event()]
    resume = threading.Event()

    def appender(index: int, prefix: str) -> None:
        mine = CheckpointStore(root)  # its own store: its own file descriptors, as another server
        for n in range(APPENDS_EACH):
            if n == APPENDS_EACH // 2:  # at least one compaction lands between the halves, however busy
                halfway[index].set()
                assert resume.wait(timeout=60)
            record = checkpoint(f"{prefix}{n:04}", "v1")
            mine.save(record)
            record.prompt = "v2"
            mine.save(record)  # a second version, superseded by nothing
            written[record.id] = "v2"

    threads = [threading.Thread(target=appender, args=(i, p)) for i, p in enumerate(("a", "b"))]
    for thread in threads:
        thread.start()
    compactions = 0
    while any(t.is_alive() for t in threads):
        store.compact("s1")  # free-running: these race the appends
        compactions += 1
        time.sleep(0.01)  # flock is not fair: with no gap, slow fsyncs starve the appenders (120 s in one CI)
        if all(e.is_set() for e in halfway) and not resume.is_set():
            store.compact("s1")
            compactions += 1
            resume.set()
    for thread in threads:
        thread.join()
    found = {c.id: c.prompt for c in CheckpointStore(root).list("s1")}
    assert resume.is_set() and compactions >= 2
    assert {k: found.get(k) for k in written} == written and len(written) == 2 * APPENDS_EACH
    assert {"00", "01", "02"} <= found.keys()


def test_the_module_keeps_its_threshold_sane() -> None:
    assert checkpoints_module.COMPACT_MIN_BYTES >= 64 * 1024
