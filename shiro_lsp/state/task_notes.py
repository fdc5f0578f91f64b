"""Tasks and their notes in ``shiro.db`` (seed "native project and task notes").

A task is one chat turn. Its notes live in ``task_notes``; until the first native edit, a known
task's plain file ``<state root>/tasks/<taskId>/memory.md`` (left by hand or by older tools) is
read instead. Once a native row exists it wins, even when it is empty (a cleared note stays
cleared). Branches get a full, independent copy of the source's notes in ``branch_notes``.
Every write commits together with its audit event in one transaction.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from shiro_lsp.clock import now_iso
from shiro_lsp.errors import BadParams, Conflict, NotFound, TooLarge
from shiro_lsp.fs.reader import read_confined
from shiro_lsp.state import db
from shiro_lsp.state.paths import StatePaths

NOTE_CAP_BYTES = 16_000
BRANCH_MAX_TASKS = 10_000
ARCHIVE_MAX_BYTES = 32 * 1024 * 1024
EXPORT_MAX_BYTES = 32 * 1024 * 1024
LEGACY_NOTE_NAME = "memory.md"

_TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")

Source = Literal["native", "legacy", "none"]


def note_hash(text: str) -> str:
    """Lowercase hex SHA-256 of the UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


EMPTY_HASH = note_hash("")


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


def check_task_id(task_id: str) -> str:
    """Task ids are plain tokens: never a path, a path fragment or a relative step."""
    if not _TASK_ID.fullmatch(task_id):
        raise BadParams(
            f'"{task_id[:80]}" is not a task id. Use the exact taskId a chat turn returned '
            "(letters, digits, '-' and '_' only)."
        )
    return task_id


def check_size(text: str, what: str) -> None:
    size = utf8_size(text)
    if size > NOTE_CAP_BYTES:
        raise TooLarge(
            f"{what} would be {size:,} bytes, over the {NOTE_CAP_BYTES:,}-byte limit. "
            "Nothing was changed; shorten the notes (replace) and try again."
        )


def merge(current: str, note: str) -> str:
    """Append ``note`` on a new line after ``current``."""
    if not current:
        return note
    return current + ("" if current.endswith("\n") else "\n") + note


def check_expected(current: str, expected_hash: str | None, what: str) -> None:
    if not expected_hash:
        raise BadParams(f"Replacing {what} needs the hash from your last read (expectedHash).")
    if expected_hash.strip().lower() != note_hash(current):
        raise Conflict(
            f"{what} changed since you read them (the hash no longer matches). "
            "Nothing was changed; read them again and retry."
        )


@dataclass(frozen=True)
class TaskRecord:
    id: str
    session_id: str
    workspace: str
    prompt: str
    created_at: str


@dataclass(frozen=True)
class TaskNoteText:
    """A task's notes as the user sees them: native, legacy (plain file), or none yet."""

    text: str
    source: Source
    problem: str | None = None


@dataclass(frozen=True)
class ArchivedNote:
    """One task's notes as exported or inherited by a branch."""

    task_id: str
    session_id: str
    prompt: str
    created_at: str
    text: str

    def to_json(self) -> dict[str, Any]:
        return {
            "taskId": self.task_id,
            "sessionId": self.session_id,
            "prompt": self.prompt,
            "createdAt": self.created_at,
            "text": self.text,
            "hash": note_hash(self.text),
        }


