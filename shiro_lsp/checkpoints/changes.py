"""Checkpoints of turns, and the review of what they changed (design: "Reviewable edits").

:class:`Checkpoints` is the service the front doors drive: ``turn()`` gives the engine a
:class:`TurnChanges` that records, before each file tool or ``bash`` call runs, what the call is
about to change; ``changes``/``diff``/``undo``/``keep``/``listing``/``restore`` answer the
``shiro/changes*`` and ``shiro/checkpoint/*`` requests.

Never lose the user's work: undo and restore write a file only when it still holds what Shiro
last wrote there. Anything else (the user edited it, a formatter ran) is a conflict: reported,
and the file is left as it is.

Methods are blocking (files, hashing); the async ones hop to a thread themselves.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from shiro_lsp import diffs
from shiro_lsp.checkpoints.scan import Snapshot, WorkspaceScanner
from shiro_lsp.clock import now_iso
from shiro_lsp.errors import BadParams, NotFound, ShiroError, ToolError
from shiro_lsp.fs import jail
from shiro_lsp.fs.jail import Roots, resolve_in_workspace
from shiro_lsp.fs.secrets import is_secret_file
from shiro_lsp.ids import new_id
from shiro_lsp.messages import Message
from shiro_lsp.state.checkpoints import (
    Checkpoint,
    CheckpointStore,
    FileRecord,
    FileState,
    RestoreMode,
    capture,
    last_touching,
    latest_states,
    left_states,
    same,
    sha256,
    state_of,
)
from shiro_lsp.tools.base import JsonObject, WriteRecorder
from shiro_lsp.tools.edits import PLANNERS, FileChange

log = logging.getLogger(__name__)

SCANNED_TOOLS = frozenset({"bash"})
"""Tools that change files without saying which: the workspace is snapshotted around them."""
SCANNED_PREFIXES = ("mcp__",)
RECORDED_TOOLS = frozenset({"edit_file", "multi_edit", "write_file"})
"""Tools that tell the checkpoint what they write (``ToolContext.recorder``): no plan, no re-read."""
BINARY_SNIFF = 8192
PREVIEW_MAX_BYTES = 512 * 1024
"""An approval preview carries a file's text up to this size; a larger one gets a one-line note."""
INLINE_BLOB_BYTES = 256 * 1024
"""An edited file's earlier bytes up to this size go into the journal record, not a file of its own."""
CONFLICT_TEXT = "{path} was changed after Shiro's edit (by you or another program), so it was left as it is."


