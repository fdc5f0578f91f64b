"""The workspace files a checkpoint reads and writes, and the rows it shows of them.

:class:`CheckpointFiles` is what the recorder (a turn, ``recorder.py``) and the review (the user,
``review.py``) share: the store, the workspace's roots, the file reads and the jail-checked writes,
the user's saves, and the rows (:mod:`shiro_lsp.checkpoints.rows`) made from a checkpoint.

Methods are blocking (files, hashing).
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from shiro_lsp import diffs
from shiro_lsp.checkpoints.rows import (
    PREVIEW_MAX_BYTES,
    ChangedFile,
    FilePreview,
    ReviewState,
    ToolChanges,
    TurnChangesView,
    as_text,
    is_binary,
    large_summary_of,
    summary_of,
)
from shiro_lsp.checkpoints.scan import WorkspaceScanner
from shiro_lsp.errors import BadParams, ShiroError, ToolError
from shiro_lsp.fs import jail
from shiro_lsp.fs.jail import NoSuchFile, Roots, resolve_in_workspace
from shiro_lsp.fs.reader import Read, read_bytes
from shiro_lsp.fs.secrets import is_secret_file
from shiro_lsp.state.checkpoints import (
    Checkpoint,
    CheckpointStore,
    FileRecord,
    FileState,
    left_states,
    same,
    sha256,
)
from shiro_lsp.tools.edits import FileChange

INLINE_BLOB_BYTES = 256 * 1024
"""An edited file's earlier bytes up to this size go into the journal record, not a file of its own."""