@dataclass(frozen=True)
class SessionNotes:
    """What an export carries: the session's current task notes and the notes it inherited."""

    tasks: list[ArchivedNote]
    inherited: list[ArchivedNote]
    problems: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(utf8_size(n.text) for n in [*self.tasks, *self.inherited])

    def to_json(self) -> dict[str, Any]:
        return {
            "tasks": [n.to_json() for n in self.tasks],
            "inherited": [n.to_json() for n in self.inherited],
            "problems": list(self.problems),
        }

    def to_markdown(self) -> str:
        if not self.tasks and not self.inherited and not self.problems:
            return ""
        lines = ["## Task notes", ""]
        for note in self.tasks:
            lines += [f"### Task {note.task_id} ({note.created_at})", "", note.text, ""]
        if self.inherited:
            lines += ["## Inherited task notes (from the conversation this one was branched from)", ""]
            for note in self.inherited:
                lines += [
                    f"### Task {note.task_id} of {note.session_id} ({note.created_at})",
                    "",
                    note.text,
                    "",
                ]
        lines += [f"> {problem}" for problem in self.problems]
        return "\n".join(lines).rstrip("\n") + "\n"


def _task(row: sqlite3.Row) -> TaskRecord:
    return TaskRecord(row["id"], row["session_id"], row["workspace"], row["prompt"], row["created_at"])


def same_workspace(a: str, b: str) -> bool:
    return a == b or os.path.realpath(a) == os.path.realpath(b)


