"""The user's review of what turns changed: rows, diff, undo, keep, the checkpoint list, restore.

:class:`Checkpoints` is the service the front doors drive: ``turn()`` gives the engine a recorder
(``recorder.py``); ``changes``/``diff``/``undo``/``keep``/``listing``/``restore`` answer the
``shiro/changes*`` and ``shiro/checkpoint/*`` requests.

Never lose the user's work: undo and restore write a file only when it still holds what Shiro
last wrote there. Anything else (the user edited it, a formatter ran) is a conflict: reported,
and the file is left as it is. A file that is not covered (``recorder.py``) is never written,
deleted or truncated here.

Methods are blocking (files, hashing).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from shiro_lsp import diffs
from shiro_lsp.checkpoints.files import CheckpointFiles
from shiro_lsp.checkpoints.recorder import TurnChanges
from shiro_lsp.checkpoints.rows import TurnChangesView, as_text, is_binary, summary_of
from shiro_lsp.clock import now_iso
from shiro_lsp.errors import BadParams, NotFound, ShiroError
from shiro_lsp.fs import jail
from shiro_lsp.fs.jail import Roots
from shiro_lsp.fs.secrets import is_secret_file
from shiro_lsp.ids import new_id
from shiro_lsp.messages import Message
from shiro_lsp.state.checkpoints import (
    Checkpoint,
    CheckpointStore,
    FileRecord,
    FileState,
    RestoreMode,
    last_touching,
    left_states,
    restore_targets,
    same,
    sha256,
)

log = logging.getLogger(__name__)

CONFLICT_TEXT = "{path} was changed after Shiro's edit (by you or another program), so it was left as it is."
SECRET_NOT_SHOWN = "(a secrets file: its content is kept to be put back, never shown)\n"
NOT_COVERED_TEXT = "{path} is not covered ({why}), so it was left as it is."
UNDONE_NOTE = (
    "Since your last turn the user undid your changes to {files}: read them again before building on them."
)
UNDONE_NAMED = 10


@dataclass(frozen=True)
class FileDiff:
    path: str
    before: str | None
    after: str | None
    binary: bool
    hunks: list[diffs.Hunk]


@dataclass(frozen=True)
class UndoOutcome:
    path: str
    undone: bool
    conflict: str | None = None


@dataclass(frozen=True)
class CheckpointSummary:
    id: str
    task_id: str
    created_at: str
    prompt: str
    files: list[str]
    kind: Literal["turn", "redo"]
    not_covered: list[str]


@dataclass(frozen=True)
class RestoreOutcome:
    restored: list[str]
    conflicts: list[str]
    redo_id: str | None
    messages_removed: int = 0
    not_covered: list[str] = field(default_factory=list)
    """Paths left as they are because the checkpoint cannot put them back (not covered)."""
    deleted: list[str] = field(default_factory=list)
    """Of ``restored``, the paths the restore removed (absent at the point it went back to)."""
    created: list[str] = field(default_factory=list)
    """Of ``restored``, the paths the restore wrote where there was no file."""


class ChatSession:
    """What a chat restore needs of the live session (kept abstract: tests pass a list)."""

    def __init__(self, get: Callable[[], list[Message]], put: Callable[[list[Message]], None]) -> None:
        self.get = get
        self.put = put


class Checkpoints:
    def __init__(
        self,
        store: CheckpointStore,
        workspace: Path,
        project_key: str,
        state_root: Path,
        folders: Callable[[], Roots] | None = None,
    ) -> None:
        """``folders``: multi-root, every workspace folder with this one first (the tools' view)."""
        self.store = store
        self.files = CheckpointFiles(store, workspace, project_key, state_root, folders)
        self.undone = UndoneLog()

    def turn(self, session_id: str, task_id: str, prompt: str, message_index: int) -> TurnChanges:
        return TurnChanges(self.files, session_id, task_id, prompt, message_index)

    def saved_by_user(self, path: str) -> None:
        """The editor saved ``path`` (``textDocument/didSave``): the user's own write, not a turn's."""
        self.files.saves.saved(path)

    # -- views

    def _turns(self, session_id: str) -> list[Checkpoint]:
        return [c for c in self.store.list(session_id) if c.kind == "turn" and c.files]

    def _turn(self, session_id: str, task_id: str | None) -> Checkpoint | None:
        turns = self._turns(session_id)
        if task_id is None:
            return turns[-1] if turns else None
        for checkpoint in turns:
            if checkpoint.task_id == task_id:
                return checkpoint
        if any(c.task_id == task_id for c in self.store.list(session_id)):
            return None
        raise NotFound(f"No turn {task_id} with changes in this session.")

    def changes(self, session_id: str, task_id: str | None) -> TurnChangesView:
        checkpoint = self._turn(session_id, task_id)
        if checkpoint is None:
            return TurnChangesView(task_id, None, [])
        return self.files.view(checkpoint, left=left_states(self.store.list(session_id)))

    def _record(self, session_id: str, path: str, task_id: str | None) -> tuple[Checkpoint, str, FileRecord]:
        checkpoint = self._turn(session_id, task_id)
        if checkpoint is None:
            raise NotFound("No turn of this session changed files yet.")
        rel = path.strip()  # "./x" is not "x" in a multi-root workspace (where x is a folder's name)
        if rel not in checkpoint.files:
            resolved = self.files.resolve(path)
            rel = jail.relative_posix(self.files.roots(), resolved)
        record = checkpoint.files.get(rel)
        if record is None:
            changed = ", ".join(checkpoint.visible_files()[:10])
            raise NotFound(f"{path} was not changed by that turn (it changed: {changed}).")
        return checkpoint, rel, record

    def diff(self, session_id: str, path: str, task_id: str | None) -> FileDiff:
        """The checkpoint's bytes against the file now. A not-covered file has no hunks to undo;
        one without earlier bytes shows a line saying so on both sides."""
        checkpoint, rel, record = self._record(session_id, path, task_id)
        source = checkpoint.files.get(record.moved_from, record) if record.moved_from else record
        now = self.files.read_now(rel)
        if record.unrecorded is not None:
            after = None if now is None else f"(the file now: {len(now)} bytes, sha256 {sha256(now)[:12]})\n"
            return FileDiff(rel, f"(not covered: {record.not_covered})\n", after, True, [])
        before = self.files.bytes_of(source.before)
        if is_secret_file(rel):  # kept to be put back, never shown
            return FileDiff(rel, SECRET_NOT_SHOWN, SECRET_NOT_SHOWN, True, [])
        if is_binary(before) or is_binary(now):
            return FileDiff(rel, summary_of(before), summary_of(now), True, [])
        before_text, now_text = as_text(before), as_text(now)
        hunks = [] if record.not_covered else diffs.hunks(before_text or "", now_text or "")
        return FileDiff(rel, before_text, now_text, False, hunks)

    def undo(self, session_id: str, path: str, task_id: str | None, hunks: list[int] | None) -> UndoOutcome:
        checkpoint, rel, record = self._record(session_id, path, task_id)
        everything = self.store.list(session_id)
        checkpoint = next(c for c in everything if c.id == checkpoint.id)
        record = checkpoint.files[rel]
        left = left_states(everything)
        paths = [rel] + ([record.moved_from] if record.moved_from else [])
        for each in paths:
            why = checkpoint.files[each].not_covered
            if why is not None:
                return UndoOutcome(rel, False, NOT_COVERED_TEXT.format(path=each, why=why))
        for each in paths:
            if not same(self.files.current(each), left.get(each, checkpoint.files[each].after)):
                return UndoOutcome(rel, False, CONFLICT_TEXT.format(path=each))
        if hunks is not None and record.moved_from is not None:
            raise BadParams(f"{rel} was moved; undo the whole move (leave out hunks).")
        if hunks is None:
            targets = {each: checkpoint.files[each].before for each in paths}
        else:
            targets = {rel: self._reverted(record, rel, hunks)}
        for each, state in targets.items():
            self.files.put_back(each, state)
            last = last_touching(everything, each) or checkpoint
            last.files[each].set_latest(state)
            if last is not checkpoint:
                self.store.save(last)
            if same(state, checkpoint.files[each].before):
                checkpoint.files[each].reviewed = True
        self.store.save(checkpoint)
        self.undone.add(session_id, rel if hunks is None else f"part of {rel}")
        return UndoOutcome(rel, True)

    def _reverted(self, record: FileRecord, rel: str, hunks: list[int]) -> FileState:
        before, now = self.files.bytes_of(record.before), self.files.read_now(rel)
        if is_binary(before) or is_binary(now):
            raise BadParams(f"{rel} is a binary file: undo it whole (leave out hunks).")
        try:
            reverted = diffs.revert(as_text(before) or "", as_text(now) or "", hunks)
        except IndexError as error:
            raise BadParams(f"{rel}: {error}; get them again with shiro/changes/diff.") from None
        data = reverted.encode("utf-8")
        if record.before is not None and data == before:
            return record.before
        mode = (self.files.current(rel) or record.before or FileState("", 0o644, 0)).mode
        return FileState(self.store.blobs.put(data), mode, len(data))

    def keep(self, session_id: str, path: str | None, task_id: str | None) -> int:
        checkpoint = self._turn(session_id, task_id)
        if checkpoint is None:
            return 0
        chosen = checkpoint.visible_files() if path is None else [self._record(session_id, path, task_id)[1]]
        kept = 0
        for each in chosen:
            record = checkpoint.files[each]
            if not record.reviewed:
                record.reviewed = True
                kept += 1
        self.store.save(checkpoint)
        return kept

    def listing(self, session_id: str) -> list[CheckpointSummary]:
        out = [
            CheckpointSummary(
                c.id, c.task_id, c.created_at, c.prompt, c.visible_files(), c.kind, list(c.not_covered)
            )
            for c in self.store.list(session_id)
            if c.files or c.kind == "redo"
        ]
        return list(reversed(out))

    # -- restore

    def restore(
        self, session_id: str, checkpoint_id: str, mode: RestoreMode, chat: ChatSession
    ) -> RestoreOutcome:
        """Put the code, the chat or both back as they were before that checkpoint's turn.

        The restore itself is recorded as a ``redo`` checkpoint: restoring that one undoes it.
        """
        everything = self.store.list(session_id)
        index = next((i for i, c in enumerate(everything) if c.id == checkpoint_id), None)
        if index is None:
            raise NotFound(f"No checkpoint {checkpoint_id} in this session.")
        target = everything[index]
        messages = chat.get()
        chat_op = self._chat_op(target, messages) if mode in ("chat", "both") else None
        redo = Checkpoint(
            id=new_id(),
            session_id=session_id,
            task_id=target.task_id,
            created_at=now_iso(),
            prompt=target.prompt,
            message_index=len(messages),
            kind="redo",
            restored_from=target.id,
            mode=mode,
        )
        restored: list[str] = []
        conflicts: list[str] = []
        not_covered: list[str] = []
        if mode in ("code", "both"):
            restored, conflicts, not_covered = self._restore_code(session_id, everything[index:], redo)
        removed = 0
        if chat_op is not None:
            keep, tail = chat_op
            redo.keep = keep
            redo.tail = list(messages[keep:])
            redo.expected_length = keep + len(tail)
            removed = len(messages) - keep
        if not redo.files and chat_op is None:
            return RestoreOutcome([], sorted(conflicts), None, 0, sorted(not_covered))
        self.store.save(redo)
        if mode == "code" and target.kind == "turn":  # the model still remembers making them
            for path in restored:
                self.undone.add(session_id, path)
        if chat_op is not None:
            keep, tail = chat_op
            chat.put([*messages[:keep], *tail])
        return RestoreOutcome(
            sorted(restored),
            sorted(conflicts),
            redo.id,
            removed,
            sorted(not_covered),
            deleted=sorted(path for path in restored if redo.files[path].after is None),
            created=sorted(path for path in restored if redo.files[path].before is None),
        )

    def _chat_op(self, target: Checkpoint, messages: list[Message]) -> tuple[int, list[Message]] | None:
        """The chat restore as (messages kept, messages then appended)."""
        if target.kind == "redo":
            if target.tail is None or target.keep is None:
                return None
            if target.expected_length != len(messages):
                raise ShiroError(
                    "The chat has moved on since that restore, so it cannot be redone without mixing "
                    "two conversations. Restore the code only (mode: code)."
                )
            return target.keep, list(target.tail)
        start = target.message_index
        if not _is_prompt(messages, start, target.prompt):
            found = [i for i in range(len(messages)) if _is_prompt(messages, i, target.prompt)]
            if not found:
                raise ShiroError(
                    "That turn is no longer in this session's history (it was compacted or already "
                    "restored), so the chat cannot go back to it. Restore the code only (mode: code)."
                )
            start = min(found, key=lambda i: abs(i - start))
        return start, []

    def _restore_code(
        self, session_id: str, run: list[Checkpoint], redo: Checkpoint
    ) -> tuple[list[str], list[str], list[str]]:
        """(restored, conflicts, not covered): a file the run has no earlier bytes for, or that the
        user saved during it, is never written or removed here."""
        targets = restore_targets(run)
        left = left_states(self.store.list(session_id))
        restored: list[str] = []
        conflicts: list[str] = []
        not_covered: list[str] = []
        for path, target in sorted(targets.items()):
            before, last_after = target.before, target.last_after
            if target.not_covered is not None:
                not_covered.append(path)
                continue
            try:
                now = self.files.current(path)
            except (BadParams, OSError):
                conflicts.append(path)
                continue
            if same(now, before):
                continue
            expected = left.get(path, last_after)
            if not same(now, expected):
                conflicts.append(path)
                continue
            held = self.files.capture(path)
            try:
                self.files.put_back(path, before)
            except (OSError, ShiroError) as error:
                log.warning("restore of %s failed: %s", path, error)
                conflicts.append(path)
                continue
            redo.files[path] = FileRecord(held, before)
            restored.append(path)
        return restored, conflicts, not_covered

    def undone_note(self, session_id: str) -> str:
        """One line for the session's next model request: what the user undid of Shiro's changes
        since the last one ('' for nothing). Said once: the line is taken."""
        labels = self.undone.take(session_id)
        if not labels:
            return ""
        named = ", ".join(labels[:UNDONE_NAMED])
        if len(labels) > UNDONE_NAMED:
            named += f" and {len(labels) - UNDONE_NAMED} more"
        return UNDONE_NOTE.format(files=named)

    def delete_session(self, session_id: str) -> None:
        self.undone.take(session_id)
        self.store.delete_session(session_id)


class UndoneLog:
    """What the user undid of Shiro's changes per session, until the next turn tells the model (in
    memory: undo runs in a thread, the turn reads it on the loop)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._labels: dict[str, list[str]] = {}

    def add(self, session_id: str, label: str) -> None:
        with self._lock:
            labels = self._labels.setdefault(session_id, [])
            if label not in labels:
                labels.append(label)

    def take(self, session_id: str) -> list[str]:
        with self._lock:
            return self._labels.pop(session_id, [])


def _is_prompt(messages: list[Message], index: int, prompt: str) -> bool:
    if not 0 <= index < len(messages):
        return False
    message = messages[index]
    if message.get("role") != "user":
        return False
    content = message.get("content")
    if isinstance(content, str):
        return content == prompt
    if isinstance(content, list):
        text = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        return text == prompt
    return False
