"""Project and task notes (seed "native project and task notes"): read, append, hash-guarded replace.

Project notes are ``<workspace>/.shiro/memory/project.md``; task notes live in ``shiro.db``
(``task_notes.TaskNotesStore``). Each store holds at most 16,000 UTF-8 bytes. Every write holds
the workspace reservation, so it cannot interleave with a running turn's file changes, and a
project write checks, right before replacing the file, that it still holds what was read (an
editor may have saved it meanwhile).

Task scope without a task id means the current conversation's latest task: ``current_session``
names the live session (the service wires it). With no session, or a session without tasks,
reads show no task notes and task writes ask for an explicit ``taskId``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from shiro_lsp.errors import BadParams, Conflict
from shiro_lsp.fs.reader import ConfinedRead, read_confined
from shiro_lsp.state.atomic import replacing
from shiro_lsp.state.notes_context import render_project_block, render_task_block
from shiro_lsp.state.reservation import reserve_workspace
from shiro_lsp.state.task_notes import (
    NOTE_CAP_BYTES,
    TaskNotesStore,
    TaskRecord,
    check_expected,
    check_size,
    merge,
    note_hash,
)

Scope = Literal["project", "task"]
PROJECT_NOTES_PARTS = (".shiro", "memory", "project.md")
INJECTED_TASKS = 8


@dataclass(frozen=True)
class NotesView:
    project: str
    task: str
    project_hash: str
    task_hash: str
    task_id: str | None
    problems: list[str] = field(default_factory=list)


def _no_session() -> str | None:
    return None


class ProjectNotesFile:
    """``.shiro/memory/project.md`` in the workspace, read without following links."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.path = workspace.joinpath(*PROJECT_NOTES_PARTS)

    def read(self) -> ConfinedRead:
        return read_confined(self.workspace, PROJECT_NOTES_PARTS, NOTE_CAP_BYTES)

    def current(self) -> str:
        """The text a write starts from; a file that cannot be read is never written over."""
        found = self.read()
        if found.problem:
            raise Conflict(
                f"{found.problem} Shiro will not write over project notes it cannot read; "
                "fix the file, then try again. Nothing was changed."
            )
        return found.text or ""

    def write(self, text: str, observed: str, before_replace: Callable[[], None] | None = None) -> None:
        """Atomically replace the file with ``text`` if it still holds ``observed``.

        ``before_replace`` (the audit row) runs once the new text is safely on disk beside the
        file and before it takes the file's place: if it fails (a full disk), the file is left as
        it was, so the write and its audit succeed or fail together and a retry cannot duplicate.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.current()  # the folders were just created: re-check none of them is a link

        def unchanged_then_audit() -> None:
            if note_hash(self.current()) != note_hash(observed):
                raise Conflict(
                    f"{self.path} was changed on disk (in an editor?) while Shiro was writing it. "
                    "Nothing was changed; read the notes again and retry."
                )
            if before_replace is not None:
                before_replace()

        with replacing(self.path, before_replace=unchanged_then_audit) as staged:
            staged.file.write(text.encode("utf-8"))


class Notes:
    """The notes of one workspace, as every front door (LSP, MCP, the turn engine) sees them."""

    def __init__(
        self,
        workspace: str,
        root: Path,
        *,
        actor: str = "lsp",
        current_session: Callable[[], str | None] = _no_session,
    ) -> None:
        self.workspace = workspace
        self.root = root
        self.actor = actor
        self.current_session = current_session
        self.store = TaskNotesStore(root)
        self.project_file = ProjectNotesFile(Path(workspace))

    # --- tasks (the engine registers one per turn) -----------------------------------------------

    def register_task(self, task_id: str, session_id: str, prompt: str) -> TaskRecord:
        return self.store.register_task(task_id, session_id, self.workspace, prompt)

    def task_for(self, task_id: str | None) -> TaskRecord | None:
        """The named task of this workspace, else the current session's latest task, else None."""
        if task_id is not None:
            return self.store.resolve(task_id, self.workspace)
        session = self.current_session()
        return self.store.latest_task(session) if session else None

    def _require_task(self, task_id: str | None) -> TaskRecord:
        task = self.task_for(task_id)
        if task is None:
            raise BadParams(
                "There is no task in this conversation yet. Pass taskId: the exact id a chat turn returned."
            )
        return task

    # --- read / append / replace -----------------------------------------------------------------

    def read(self, task_id: str | None = None) -> NotesView:
        task = self.task_for(task_id)
        project = self.project_file.read()
        problems = [project.problem] if project.problem else []
        task_text = ""
        if task is not None:
            found = self.store.read_note(task.id)
            task_text = found.text
            problems += [found.problem] if found.problem else []
        project_text = project.text or ""
        return NotesView(
            project_text,
            task_text,
            note_hash(project_text),
            note_hash(task_text),
            task.id if task else None,
            problems,
        )

    def append(self, scope: Scope, note: str, task_id: str | None = None) -> NotesView:
        if not note.strip():
            raise BadParams("The note is empty; there is nothing to append.")
        check_size(note, "The note")
        if scope == "task":
            task = self._require_task(task_id)
            with reserve_workspace(self.root, self.workspace):
                self.store.append_note(task, note, self.actor)
            return self.read(task.id)
        with reserve_workspace(self.root, self.workspace):
            current = self.project_file.current()
            text = merge(current, note)
            check_size(text, "The project notes")
            self.project_file.write(
                text,
                current,
                lambda: self.store.audit(self.workspace, "project", None, "append", text, self.actor),
            )
        return self.read(task_id)

    def replace(
        self, scope: Scope, note: str, expected_hash: str | None, task_id: str | None = None
    ) -> NotesView:
        """Replace the notes if they still hash to ``expected_hash``; an empty ``note`` clears them."""
        if scope == "task":
            task = self._require_task(task_id)
            with reserve_workspace(self.root, self.workspace):
                self.store.replace_note(task, note, expected_hash, self.actor)
            return self.read(task.id)
        with reserve_workspace(self.root, self.workspace):
            current = self.project_file.current()
            check_expected(current, expected_hash, "The project notes")
            check_size(note, "The project notes")
            action = "replace" if note else "clear"
            self.project_file.write(
                note,
                current,
                lambda: self.store.audit(self.workspace, "project", None, action, note, self.actor),
            )
        return self.read(task_id)

    # --- prompt blocks ---------------------------------------------------------------------------

    def project_notes_block(self) -> str:
        """The system-prompt block with the project notes; '' when there are none."""
        found = self.project_file.read()
        return render_project_block(found.text or "", found.problem)

    def task_notes_block(self, session_id: str) -> str:
        """Recent task notes of ``session_id`` (and inherited ones) as labelled historical data."""
        count, notes, inherited = self.store.recent_notes(session_id, INJECTED_TASKS)
        return render_task_block(
            notes, not_inspected=max(0, count - INJECTED_TASKS), inherited=list(reversed(inherited))
        )
