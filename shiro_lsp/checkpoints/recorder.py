"""Recording a turn's changes, for the engine (design: "Reviewable edits").

:meth:`Checkpoints.turn` gives the engine a :class:`TurnChanges` that records, before each file tool
or ``bash`` call runs, what the call is about to change, and after it what it changed (the tool
card's diff and rows). The review of what was recorded is ``review.py``.

A file the recorder has no earlier bytes for (a secrets file, one over the scan's size limit) or
that the user saved in the editor while the turn ran is "not covered": said in the turn's changes,
and never written, deleted or truncated by undo or restore.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from shiro_lsp.checkpoints.files import CheckpointFiles, holds
from shiro_lsp.checkpoints.rows import FilePreview, ToolChanges, TurnChangesView
from shiro_lsp.checkpoints.scan import Snapshot
from shiro_lsp.clock import now_iso
from shiro_lsp.errors import BadParams, ToolError
from shiro_lsp.fs import jail
from shiro_lsp.fs.secrets import command_reads_secrets
from shiro_lsp.ids import new_id
from shiro_lsp.state.checkpoints import Checkpoint, FileRecord, FileState, same, sha256
from shiro_lsp.tools.base import JsonObject, WriteRecorder
from shiro_lsp.tools.edits import PLANNERS, FileChange

log = logging.getLogger(__name__)

SCANNED_TOOLS = frozenset({"bash"})
"""Tools that change files without saying which: the workspace is snapshotted around them."""
SCANNED_PREFIXES = ("mcp__",)
RECORDED_TOOLS = frozenset({"edit_file", "multi_edit", "write_file"})
"""Tools that tell the checkpoint what they write (``ToolContext.recorder``): no plan, no re-read."""


@dataclass
class _Watch:
    paths: list[str] = field(default_factory=list)
    befores: dict[str, bytes | None] = field(default_factory=dict)
    moves: list[tuple[str, str]] = field(default_factory=list)
    modes: dict[str, int] = field(default_factory=dict)
    """The mode each file had when the plan read it."""
    snapshot: Snapshot | None = None
    saves_mark: int = 0
    """The user's saves (:class:`UserSaves`) counted when the snapshot was taken."""
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
                sha, fresh = self.turn.files.hold(old, rel)
                inline = [sha] if fresh else []
                before = FileState(sha, _mode(old_mode), len(old))
            record = checkpoint.files[rel] = FileRecord(before, before)
        mode = _mode(old_mode if old is not None else None)
        record.set_after(FileState(sha256(new), mode, len(new)))
        record.reviewed = False
        self.turn.files.store.save(checkpoint, inline)  # on disk before the tool writes

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
            self.turn.files.store.save(checkpoint)
        self.result = self.turn.files.tool_changes(self.rows, checkpoint) if self.rows else None


def _scanned(tool_name: str) -> bool:
    """A tool that changes files without saying which: the workspace is snapshotted around it."""
    return tool_name in SCANNED_TOOLS or tool_name.startswith(SCANNED_PREFIXES)


def _named_secrets(tool_name: str, input: JsonObject) -> list[str]:
    """The secrets files a bash command visibly names, as relative paths (absolute ones are left to
    the scan: they may lie anywhere)."""
    command = input.get("command")
    if tool_name != "bash" or not isinstance(command, str):
        return []
    return [path for path in command_reads_secrets(command) if not path.startswith(("/", "~"))]


def _mode(mode: int | None) -> int:
    """A file's mode, or the one a new file gets."""
    return jail.new_file_mode() if mode is None else mode


