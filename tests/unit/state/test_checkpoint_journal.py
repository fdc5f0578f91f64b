"""The checkpoint journal: one appended line per version, the last one wins, a torn last line (a
crash mid-append) is dropped, format-1 manifests still load, and inline blobs become files."""

from __future__ import annotations

import json
from pathlib import Path

from shiro_lsp.state.checkpoints import JOURNAL, Checkpoint, CheckpointStore, FileRecord, FileState


def checkpoint(id: str, prompt: str = "p") -> Checkpoint:
    return Checkpoint(
        id=id, session_id="s1", task_id="t", created_at="2026-12-01T00:00:00Z", prompt=prompt, message_index=0
    )


def test_the_last_version_wins_and_a_torn_last_line_is_dropped(tmp_path: Path) -> None:
    notes: list[str] = []
    store = CheckpointStore(tmp_path / "checkpoints", notes.append)
    first = checkpoint("01", "first")
    store.save(first)
    first.prompt = "first, updated"
    store.save(first)
    store.save(checkpoint("02", "second"))
    with (tmp_path / "checkpoints" / "s1" / JOURNAL).open("ab") as journal:
        journal.write(b'{"id": "03", "sessionId": "s1", "tas')  # the process died mid-append
    assert [(c.id, c.prompt) for c in store.list("s1")] == [("01", "first, updated"), ("02", "second")]
    assert notes == []
    store.save(checkpoint("04", "after the crash"))  # the torn tail does not swallow the next record
    assert [c.id for c in store.list("s1")][-1] == "04"


def test_format_one_manifests_load_and_a_damaged_line_is_reported(tmp_path: Path) -> None:
    notes: list[str] = []
    store = CheckpointStore(tmp_path / "checkpoints", notes.append)
    legacy = checkpoint("00", "from the previous version")
    (tmp_path / "checkpoints" / "s1").mkdir(parents=True)
    (tmp_path / "checkpoints" / "s1" / "00.json").write_text(json.dumps(legacy.to_json()))
    with (tmp_path / "checkpoints" / "s1" / JOURNAL).open("ab") as journal:
        journal.write(b"not json\n")
    store.save(checkpoint("01"))
    assert [c.id for c in store.list("s1")] == ["00", "01"]
    assert len(notes) == 1 and "damaged" in notes[0]


def test_inline_blobs_are_written_out_when_the_journal_is_read(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "checkpoints")
    data = b"the bytes before the edit\n"
    sha, fresh = store.blobs.hold(data)
    assert fresh and not store.blobs.path(sha).exists()
    record = checkpoint("01")
    state = FileState(sha, 0o644, len(data))
    record.files["a.txt"] = FileRecord(state, None)
    store.save(record, [sha])
    restarted = CheckpointStore(tmp_path / "checkpoints")  # the first server died before flushing
    (loaded,) = restarted.list("s1")
    assert loaded.files["a.txt"].before == state
    assert restarted.blobs.get(sha) == data and restarted.blobs.path(sha).is_file()


def test_a_file_an_older_version_noted_as_unrecorded_is_not_taken_for_an_added_one(tmp_path: Path) -> None:
    """Written before records said ``unrecorded``: the note names the file, the record has no before."""
    store = CheckpointStore(tmp_path / "checkpoints")
    older = checkpoint("01")
    older.files = {
        "big.dat": FileRecord(None, FileState("ab" * 32, 0o644, 9_000_000)),
        "new.txt": FileRecord(None, FileState("cd" * 32, 0o644, 4)),
    }
    older.not_covered = ["big.dat: changed, but its earlier content was not recorded"]
    line = older.to_json()
    for record in line["files"].values():
        assert "unrecorded" not in record  # what the older version wrote
    (tmp_path / "checkpoints" / "s1").mkdir(parents=True)
    (tmp_path / "checkpoints" / "s1" / JOURNAL).write_text(json.dumps(line) + "\n")
    (loaded,) = store.list("s1")
    assert loaded.files["big.dat"].status == "modified" and loaded.files["big.dat"].not_covered
    assert loaded.files["new.txt"].status == "added" and loaded.files["new.txt"].not_covered is None