class UserSaves:
    """The files the user saved in the editor (``textDocument/didSave``), numbered as they arrive:
    a turn takes a mark before a command's snapshot and asks which were saved since. A save is the
    sign of the user's own write; a ``didChange`` alone is not (it also comes when the editor
    reloads a file a command changed, and unsaved edits never reach the disk)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        self._last: dict[str, int] = {}

    def saved(self, path: str) -> None:
        with self._lock:
            self._count += 1
            self._last[path] = self._count

    def mark(self) -> int:
        with self._lock:
            return self._count

    def since(self, mark: int) -> list[str]:
        with self._lock:
            return [path for path, number in self._last.items() if number > mark]


class CheckpointFiles:
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
        self.saves = UserSaves()
        self.scanner = WorkspaceScanner(
            self.workspace, store.blobs, store.scan_cache(project_key), exclude=state_root
        )

    def saved_since(self, mark: int) -> set[str]:
        """The files of this workspace (relative to it) the user saved since ``mark``."""
        out: set[str] = set()
        for path in self.saves.since(mark):
            try:
                real = Path(os.path.realpath(path))
            except (OSError, ValueError):  # a path no file can have (a NUL byte from the client)
                continue
            if real.is_relative_to(self.workspace):
                out.add(real.relative_to(self.workspace).as_posix())
        return out

    # -- files

    def roots(self) -> Roots:
        """What paths are resolved in: this workspace, or all folders (a path may be ``name/...``)."""
        return self.folders() if self.folders is not None else self.workspace

    def resolve(self, path: str) -> Path:
        try:
            return resolve_in_workspace(self.roots(), path)
        except ToolError as error:
            raise BadParams(error.message) from None

    def _read(self, path: str) -> Read | None:
        """The file's bytes through the confined reader (secrets files too: kept owner-only in the
        state root for a restore, never shown); None when it is absent. Anything the reader refuses
        (a link out, a FIFO, a hard link, a file over its limit) is an OSError to the callers."""
        self.resolve(path)  # BadParams for a path outside the workspace, as before
        try:
            return read_bytes(self.roots(), path, secrets=True)
        except NoSuchFile:
            return None
        except ToolError as error:
            raise OSError(error.message) from None

    def capture(self, path: str, expected: bytes | None = None, mode: int | None = None) -> FileState | None:
        """Store the file's bytes. ``expected``: what the plan just read (saves reading it again
        when the file's size still says so; the hash decides nothing here, the bytes are stored).
        With its ``mode`` too (read from the same open file), nothing is looked at again."""
        if expected is not None and mode is not None:
            return FileState(self.store.blobs.put(expected), mode, len(expected))
        if expected is not None:
            try:
                st = os.lstat(self.resolve(path))
            except FileNotFoundError:
                return None
            if stat.S_ISREG(st.st_mode) and st.st_size == len(expected):
                return FileState(self.store.blobs.put(expected), stat.S_IMODE(st.st_mode), len(expected))
        read = self._read(path)
        if read is None:
            return None
        return FileState(self.store.blobs.put(read.data), read.opened.mode, len(read.data))

    def observe(self, path: str) -> tuple[FileState | None, bytes | None]:
        """The file's state now and its bytes, without storing them: what a file tool left is
        only compared later (conflicts), never restored, so its bytes need no blob."""
        read = self._read(path)
        if read is None:
            return None, None
        return FileState(sha256(read.data), read.opened.mode, len(read.data)), read.data

    def hold(self, data: bytes, path: str) -> tuple[str, bool]:
        """A before-image for the journal record itself (small), or a blob file (large, or a secrets
        file's: its bytes stay in an owner-only blob, never in a record)."""
        if len(data) <= INLINE_BLOB_BYTES and not is_secret_file(path):
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
        read = self._read(path)
        return None if read is None else FileState(sha256(read.data), read.opened.mode, len(read.data))

    def bytes_of(self, state: FileState | None) -> bytes | None:
        return None if state is None else self.store.blobs.get(state.sha)

    def has_bytes(self, *states: FileState | None) -> bool:
        """Whether the bytes of every state are at hand (a scan keeps none of a file over its limit)."""
        return all(state is None or self.store.blobs.has(state.sha) for state in states)

    def read_now(self, path: str) -> bytes | None:
        return self.read_now_state(path)[0]

    def read_now_state(self, path: str) -> tuple[bytes | None, FileState | None]:
        """The file's bytes now and its state (content and mode), read once."""
        try:
            read = self._read(path)
        except (OSError, BadParams):  # nothing the reader lets Shiro read
            return None, None
        if read is None:
            return None, None
        return read.data, FileState(sha256(read.data), read.opened.mode, len(read.data))

    def preview_of(self, change: FileChange) -> FilePreview:
        """The approval card's before/after. A binary file, or one over
        :data:`PREVIEW_MAX_BYTES` on either side, is shown as one line saying what it is."""
        before = change.before
        if change.moved_from is not None:
            before = change.after
        large = max(len(before or b""), len(change.after or b"")) > PREVIEW_MAX_BYTES
        binary = large or is_binary(before) or is_binary(change.after)
        show = large_summary_of if large else summary_of if binary else as_text
        added, deleted = (
            (0, 0) if binary else diffs.counts(as_text(before) or "", as_text(change.after) or "")
        )
        return FilePreview(
            path=change.path,
            before=show(before),
            after=show(change.after),
            moved_from=change.moved_from,
            binary=binary,
            additions=added,
            deletions=deleted,
        )

    def row(self, path: str, record: FileRecord, before: bytes | None, now: bytes | None) -> ChangedFile:
        """A file's row; one with no earlier bytes counts no lines (what changed is not known)."""
        binary = is_binary(before) or is_binary(now)
        unknown = binary or record.unrecorded is not None
        added, deleted = (0, 0) if unknown else diffs.counts(as_text(before) or "", as_text(now) or "")
        return row_of(path, record, added, deleted, binary, record.counts)

    def tool_changes(
        self,
        rows: list[tuple[str, bytes | None, bytes | None]],
        checkpoint: Checkpoint,
        unknown: set[str] | frozenset[str] = frozenset(),
    ) -> ToolChanges:
        """``unknown``: paths whose bytes are not at hand (not covered, or over the scan's size
        limit): one line each instead of a diff."""
        parts: list[str] = []
        files: list[ChangedFile] = []
        for path, before, after in rows:
            record = checkpoint.files.get(path)
            if record is None or record.moved_to is not None:
                continue
            if path in unknown:
                why = record.not_covered
                files.append(self.row(path, record, None, None))
                parts.append(
                    f"({path}: not covered, {why}; left as it is by undo and restore)\n"
                    if why
                    else f"({path} changed: too large to show here)\n"
                )
                continue
            if is_binary(before) or is_binary(after):
                files.append(self.row(path, record, before, after))
                parts.append(f"Binary file {path} changed\n")
                continue
            added, deleted, text = diffs.card(as_text(before), as_text(after), path)
            files.append(row_of(path, record, added, deleted, binary=False))
            if is_secret_file(path):
                parts.append(f"(diff of {path} not shown: a secrets file)\n")
            else:
                parts.append(text)
        return ToolChanges(diffs.cut("".join(parts)), files)

    # -- views

    def view(
        self,
        checkpoint: Checkpoint,
        *,
        settle: bool = False,
        left: Mapping[str, FileState | None] | None = None,
    ) -> TurnChangesView:
        """Each file's row: the checkpoint against the file now. ``settle`` (the turn's end): a file
        that still holds what the turn left gets those counts as the turn's own, kept for good.
        ``left``: what Shiro last left at each path in the session (default: what this turn left)."""
        left = left_states([checkpoint]) if left is None else left
        rows = []
        settled = False
        for path in checkpoint.visible_files():
            record = checkpoint.files[path]
            before_path = record.moved_from or path
            before_record = checkpoint.files.get(before_path, record)
            now, now_state = self.read_now_state(path)
            if settle and record.counts is None and record.unrecorded is None and holds(record.after, now):
                row = self.row(path, record, self.bytes_of(before_record.before), now)
                record.counts = (row.additions, row.deletions)
                settled = True
            row = self.row(path, record, self.bytes_of(before_record.before), now)
            review = review_state(record, now_state, left.get(path, record.after))
            rows.append(row.model_copy(update={"review": review}) if review != "pending" else row)
        if settled:
            self.store.save(checkpoint)
        return TurnChangesView(checkpoint.task_id, checkpoint.id, rows)


def row_of(
    path: str,
    record: FileRecord,
    additions: int,
    deletions: int,
    binary: bool,
    turn_counts: tuple[int, int] | None = None,
) -> ChangedFile:
    turn_additions, turn_deletions = turn_counts if turn_counts is not None else (None, None)
    return ChangedFile(
        path=path,
        status=record.status,
        moved_from=record.moved_from,
        additions=additions,
        deletions=deletions,
        reviewed=record.reviewed,
        binary=binary,
        turn_additions=turn_additions,
        turn_deletions=turn_deletions,
        not_covered=record.not_covered,
    )


def review_state(record: FileRecord, now: FileState | None, left: FileState | None) -> ReviewState:
    """Kept or undone once the user dealt with it; conflicted while the file no longer holds what
    Shiro last left there (the check undo makes before it writes)."""
    if record.reviewed:
        return "undone" if same(now, record.before) else "kept"
    if record.not_covered is None and not same(now, left):
        return "conflicted"
    return "pending"


def holds(state: FileState | None, data: bytes | None) -> bool:
    """Whether a file in ``state`` holds exactly ``data`` (None: absent)."""
    if state is None or data is None:
        return state is None and data is None
    return state.size == len(data) and state.sha == sha256(data)