def is_binary(data: bytes | None) -> bool:
    if data is None:
        return False
    if b"\x00" in data[:BINARY_SNIFF]:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def text_of(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", errors="replace")


def summary_of(data: bytes | None) -> str | None:
    """A binary file as one line for the diff editor."""
    if data is None:
        return None
    return f"(binary file, {len(data)} bytes, sha256 {sha256(data)[:12]})\n"


def large_summary_of(data: bytes | None) -> str | None:
    if data is None:
        return None
    return (
        f"(a file of {len(data)} bytes, sha256 {sha256(data)[:12]}: too large to preview here, "
        f"over {PREVIEW_MAX_BYTES // 1024} KB)\n"
    )


# --- results (plain data; the server maps them to wire types) ------------------------------------


@dataclass(frozen=True)
class ChangedFile:
    path: str
    status: Literal["added", "modified", "deleted", "moved"]
    moved_from: str | None
    additions: int
    deletions: int
    reviewed: bool
    binary: bool
    turn_counts: tuple[int, int] | None = None
    """What the turn itself added/deleted (``additions``/``deletions`` compare with the file now)."""

    def to_json(self) -> dict[str, Any]:
        """The wire shape (``ChangedFile`` in server/protocol.py)."""
        out: dict[str, Any] = {
            "path": self.path,
            "status": self.status,
            "from": self.moved_from,
            "additions": self.additions,
            "deletions": self.deletions,
            "reviewed": self.reviewed,
            "binary": self.binary,
        }
        if self.turn_counts is not None:
            out["turnAdditions"], out["turnDeletions"] = self.turn_counts
        return out


@dataclass(frozen=True)
class TurnChangesView:
    task_id: str | None
    checkpoint_id: str | None
    files: list[ChangedFile]


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


@dataclass(frozen=True)
class ToolChanges:
    """What one tool call changed, for its card: a short diff and one row per file."""

    diff: str
    files: list[ChangedFile]

    def files_json(self) -> list[dict[str, Any]]:
        return [f.to_json() for f in self.files]


class ChatSession:
    """What a chat restore needs of the live session (kept abstract: tests pass a list)."""

    def __init__(self, get: Callable[[], list[Message]], put: Callable[[list[Message]], None]) -> None:
        self.get = get
        self.put = put


# --- one turn ------------------------------------------------------------------------------------


@dataclass
class _Watch:
    paths: list[str] = field(default_factory=list)
    befores: dict[str, bytes | None] = field(default_factory=dict)
    moves: list[tuple[str, str]] = field(default_factory=list)
    modes: dict[str, int] = field(default_factory=dict)
    """The mode each file had when the plan read it."""
    snapshot: Snapshot | None = None
    recorder: _Recorder | None = None


class _Recorder:
    """The checkpoint end of ``ToolContext.recorder``, called in the tool's thread.

    ``before_write`` stores the old bytes (a blob) and appends the manifest, with the state the
    write will leave, before the tool replaces the file: one write per edit, and nothing read
    again. If the write then fails, :meth:`TurnChanges.after` looks at the file and corrects the
    record; if the server dies in between, the record claims bytes the file does not hold, so an
    undo reports a conflict and leaves the file alone. The engine runs one mutating call at a
    time, so nothing else touches the turn's checkpoint meanwhile.
    """

    def __init__(self, turn: TurnChanges) -> None:
        self.turn = turn
        self.befores: dict[str, bytes | None] = {}
        self.writes: dict[str, bytes] = {}
        self.pending: list[str] = []
        self.rows: list[tuple[str, bytes | None, bytes | None]] = []
        self.result: ToolChanges | None = None

    def before_write(self, rel: str, old: bytes | None, old_mode: int | None, new: bytes) -> None:
        checkpoint = self.turn._ensure()
        self.befores.setdefault(rel, old)
        self.writes[rel] = new
        if rel not in self.pending:
            self.pending.append(rel)
        record = checkpoint.files.get(rel)
        inline: list[str] = []
        if record is None:
            before = None
            if old is not None:
                sha, fresh = self.turn.owner.hold(old)
                inline = [sha] if fresh else []
                before = FileState(sha, _mode(old_mode), len(old))
            record = checkpoint.files[rel] = FileRecord(before, before)
        mode = _mode(old_mode if old is not None else None)
        record.set_after(FileState(sha256(new), mode, len(new)))
        record.reviewed = False
        self.turn.owner.store.save(checkpoint, inline)  # on disk before the tool writes

    def after_write(self, rel: str, mode: int) -> None:
        if rel in self.pending:
            self.pending.remove(rel)
        checkpoint = self.turn._ensure()
        record = checkpoint.files.get(rel)
        new = self.writes.get(rel)
        if record is None or record.after is None or new is None:
            return
        dirty = False
        if record.after.mode != mode:  # not the mode expected: say what is there
            record.set_after(FileState(record.after.sha, mode, record.after.size))
            dirty = True
        if self.befores.get(rel) != new:  # the call changed the bytes (compared, not hashed again)
            self.rows.append((rel, self.befores.get(rel), new))
        dirty = self.turn._prune(checkpoint) or dirty
        if dirty:
            self.turn.owner.store.save(checkpoint)
        self.result = self.turn.owner.tool_changes(self.rows, checkpoint) if self.rows else None


def _scanned(tool_name: str) -> bool:
    """A tool that changes files without saying which: the workspace is snapshotted around it."""
    return tool_name in SCANNED_TOOLS or tool_name.startswith(SCANNED_PREFIXES)


def _mode(mode: int | None) -> int:
    """A file's mode, or the one a new file gets."""
    return jail.new_file_mode() if mode is None else mode


class TurnChanges:
    """The checkpoint of one turn, made on its first change and updated after every call."""

    def __init__(
        self, owner: Checkpoints, session_id: str, task_id: str, prompt: str, message_index: int
    ) -> None:
        self.owner = owner
        self.session_id = session_id
        self.task_id = task_id
        self.prompt = prompt
        self.message_index = message_index
        self.checkpoint: Checkpoint | None = None
        self._prepared: _Watch | None = None
        """A scan made right after the last call (``after(prepare=...)``), for the next call's before."""

    # -- asked by the engine

    def plan(self, tool_name: str, input: JsonObject) -> list[FileChange] | None:
        planner = PLANNERS.get(tool_name)
        if planner is None:
            return None
        try:
            return planner(self.owner.roots(), input)
        except (ToolError, OSError, KeyError, TypeError):
            return None  # the tool itself will say what is wrong

    async def preview(self, tool_name: str, input: JsonObject) -> list[dict[str, Any]] | None:
        """``FilePreview`` objects (wire shape) for the approval card, or None for other tools."""
        if tool_name not in PLANNERS:
            return None
        changes = await asyncio.to_thread(self.plan, tool_name, input)
        if not changes:
            return None
        return [self.owner.preview_of(c) for c in changes]

    async def before(self, tool_name: str, input: JsonObject) -> _Watch | None:
        """Before a mutating call: what the checkpoint needs to watch it. For a recorded tool,
        pass :meth:`recorder` of the result to the tool (``ToolContext.recorder``)."""
        prepared, self._prepared = self._prepared, None  # made for this call only
        if tool_name in RECORDED_TOOLS:
            return _Watch(recorder=_Recorder(self))
        if tool_name in PLANNERS:
            return await asyncio.to_thread(self._before_files, tool_name, input)
        if _scanned(tool_name):
            return prepared or await asyncio.to_thread(self._before_scan)
        return None

    def recorder(self, watch: _Watch | None) -> WriteRecorder | None:
        return None if watch is None else watch.recorder

    async def after(self, watch: _Watch | None, prepare: str | None = None) -> ToolChanges | None:
        """What the call changed. ``prepare``: the tool the engine runs next under the same
        reservation; when it is scanned, its snapshot is taken in the same thread, right after
        this look (nothing else writes in between: the engine still holds the workspace)."""
        self._prepared = None
        if watch is None:
            return None
        recorder = watch.recorder
        if recorder is None:
            if prepare is not None and _scanned(prepare):
                changed, self._prepared = await asyncio.to_thread(self._after_then_scan, watch)
                return changed
            return await asyncio.to_thread(self._after, watch)
        if recorder.pending:  # told before a write that then failed: look at what is there now
            leftover = _Watch(paths=list(recorder.pending), befores=dict(recorder.befores))
            return await asyncio.to_thread(self._after, leftover)
        return recorder.result

    def drop_prepared(self) -> None:
        self._prepared = None

    def finish(self) -> TurnChangesView | None:
        """At the turn's end: held blobs go to files, each file's own counts are fixed, and the
        session's journal is compacted when superseded versions dominate it."""
        self.owner.store.blobs.flush()
        if self.checkpoint is None or not self.checkpoint.files:
            self._compact()
            return None
        view = self.owner.view(self.checkpoint, settle=True)
        self._compact()
        return view

    def _compact(self) -> None:
        try:
            self.owner.store.maybe_compact(self.session_id)
        except (OSError, ValueError) as error:  # the journal stays as it was: nothing is lost
            log.warning("could not compact the checkpoint journal of %s: %s", self.session_id, error)

    # -- the work, in a thread

    def _ensure(self) -> Checkpoint:
        if self.checkpoint is None:
            self.checkpoint = Checkpoint(
                id=new_id(),
                session_id=self.session_id,
                task_id=self.task_id,
                created_at=now_iso(),
                prompt=self.prompt,
                message_index=self.message_index,
            )
        return self.checkpoint

    def _before_files(self, tool_name: str, input: JsonObject) -> _Watch:
        changes = self.plan(tool_name, input) or []
        watch = _Watch()
        for change in changes:
            if change.moved_from is not None:
                watch.moves.append((change.moved_from, change.path))
            for path in (change.moved_from, change.path):
                if path is None or path in watch.paths:
                    continue
                watch.paths.append(path)
                watch.befores[path] = change.before if path == change.path else change.after
                if path == change.path and change.before_mode is not None:
                    watch.modes[path] = change.before_mode
        checkpoint = self._ensure()
        fresh = False
        for path in watch.paths:
            if path not in checkpoint.files:
                before = self.owner.capture(path, watch.befores.get(path), watch.modes.get(path))
                checkpoint.files[path] = FileRecord(before, before)
                fresh = True
        if fresh:
            self.owner.store.save(checkpoint)  # on disk before the tool writes
        return watch

    def _before_scan(self) -> _Watch:
        return _Watch(snapshot=self.owner.scanner.snapshot())

    def _after_then_scan(self, watch: _Watch) -> tuple[ToolChanges | None, _Watch | None]:
        changed = self._after(watch)
        try:
            return changed, self._before_scan()
        except (OSError, ValueError) as error:  # the next call makes its own
            log.warning("checkpoint scan for the next call failed: %s", error)
            return changed, None

    def _after(self, watch: _Watch) -> ToolChanges | None:
        checkpoint = self._ensure()
        rows: list[tuple[str, bytes | None, bytes | None]] = []
        written: dict[str, FileState | None] = {}
        if watch.snapshot is not None:
            found, problems = self.owner.scanner.changes(watch.snapshot)
            roots = self.owner.roots()
            for change in found:
                path = jail.folder_relative(roots, 0, change.path)  # the scan covers this root only
                record = checkpoint.files.get(path)
                if record is None:
                    record = checkpoint.files[path] = FileRecord(change.before, change.after)
                record.set_after(change.after)
                record.reviewed = False
                written[path] = change.after
                rows.append((path, self.owner.bytes_of(change.before), self.owner.bytes_of(change.after)))
            for note in [*watch.snapshot.not_covered, *problems]:
                if note not in checkpoint.not_covered:
                    checkpoint.not_covered.append(note)
            if found:
                skipped = ", ".join(watch.snapshot.skipped_trees[:10])
                note = f"not watched: {skipped} and git-ignored paths" if skipped else ""
                if note and note not in checkpoint.not_covered:
                    checkpoint.not_covered.append(note)
        else:
            for path in watch.paths:
                now, data = self.owner.observe(path)
                if _holds(now, watch.befores.get(path)):
                    continue
                record = checkpoint.files[path]
                record.set_after(now)
                record.reviewed = False
                written[path] = now
                rows.append((path, watch.befores.get(path), data))
            for source, target in watch.moves:
                if source in written and target in written and written[source] is None:
                    checkpoint.files[target].moved_from = checkpoint.files[source].moved_from or source
                    checkpoint.files[source].moved_to = target
        self._prune(checkpoint)
        if not written:
            if checkpoint.files:
                self.owner.store.save(checkpoint)
            return None
        self.owner.store.save(checkpoint)
        return self.owner.tool_changes(rows, checkpoint)

    @staticmethod
    def _prune(checkpoint: Checkpoint) -> bool:
        """Drop the files touched and put back within the turn (not a change); any dropped?"""
        dropped = [
            p
            for p, r in checkpoint.files.items()
            if same(r.before, r.after) and r.moved_to is None and r.moved_from is None
        ]
        for path in dropped:
            del checkpoint.files[path]
        return bool(dropped)


def _holds(state: FileState | None, data: bytes | None) -> bool:
    """Whether a file in ``state`` holds exactly ``data`` (None: absent)."""
    if state is None or data is None:
        return state is None and data is None
    return state.size == len(data) and state.sha == sha256(data)


# --- the service ---------------------------------------------------------------------------------


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
        self.workspace = Path(os.path.realpath(workspace))
        self.folders = folders
        self.scanner = WorkspaceScanner(
            self.workspace, store.blobs, store.scan_cache(project_key), exclude=state_root
        )

    def turn(self, session_id: str, task_id: str, prompt: str, message_index: int) -> TurnChanges:
        return TurnChanges(self, session_id, task_id, prompt, message_index)

    # -- files

    def roots(self) -> Roots:
        """What paths are resolved in: this workspace, or all folders (a path may be ``name/...``)."""
        return self.folders() if self.folders is not None else self.workspace

    def resolve(self, path: str) -> Path:
        try:
            return resolve_in_workspace(self.roots(), path)
        except ToolError as error:
            raise BadParams(error.message) from None

    def capture(self, path: str, expected: bytes | None = None, mode: int | None = None) -> FileState | None:
        """Store the file's bytes. ``expected``: what the plan just read (saves reading it again
        when the file's size still says so; the hash decides nothing here, the bytes are stored).
        With its ``mode`` too (read from the same open file), nothing is looked at again."""
        if expected is not None and mode is not None:
            return FileState(self.store.blobs.put(expected), mode, len(expected))
        resolved = self.resolve(path)
        if expected is not None:
            try:
                st = os.lstat(resolved)
            except FileNotFoundError:
                return None
            if stat.S_ISREG(st.st_mode) and st.st_size == len(expected):
                return FileState(self.store.blobs.put(expected), stat.S_IMODE(st.st_mode), len(expected))
        return capture(self.store.blobs, resolved)

    def observe(self, path: str) -> tuple[FileState | None, bytes | None]:
        """The file's state now and its bytes, without storing them: what a file tool left is
        only compared later (conflicts), never restored, so its bytes need no blob."""
        try:
            fd = os.open(self.resolve(path), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return None, None
        with os.fdopen(fd, "rb") as handle:
            st = os.fstat(handle.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise IsADirectoryError(f"{path} is not a regular file")
            data = handle.read()
        return FileState(sha256(data), stat.S_IMODE(st.st_mode), len(data)), data

    def hold(self, data: bytes) -> tuple[str, bool]:
        """A before-image for the journal record itself (small), or a blob file (large)."""
        if len(data) <= INLINE_BLOB_BYTES:
            return self.store.blobs.hold(data)
        return self.store.blobs.put(data), False

    def put_back(self, path: str, state: FileState | None) -> None:
        """Make ``path`` hold ``state`` (bytes and mode), or remove it when ``state`` is None.

        Through the jail: the new content lands whole (temp file + rename inside the opened parent
        directory, mode set before the rename), and neither the rename nor an unlink can be
        redirected by a directory or symlink swapped in after the path was checked.
        """
        try:
            if state is None:
                jail.remove_file(self.roots(), path)
            else:
                jail.write_atomic(self.roots(), path, self.store.blobs.get(state.sha), state.mode)
        except ToolError as error:
            raise ShiroError(error.message) from None

    def current(self, path: str) -> FileState | None:
        return state_of(self.resolve(path))

    def bytes_of(self, state: FileState | None) -> bytes | None:
        return None if state is None else self.store.blobs.get(state.sha)

    def read_now(self, path: str) -> bytes | None:
        try:
            with jail.reading(self.roots(), path) as (_, handle):
                data: bytes = handle.read()
                return data
        except (OSError, ToolError):  # absent, or nothing the jail lets Shiro read
            return None

    def preview_of(self, change: FileChange) -> dict[str, Any]:
        """The approval card's before/after. A binary file, or one over
        :data:`PREVIEW_MAX_BYTES` on either side, is shown as one line saying what it is."""
        before = change.before
        if change.moved_from is not None:
            before = change.after
        large = max(len(before or b""), len(change.after or b"")) > PREVIEW_MAX_BYTES
        binary = large or is_binary(before) or is_binary(change.after)
        show = large_summary_of if large else summary_of if binary else text_of
        return {
            "path": change.path,
            "before": show(before),
            "after": show(change.after),
            "from": change.moved_from,
            "binary": binary,
        }

    def row(self, path: str, record: FileRecord, before: bytes | None, now: bytes | None) -> ChangedFile:
        binary = is_binary(before) or is_binary(now)
        added, deleted = (0, 0) if binary else diffs.counts(text_of(before) or "", text_of(now) or "")
        return ChangedFile(
            path, record.status, record.moved_from, added, deleted, record.reviewed, binary, record.counts
        )

    def tool_changes(
        self, rows: list[tuple[str, bytes | None, bytes | None]], checkpoint: Checkpoint
    ) -> ToolChanges:
        parts: list[str] = []
        files: list[ChangedFile] = []
        for path, before, after in rows:
            record = checkpoint.files.get(path)
            if record is None or record.moved_to is not None:
                continue
            if is_binary(before) or is_binary(after):
                files.append(self.row(path, record, before, after))
                parts.append(f"Binary file {path} changed\n")
                continue
            added, deleted, text = diffs.card(text_of(before), text_of(after), path)
            files.append(
                ChangedFile(path, record.status, record.moved_from, added, deleted, record.reviewed, False)
            )
            if is_secret_file(path):
                parts.append(f"(diff of {path} not shown: a secrets file)\n")
            else:
                parts.append(text)
        return ToolChanges(diffs.cut("".join(parts)), files)

    # -- views

    def view(self, checkpoint: Checkpoint, *, settle: bool = False) -> TurnChangesView:
        """Each file's row: the checkpoint against the file now. ``settle`` (the turn's end): a file
        that still holds what the turn left gets those counts as the turn's own, kept for good."""
        rows = []
        settled = False
        for path in checkpoint.visible_files():
            record = checkpoint.files[path]
            before_path = record.moved_from or path
            before_record = checkpoint.files.get(before_path, record)
            now = self.read_now(path)
            if settle and record.counts is None and _holds(record.after, now):
                row = self.row(path, record, self.bytes_of(before_record.before), now)
                record.counts = (row.additions, row.deletions)
                settled = True
            rows.append(self.row(path, record, self.bytes_of(before_record.before), now))
        if settled:
            self.store.save(checkpoint)
        return TurnChangesView(checkpoint.task_id, checkpoint.id, rows)

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
        return self.view(checkpoint)

    def _record(self, session_id: str, path: str, task_id: str | None) -> tuple[Checkpoint, str, FileRecord]:
        checkpoint = self._turn(session_id, task_id)
        if checkpoint is None:
            raise NotFound("No turn of this session changed files yet.")
        rel = path.strip()  # "./x" is not "x" in a multi-root workspace (where x is a folder's name)
        if rel not in checkpoint.files:
            resolved = self.resolve(path)
            rel = jail.relative_posix(self.roots(), resolved)
        record = checkpoint.files.get(rel)
        if record is None:
            changed = ", ".join(checkpoint.visible_files()[:10])
            raise NotFound(f"{path} was not changed by that turn (it changed: {changed}).")
        return checkpoint, rel, record

    def diff(self, session_id: str, path: str, task_id: str | None) -> FileDiff:
        checkpoint, rel, record = self._record(session_id, path, task_id)
        source = checkpoint.files.get(record.moved_from, record) if record.moved_from else record
        before, now = self.bytes_of(source.before), self.read_now(rel)
        if is_binary(before) or is_binary(now):
            return FileDiff(rel, summary_of(before), summary_of(now), True, [])
        before_text, now_text = text_of(before), text_of(now)
        return FileDiff(rel, before_text, now_text, False, diffs.hunks(before_text or "", now_text or ""))

    def undo(self, session_id: str, path: str, task_id: str | None, hunks: list[int] | None) -> UndoOutcome:
        checkpoint, rel, record = self._record(session_id, path, task_id)
        everything = self.store.list(session_id)
        checkpoint = next(c for c in everything if c.id == checkpoint.id)
        record = checkpoint.files[rel]
        left = left_states(everything)
        paths = [rel] + ([record.moved_from] if record.moved_from else [])
        for each in paths:
            if not same(self.current(each), left.get(each, checkpoint.files[each].after)):
                return UndoOutcome(rel, False, CONFLICT_TEXT.format(path=each))
        if hunks is not None and record.moved_from is not None:
            raise BadParams(f"{rel} was moved; undo the whole move (leave out hunks).")
        if hunks is None:
            targets = {each: checkpoint.files[each].before for each in paths}
        else:
            targets = {rel: self._reverted(record, rel, hunks)}
        for each, state in targets.items():
            self.put_back(each, state)
            last = last_touching(everything, each) or checkpoint
            last.files[each].set_latest(state)
            if last is not checkpoint:
                self.store.save(last)
            if same(state, checkpoint.files[each].before):
                checkpoint.files[each].reviewed = True
        self.store.save(checkpoint)
        return UndoOutcome(rel, True)

    def _reverted(self, record: FileRecord, rel: str, hunks: list[int]) -> FileState:
        before, now = self.bytes_of(record.before), self.read_now(rel)
        if is_binary(before) or is_binary(now):
            raise BadParams(f"{rel} is a binary file: undo it whole (leave out hunks).")
        try:
            reverted = diffs.revert(text_of(before) or "", text_of(now) or "", hunks)
        except IndexError as error:
            raise BadParams(f"{rel}: {error}; get them again with shiro/changes/diff.") from None
        data = reverted.encode("utf-8")
        if record.before is not None and data == before:
            return record.before
        mode = (self.current(rel) or record.before or FileState("", 0o644, 0)).mode
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
        if mode in ("code", "both"):
            restored, conflicts = self._restore_code(session_id, everything[index:], redo)
        removed = 0
        if chat_op is not None:
            keep, tail = chat_op
            redo.keep = keep
            redo.tail = list(messages[keep:])
            redo.expected_length = keep + len(tail)
            removed = len(messages) - keep
        if not redo.files and chat_op is None:
            return RestoreOutcome([], sorted(conflicts), None, 0)
        self.store.save(redo)
        if chat_op is not None:
            keep, tail = chat_op
            chat.put([*messages[:keep], *tail])
        return RestoreOutcome(sorted(restored), sorted(conflicts), redo.id, removed)

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
    ) -> tuple[list[str], list[str]]:
        targets = latest_states(run)
        left = left_states(self.store.list(session_id))
        restored: list[str] = []
        conflicts: list[str] = []
        for path, (before, last_after) in sorted(targets.items()):
            try:
                now = self.current(path)
            except (BadParams, OSError):
                conflicts.append(path)
                continue
            if same(now, before):
                continue
            expected = left.get(path, last_after)
            if not same(now, expected):
                conflicts.append(path)
                continue
            held = self.capture(path)
            try:
                self.put_back(path, before)
            except (OSError, ShiroError) as error:
                log.warning("restore of %s failed: %s", path, error)
                conflicts.append(path)
                continue
            redo.files[path] = FileRecord(held, before)
            restored.append(path)
        return restored, conflicts

    def delete_session(self, session_id: str) -> None:
        self.store.delete_session(session_id)


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
