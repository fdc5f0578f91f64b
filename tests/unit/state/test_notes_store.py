"""The notes stores directly: schema migration, tasks, audit, branch copies, export, delete."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from shiro_lsp.errors import Conflict, NotFound, TooLarge
from shiro_lsp.state import db
from shiro_lsp.state.notes import Notes
from shiro_lsp.state.task_notes import (
    ARCHIVE_MAX_BYTES,
    BRANCH_MAX_TASKS,
    NOTE_CAP_BYTES,
    TaskNotesStore,
    note_hash,
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def notes(workspace: Path, tmp_path: Path) -> Notes:
    return Notes(str(workspace), tmp_path / "state")


def test_a_version_1_database_migrates_to_version_2_keeping_its_rows_and_a_backup(tmp_path: Path) -> None:
    path = tmp_path / "shiro.db"
    old = sqlite3.connect(path, isolation_level=None)
    db.migrate(old, path, target=1)
    old.execute(
        "INSERT INTO sessions (id, cwd, title, created_at, updated_at, message_count, model, "
        "file_mtime_ns, file_size) VALUES ('s1', '/ws', 'Fix the parser', 't0', 't1', 8, 'gpt-5', 1, 2)"
    )
    old.close()

    connection = sqlite3.connect(path, isolation_level=None)
    db.migrate(connection, path, target=2)  # version 3 (session text search) came later
    assert db.schema_version(connection) == 2
    assert connection.execute("SELECT title, message_count FROM sessions").fetchone()[:] == (
        "Fix the parser",
        8,
    )
    tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"tasks", "task_notes", "branch_notes", "note_events"} <= tables
    connection.close()

    (backup,) = tmp_path.glob("shiro.db.v1-*.bak")
    copy = sqlite3.connect(backup)
    assert db.schema_version(copy) == 1
    assert copy.execute("SELECT id FROM sessions").fetchall() == [("s1",)]
    assert copy.execute("SELECT name FROM sqlite_master WHERE name = 'tasks'").fetchall() == []
    copy.close()


def test_a_fresh_database_needs_no_backup(tmp_path: Path) -> None:
    db.connect(tmp_path / "shiro.db").close()
    assert list(tmp_path.glob("*.bak")) == []


def test_register_task_is_idempotent_and_lookups_work(notes: Notes, workspace: Path) -> None:
    first = notes.register_task("t1", "s1", "first prompt")
    assert notes.register_task("t1", "s1", "first prompt") == first
    notes.register_task("t2", "s1", "second prompt")
    notes.register_task("t3", "s2", "elsewhere")
    assert [t.id for t in notes.store.tasks_for_session("s1")] == ["t1", "t2"]
    latest = notes.store.latest_task("s1")
    assert latest is not None and latest.id == "t2"
    assert notes.store.task("t1") == first and first.workspace == str(workspace)
    with pytest.raises(Conflict):
        notes.register_task("t1", "another-session", "x")


def test_task_scope_without_an_id_is_the_current_sessions_latest_task(notes: Notes) -> None:
    notes.register_task("t1", "s1", "a")
    notes.register_task("t2", "s1", "b")
    notes.current_session = lambda: "s1"
    view = notes.append("task", "goes to the latest")
    assert view.task_id == "t2" and notes.store.read_note("t2").text == "goes to the latest"
    assert notes.read().task == "goes to the latest"
    notes.current_session = lambda: "s-without-tasks"
    assert notes.read().task_id is None


def test_an_append_over_the_cap_changes_nothing_and_logs_nothing(notes: Notes) -> None:
    task = notes.register_task("t1", "s1", "a")
    notes.append("task", "x" * (NOTE_CAP_BYTES - 1), "t1")
    before = notes.store.events()
    with pytest.raises(TooLarge):
        notes.append("task", "y", "t1")
    assert notes.store.events() == before
    assert notes.store.read_note(task.id).text == "x" * (NOTE_CAP_BYTES - 1)


def test_the_project_file_is_not_replaced_if_it_changed_during_the_write(
    notes: Notes, workspace: Path
) -> None:
    notes.append("project", "one")
    file = notes.project_file
    reads = 0
    original = file.current

    def editor_saves_meanwhile() -> str:
        nonlocal reads
        reads += 1
        if reads == 3:  # the check right before the file is replaced
            file.path.write_text("saved in the editor")
        return original()

    file.current = editor_saves_meanwhile  # type: ignore[method-assign]
    with pytest.raises(Conflict, match="changed on disk"):
        notes.replace("project", "two", note_hash("one"))
    assert file.path.read_text() == "saved in the editor"
    assert [p.name for p in file.path.parent.iterdir()] == ["project.md"]


def test_a_task_of_another_workspace_is_not_found(notes: Notes, tmp_path: Path) -> None:
    Notes(str(tmp_path / "other"), notes.root).register_task("foreign", "s9", "x")
    with pytest.raises(NotFound, match="another workspace"):
        notes.read("foreign")


def seed_session(notes: Notes, session: str, count: int, text: str = "note") -> None:
    for i in range(count):
        notes.register_task(f"{session}-t{i}", session, f"prompt {i}")
        notes.append("task", f"{text} {i}", f"{session}-t{i}")


def test_a_branch_keeps_a_full_independent_copy(notes: Notes) -> None:
    seed_session(notes, "src", 3)
    assert notes.store.copy_notes_for_branch("src", "branch") == 3
    task = notes.store.read_note("src-t0")
    notes.replace("task", "edited after the branch", note_hash(task.text), "src-t0")
    assert notes.store.delete_session_notes("src") == 3

    assert notes.store.task("src-t1") is None
    assert notes.store.notes_for_export("src").tasks == []
    inherited = notes.store.inherited_notes("branch")
    assert [(n.task_id, n.session_id, n.text) for n in inherited] == [
        ("src-t0", "src", "note 0"),
        ("src-t1", "src", "note 1"),
        ("src-t2", "src", "note 2"),
    ]
    with pytest.raises(NotFound):
        notes.read("src-t0")


def test_a_branch_of_a_branch_inherits_everything(notes: Notes) -> None:
    seed_session(notes, "a", 2)
    notes.store.copy_notes_for_branch("a", "b")
    seed_session(notes, "b", 1, "own")
    assert notes.store.copy_notes_for_branch("b", "c") == 3
    assert [n.text for n in notes.store.inherited_notes("c")] == ["note 0", "note 1", "own 0"]


def insert_archive(store: TaskNotesStore, session: str, count: int, text: str) -> None:
    with store.connection() as connection, db.transaction(connection):
        connection.executemany(
            "INSERT INTO branch_notes (session_id, source_session_id, task_id, prompt, created_at, text, position) "
            "VALUES (?, 'older', ?, '', 't', ?, ?)",
            [(session, f"old-{i}", text, i) for i in range(count)],
        )


def test_a_branch_over_10000_tasks_is_rejected_and_nothing_copied(notes: Notes) -> None:
    insert_archive(notes.store, "src", BRANCH_MAX_TASKS, "n")
    seed_session(notes, "src", 1)
    with pytest.raises(TooLarge, match="10,001 tasks") as caught:
        notes.store.copy_notes_for_branch("src", "branch")
    assert "No notes were dropped" in caught.value.message
    assert notes.store.inherited_notes("branch") == []


def test_a_branch_over_32_mb_of_notes_is_rejected_and_nothing_copied(notes: Notes) -> None:
    per_note = NOTE_CAP_BYTES
    insert_archive(notes.store, "src", ARCHIVE_MAX_BYTES // per_note, "x" * per_note)
    seed_session(notes, "src", 1, "y" * 15_000)
    with pytest.raises(TooLarge, match="33,"):
        notes.store.copy_notes_for_branch("src", "branch")
    assert notes.store.inherited_notes("branch") == []
    with pytest.raises(TooLarge, match="export limit"):
        notes.store.notes_for_export("src")


def test_a_branch_with_an_unreadable_legacy_note_is_refused(notes: Notes) -> None:
    notes.register_task("t1", "src", "a")
    legacy = notes.root / "tasks" / "t1" / "memory.md"
    legacy.parent.mkdir(parents=True)
    legacy.write_bytes(b"\xff\xfe")
    with pytest.raises(Conflict, match="not valid UTF-8"):
        notes.store.copy_notes_for_branch("src", "branch")
    assert notes.store.inherited_notes("branch") == []


def test_export_holds_current_notes_legacy_ones_and_inherited_ones(notes: Notes) -> None:
    seed_session(notes, "a", 1)
    notes.store.copy_notes_for_branch("a", "b")
    notes.register_task("b-t0", "b", "own turn")
    notes.register_task("b-t1", "b", "legacy turn")
    notes.append("task", "current", "b-t0")
    legacy = notes.root / "tasks" / "b-t1" / "memory.md"
    legacy.parent.mkdir(parents=True)
    legacy.write_text("from a plain file")
    exported = notes.store.notes_for_export("b")
    payload = exported.to_json()
    assert [(n["taskId"], n["text"]) for n in payload["tasks"]] == [
        ("b-t0", "current"),
        ("b-t1", "from a plain file"),
    ]
    assert [n["text"] for n in payload["inherited"]] == ["note 0"]
    assert payload["tasks"][0]["hash"] == note_hash("current")
    markdown = exported.to_markdown()
    assert "### Task b-t0" in markdown and "from a plain file" in markdown and "Inherited" in markdown


def test_delete_leaves_legacy_files_and_other_sessions_alone(notes: Notes) -> None:
    seed_session(notes, "keep", 1)
    notes.register_task("gone-t0", "gone", "x")
    legacy = notes.root / "tasks" / "gone-t0" / "memory.md"
    legacy.parent.mkdir(parents=True)
    legacy.write_text("plain")
    notes.store.delete_session_notes("gone")
    assert legacy.read_text() == "plain"
    assert notes.store.read_note("keep-t0").text == "note 0"
    assert any(e["action"] == "delete" and e["task_id"] == "gone-t0" for e in notes.store.events())