class TurnChanges:
    """The checkpoint of one turn, made on its first change and updated after every call."""

    def __init__(
        self, files: CheckpointFiles, session_id: str, task_id: str, prompt: str, message_index: int
    ) -> None:
        self.files = files
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
            return planner(self.files.roots(), input)
        except (ToolError, OSError, KeyError, TypeError):
            return None  # the tool itself will say what is wrong

    async def preview(self, tool_name: str, input: JsonObject) -> list[FilePreview] | None:
        """The approval card's previews, or None for other tools."""
        if tool_name not in PLANNERS:
            return None
        changes = await asyncio.to_thread(self.plan, tool_name, input)
        if not changes:
            return None
        return [self.files.preview_of(c) for c in changes]

    async def before(self, tool_name: str, input: JsonObject) -> _Watch | None:
        """Before a mutating call: what the checkpoint needs to watch it. For a recorded tool,
        pass :meth:`recorder` of the result to the tool (``ToolContext.recorder``)."""
        prepared, self._prepared = self._prepared, None  # made for this call only
        if tool_name in RECORDED_TOOLS:
            return _Watch(recorder=_Recorder(self))
        if tool_name in PLANNERS:
            return await asyncio.to_thread(self._before_files, tool_name, input)
        if _scanned(tool_name):
            watch = prepared if prepared is not None else await asyncio.to_thread(self._before_scan)
            named = _named_secrets(tool_name, input)
            unnamed = self._ignored_secrets(watch, named)
            if named or unnamed:
                return await asyncio.to_thread(self._before_named, watch, named, unnamed)
            return watch
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
            if prepare is not None and _scanned(prepare) and not watch.paths:
                self._prepared = self._unchanged(watch)
                if self._prepared is not None:
                    return None
                changed, self._prepared = await asyncio.to_thread(self._after_then_scan, watch)
                return changed
            return await asyncio.to_thread(self._after, watch)
        if recorder.pending:  # told before a write that then failed: look at what is there now
            leftover = _Watch(paths=list(recorder.pending), befores=dict(recorder.befores))
            return await asyncio.to_thread(self._after, leftover)
        return recorder.result

    def _unchanged(self, watch: _Watch) -> _Watch | None:
        """Between two scanned calls (a step's MCP calls, say): when the scanner knows nothing
        changed since ``watch``'s snapshot and the checkpoint has nothing new to record, the next
        call's watch is that same snapshot, and no look is made. Asked on the loop: it never waits.
        None: look in a thread (:meth:`_after_then_scan`).

        Nothing is saved: with nothing found, :meth:`_after` would write the version already
        written, unless the snapshot brings notes the checkpoint lacks or a file is to be pruned,
        and then it is left to do that."""
        snapshot = watch.snapshot
        if snapshot is None:
            return None
        mark = self.files.saves.mark()  # before the look, as in _before_scan
        if not self.files.scanner.unchanged_since(snapshot):
            return None
        checkpoint = self._ensure()
        if _prunable(checkpoint) or any(n not in checkpoint.not_covered for n in snapshot.not_covered):
            return None
        return _Watch(snapshot=snapshot, saves_mark=mark)

    def drop_prepared(self) -> None:
        self._prepared = None

    def finish(self) -> TurnChangesView | None:
        """At the turn's end: held blobs go to files, each file's own counts are fixed, and the
        session's journal is compacted when superseded versions dominate it."""
        self.files.store.blobs.flush()
        if self.checkpoint is None or not self.checkpoint.files:
            self._compact()
            return None
        view = self.files.view(self.checkpoint, settle=True)
        self._compact()
        return view

    def _compact(self) -> None:
        try:
            self.files.store.maybe_compact(self.session_id)
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
                before = self.files.capture(path, watch.befores.get(path), watch.modes.get(path))
                checkpoint.files[path] = FileRecord(before, before)
                fresh = True
        if fresh:
            self.files.store.save(checkpoint)  # on disk before the tool writes
        return watch

    def _ignored_secrets(self, watch: _Watch, named: list[str]) -> list[str]:
        """The secrets files the scan does not watch (ignored ones), as checkpoint paths, but those
        the command names."""
        if watch.snapshot is None or not watch.snapshot.ignored_secrets:
            return []
        roots = self.files.roots()
        paths = [jail.folder_relative(roots, 0, rel) for rel in watch.snapshot.ignored_secrets]
        return [path for path in paths if path not in named]

    def _before_named(self, watch: _Watch, named: list[str], unnamed: list[str]) -> _Watch:
        """The secrets files a command names (``cp .env.example .env``), recorded before it runs
        even where the scan does not look (a git-ignored .env), so a restore can put them back.

        ``unnamed``: the ignored secrets files the command does not name (a script it runs may
        still overwrite one): kept the same way, but their records are only saved with the
        call's changes, so one the command leaves alone is pruned and never written."""
        checkpoint = self._ensure()
        fresh = False
        for path in [*named, *unnamed]:
            try:
                before = self.files.capture(path)
            except (OSError, BadParams):
                continue  # not a file Shiro may read: the scan says what it can
            watch.paths.append(path)
            watch.befores[path] = self.files.bytes_of(before)
            if path not in checkpoint.files:
                checkpoint.files[path] = FileRecord(before, before)
                fresh = fresh or path in named
        if fresh:
            self.files.store.save(checkpoint)
        return watch

    def _before_scan(self) -> _Watch:
        mark = self.files.saves.mark()  # first: a save during the snapshot counts as the user's
        return _Watch(snapshot=self.files.scanner.snapshot(), saves_mark=mark)

    def _after_then_scan(self, watch: _Watch) -> tuple[ToolChanges | None, _Watch | None]:
        changed = self._after(watch)
        try:
            return changed, self._before_scan()
        except (OSError, ValueError) as error:  # the next call makes its own
            log.warning("checkpoint scan for the next call failed: %s", error)
            return changed, None

    def _record_named(
        self,
        watch: _Watch,
        checkpoint: Checkpoint,
        written: dict[str, FileState | None],
        rows: list[tuple[str, bytes | None, bytes | None]],
    ) -> None:
        """The paths the call named that ``written`` does not hold yet, recorded when they changed."""
        for path in watch.paths:
            if path in written:
                continue
            now, data = self.files.observe(path)
            if holds(now, watch.befores.get(path)):
                continue
            record = checkpoint.files[path]
            record.set_after(now)
            record.reviewed = False
            written[path] = now
            rows.append((path, watch.befores.get(path), data))

    def _after(self, watch: _Watch) -> ToolChanges | None:
        checkpoint = self._ensure()
        rows: list[tuple[str, bytes | None, bytes | None]] = []
        written: dict[str, FileState | None] = {}
        unknown: set[str] = set()
        if watch.snapshot is not None:
            found, problems = self.files.scanner.changes(watch.snapshot)
            roots = self.files.roots()
            yours = self.files.saved_since(watch.saves_mark)
            for change in found:
                path = jail.folder_relative(roots, 0, change.path)  # the scan covers this root only
                record = checkpoint.files.get(path)
                by_user = change.path in yours
                if by_user and record is not None and not record.by_user:
                    continue  # it keeps what Shiro left: the user's bytes are a conflict for undo
                if record is None:
                    record = checkpoint.files[path] = FileRecord(
                        change.before, change.after, unrecorded=change.unrecorded, by_user=by_user
                    )
                record.set_after(change.after)
                record.reviewed = False
                written[path] = change.after
                if record.not_covered or not self.files.has_bytes(change.before, change.after):
                    unknown.add(path)
                    rows.append((path, None, None))
                else:
                    rows.append((path, self.files.bytes_of(change.before), self.files.bytes_of(change.after)))
            for note in [*watch.snapshot.not_covered, *problems]:
                if note not in checkpoint.not_covered:
                    checkpoint.not_covered.append(note)
            # named secrets files the scan did not report
            self._record_named(watch, checkpoint, written, rows)
            if found:
                skipped = ", ".join(watch.snapshot.skipped_trees[:10])
                note = f"not watched: {skipped} and git-ignored paths" if skipped else ""
                if note and note not in checkpoint.not_covered:
                    checkpoint.not_covered.append(note)
        else:
            self._record_named(watch, checkpoint, written, rows)
            for source, target in watch.moves:
                if source in written and target in written and written[source] is None:
                    checkpoint.files[target].moved_from = checkpoint.files[source].moved_from or source
                    checkpoint.files[source].moved_to = target
        self._prune(checkpoint)
        if not written:
            if checkpoint.files:
                self.files.store.save(checkpoint)
            return None
        self.files.store.save(checkpoint)
        return self.files.tool_changes(rows, checkpoint, unknown)

    @staticmethod
    def _prune(checkpoint: Checkpoint) -> bool:
        """Drop the files touched and put back within the turn (not a change); any dropped?"""
        dropped = _prunable(checkpoint)
        for path in dropped:
            del checkpoint.files[path]
        return bool(dropped)


def _prunable(checkpoint: Checkpoint) -> list[str]:
    """The files touched and put back within the turn."""
    return [
        p
        for p, r in checkpoint.files.items()
        if same(r.before, r.after)
        and r.moved_to is None
        and r.moved_from is None
        and r.unrecorded is None  # its before is unknown, not absent
    ]