class TaskNotesStore:
    """Tasks, task notes, branch archives and the notes audit log in ``<root>/shiro.db``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.database = StatePaths(root).database

    def connection(self) -> AbstractContextManager[sqlite3.Connection]:
        """A connection for this call (``db.opened``), closed when the block ends."""
        return db.opened(self.database)

    def reading(self) -> AbstractContextManager[sqlite3.Connection]:
        """A connection for reads: works on a read-only or full disk, or with no state root at all."""
        return db.opened_for_reading(self.database)

    # --- tasks -----------------------------------------------------------------------------------

    def register_task(self, task_id: str, session_id: str, workspace: str, prompt: str) -> TaskRecord:
        """Record a chat turn when it starts. Registering the same task again is a no-op."""
        check_task_id(task_id)
        with self.connection() as connection, db.transaction(connection):
            row = connection.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()
            if row is not None:
                existing = _task(row)
                if existing.session_id != session_id or existing.workspace != workspace:
                    raise Conflict(f"Task {task_id} is already registered for another session or workspace.")
                return existing
            record = TaskRecord(task_id, session_id, workspace, prompt, now_iso())
            connection.execute(
                "INSERT INTO tasks (id, session_id, workspace, prompt, created_at) VALUES (?, ?, ?, ?, ?)",
                (record.id, record.session_id, record.workspace, record.prompt, record.created_at),
            )
        return record

    def task(self, task_id: str) -> TaskRecord | None:
        with self.reading() as connection:
            row = connection.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()
        return _task(row) if row else None

    def tasks_for_session(self, session_id: str) -> list[TaskRecord]:
        """Oldest first."""
        with self.reading() as connection:
            rows = connection.execute(
                "SELECT * FROM tasks WHERE session_id = ? ORDER BY created_at, rowid", (session_id,)
            ).fetchall()
        return [_task(row) for row in rows]

    def recent_notes(
        self, session_id: str, count: int
    ) -> tuple[int, list[tuple[TaskRecord, TaskNoteText]], list[ArchivedNote]]:
        """What the prompt's task block shows, over one connection: how many tasks ``session_id``
        has, the notes of its newest ``count`` tasks (newest first), and the notes it inherited."""
        with self.reading() as connection:
            rows = connection.execute(
                "SELECT * FROM tasks WHERE session_id = ? ORDER BY created_at, rowid", (session_id,)
            ).fetchall()
            recent = [_task(row) for row in reversed(rows[-count:])] if count > 0 else []
            notes = [(task, self._read_note(connection, task.id)) for task in recent]
            return len(rows), notes, self._inherited(connection, session_id)

    def latest_task(self, session_id: str) -> TaskRecord | None:
        with self.reading() as connection:
            row = connection.execute(
                "SELECT * FROM tasks WHERE session_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
                (session_id,),
            ).fetchone()
        return _task(row) if row else None

    def resolve(self, task_id: str, workspace: str) -> TaskRecord:
        """The task ``task_id`` of this workspace, or a clear error."""
        check_task_id(task_id)
        record = self.task(task_id)
        if record is None:
            raise NotFound(f"There is no task {task_id}. Use the exact taskId a chat turn returned.")
        if not same_workspace(record.workspace, workspace):
            raise NotFound(f"Task {task_id} belongs to another workspace, not {workspace}.")
        return record

    # --- notes -----------------------------------------------------------------------------------

    def read_legacy(self, task_id: str) -> TaskNoteText:
        found = read_confined(self.root, ["tasks", check_task_id(task_id), LEGACY_NOTE_NAME], NOTE_CAP_BYTES)
        if found.problem:
            return TaskNoteText("", "legacy", f"Task notes of {task_id}: {found.problem}")
        if found.text is None:
            return TaskNoteText("", "none")
        return TaskNoteText(found.text, "legacy")

    def read_note(self, task_id: str) -> TaskNoteText:
        with self.reading() as connection:
            return self._read_note(connection, task_id)

    def _read_note(self, connection: sqlite3.Connection, task_id: str) -> TaskNoteText:
        row = connection.execute("SELECT text FROM task_notes WHERE task_id = ?", (task_id,)).fetchone()
        if row is not None:
            return TaskNoteText(str(row["text"]), "native")
        return self.read_legacy(task_id)

    def append_note(self, task: TaskRecord, note: str, actor: str) -> str:
        with self.connection() as connection, db.transaction(connection):
            current = self._writable_note(connection, task.id)
            text = merge(current, note)
            check_size(text, f"The notes of task {task.id}")
            self._store(connection, task, text, "append", actor)
        return text

    def replace_note(self, task: TaskRecord, note: str, expected_hash: str | None, actor: str) -> str:
        with self.connection() as connection, db.transaction(connection):
            current = self._writable_note(connection, task.id)
            check_expected(current, expected_hash, f"The notes of task {task.id}")
            check_size(note, f"The notes of task {task.id}")
            self._store(connection, task, note, "replace" if note else "clear", actor)
        return note

    def _writable_note(self, connection: sqlite3.Connection, task_id: str) -> str:
        found = self._read_note(connection, task_id)
        if found.problem:
            raise Conflict(
                f"{found.problem} Shiro will not write over notes it cannot read: fix or move that file, "
                "then try again. Nothing was changed."
            )
        return found.text

    def _store(
        self, connection: sqlite3.Connection, task: TaskRecord, text: str, action: str, actor: str
    ) -> None:
        stamp = now_iso()
        connection.execute(
            "INSERT INTO task_notes (task_id, text, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (task_id) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at",
            (task.id, text, stamp),
        )
        self._audit(connection, task.workspace, "task", task.id, action, text, actor, stamp)

    def audit(
        self, workspace: str, scope: str, task_id: str | None, action: str, text: str, actor: str
    ) -> None:
        with self.connection() as connection, db.transaction(connection):
            self._audit(connection, workspace, scope, task_id, action, text, actor, now_iso())

    @staticmethod
    def _audit(
        connection: sqlite3.Connection,
        workspace: str,
        scope: str,
        task_id: str | None,
        action: str,
        text: str,
        actor: str,
        stamp: str,
    ) -> None:
        connection.execute(
            "INSERT INTO note_events (at, workspace, scope, task_id, action, bytes, hash, actor) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (stamp, workspace, scope, task_id, action, utf8_size(text), note_hash(text), actor),
        )

    def events(self) -> list[dict[str, Any]]:
        with self.reading() as connection:
            return [dict(row) for row in connection.execute("SELECT * FROM note_events ORDER BY id")]

    # --- sessions: branch, export, delete --------------------------------------------------------

    def inherited_notes(self, session_id: str) -> list[ArchivedNote]:
        """Notes a branch carries from its source, oldest first."""
        with self.reading() as connection:
            return self._inherited(connection, session_id)

    @staticmethod
    def _inherited(connection: sqlite3.Connection, session_id: str) -> list[ArchivedNote]:
        rows = connection.execute(
            "SELECT * FROM branch_notes WHERE session_id = ? ORDER BY position", (session_id,)
        ).fetchall()
        return [
            ArchivedNote(r["task_id"], r["source_session_id"], r["prompt"], r["created_at"], r["text"])
            for r in rows
        ]

    def _current_notes(
        self, connection: sqlite3.Connection, session_id: str
    ) -> tuple[list[ArchivedNote], list[str]]:
        rows = connection.execute(
            "SELECT * FROM tasks WHERE session_id = ? ORDER BY created_at, rowid", (session_id,)
        ).fetchall()
        notes: list[ArchivedNote] = []
        problems: list[str] = []
        for task in (_task(row) for row in rows):
            found = self._read_note(connection, task.id)
            if found.problem:
                problems.append(found.problem)
            if found.text:
                notes.append(ArchivedNote(task.id, session_id, task.prompt, task.created_at, found.text))
        return notes, problems

    def copy_notes_for_branch(self, source_session_id: str, new_session_id: str) -> int:
        """Give the branch a full copy of the source's notes (its own and inherited ones).

        Over BRANCH_MAX_TASKS tasks or ARCHIVE_MAX_BYTES of text, or with a task note that cannot
        be read, the branch is refused (TooLarge / Conflict) and nothing is copied: notes are
        never dropped silently. Returns how many task notes were copied.
        """
        with self.connection() as connection, db.transaction(connection):
            current, problems = self._current_notes(connection, source_session_id)
            if problems:
                raise Conflict(
                    "The branch was not created, because some task notes could not be read: "
                    + " ".join(problems)
                )
            archive = self._inherited(connection, source_session_id) + current
            size = sum(utf8_size(note.text) for note in archive)
            if len(archive) > BRANCH_MAX_TASKS or size > ARCHIVE_MAX_BYTES:
                raise TooLarge(
                    f"The branch was not created: its notes archive would hold {len(archive):,} tasks and "
                    f"{size:,} bytes, over the limits of {BRANCH_MAX_TASKS:,} tasks and "
                    f"{ARCHIVE_MAX_BYTES:,} bytes. No notes were dropped."
                )
            connection.execute("DELETE FROM branch_notes WHERE session_id = ?", (new_session_id,))
            connection.executemany(
                "INSERT INTO branch_notes (session_id, source_session_id, task_id, prompt, created_at, text, "
                "position) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (new_session_id, n.session_id, n.task_id, n.prompt, n.created_at, n.text, i)
                    for i, n in enumerate(archive)
                ],
            )
        return len(archive)

    def notes_for_export(self, session_id: str) -> SessionNotes:
        with self.reading() as connection:
            current, problems = self._current_notes(connection, session_id)
            notes = SessionNotes(current, self._inherited(connection, session_id), problems)
        if notes.size > EXPORT_MAX_BYTES:
            raise TooLarge(
                f"The notes of this conversation are {notes.size:,} bytes, over the export limit of "
                f"{EXPORT_MAX_BYTES:,} bytes."
            )
        return notes

    def delete_session_notes(self, session_id: str) -> int:
        """Remove the session's tasks, their notes and its inherited archive; branches keep their copies.

        Returns how many tasks were removed. Plain legacy files are left on disk untouched.
        """
        with self.connection() as connection, db.transaction(connection):
            tasks = [
                _task(row)
                for row in connection.execute("SELECT * FROM tasks WHERE session_id = ?", (session_id,))
            ]
            for task in tasks:
                connection.execute("DELETE FROM task_notes WHERE task_id = ?", (task.id,))
                self._audit(connection, task.workspace, "task", task.id, "delete", "", "user", now_iso())
            connection.execute("DELETE FROM tasks WHERE session_id = ?", (session_id,))
            connection.execute("DELETE FROM branch_notes WHERE session_id = ?", (session_id,))
        return len(tasks)
