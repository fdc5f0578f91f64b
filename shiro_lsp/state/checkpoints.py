"""Checkpoints: what each turn changed in the workspace, kept so it can be reviewed and put back.

Layout under the state root (never the user's ``.git``, and it works without git)::

    checkpoints/blobs/<aa>/<sha256>         file contents, content-addressed, shared
    checkpoints/<session id>/journal.jsonl  the manifests of its checkpoints (a turn, or a restore):
                                            one line per version, appended; the last one wins
    checkpoints/scans/<project key>.json    the stat cache of the bash snapshots (see agent.changes)

A manifest maps each workspace-relative path the turn touched to its state *before* the turn
(``null``: the file did not exist) and *after* it (``null``: the turn deleted it); an undo of
that file later sets ``latest``. The newest checkpoint touching a path says what Shiro last left
there (:func:`left_states`); a file whose bytes differ from that was changed by someone else (the
user, a formatter), so undo and restore leave it alone and report a conflict.

A checkpoint is deleted only with its session (:meth:`CheckpointStore.delete_session`).
Blocking by design: callers on the event loop use ``asyncio.to_thread``.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import shutil
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from shiro_lsp.state.atomic import (
    append_record,
    clean_stale_temp_files,
    fsync_dir,
    read_records,
    rewrite_records,
    write_bytes_atomic,
)
from shiro_lsp.state.jsonstore import Reporter, log_reporter
from shiro_lsp.state.paths import CheckpointPaths

FORMAT_VERSION = 1
COMPACT_MIN_BYTES = 256 * 1024
"""A journal smaller than this is never compacted (superseded versions cost little there)."""
JOURNAL = "journal.jsonl"
"""Per session: one line per checkpoint version, appended (format 1 kept a ``<id>.json`` each)."""
_compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""One journal line's JSON (the encoder made once: this runs before every file tool)."""
Kind = Literal["turn", "redo"]
UNRECORDED_NOTE = ": changed, but its earlier content was not recorded"
"""How a checkpoint's note says a scanned file had no recorded bytes (``<path>`` + this + why)."""
RestoreMode = Literal["code", "chat", "both"]


@dataclass(frozen=True)
class FileState:
    """A file's content (by hash) and permission bits."""

    sha: str
    mode: int
    size: int

    def to_json(self) -> dict[str, Any]:
        return {"sha": self.sha, "mode": self.mode, "size": self.size}

    @classmethod
    def from_json(cls, value: Any) -> FileState | None:
        if not isinstance(value, dict):
            return None
        return cls(str(value["sha"]), int(value["mode"]), int(value.get("size", 0)))


def same(a: FileState | None, b: FileState | None) -> bool:
    """Same content and mode (the size follows from the content)."""
    if a is None or b is None:
        return a is None and b is None
    return a.sha == b.sha and a.mode == b.mode


@dataclass
class FileRecord:
    before: FileState | None
    after: FileState | None
    moved_from: str | None = None
    moved_to: str | None = None
    reviewed: bool = False
    latest: FileState | None = None
    latest_set: bool = False
    """An undo wrote ``latest`` here after the turn (None: it removed the file)."""
    counts: tuple[int, int] | None = None
    """Lines the turn itself added and deleted (its before vs what it left), fixed at its end."""
    unrecorded: str | None = None
    """The file existed before the turn but its bytes were not recorded, and why (``before`` is then
    None): nothing can put it back, so undo and restore leave it as it is."""
    by_user: bool = False
    """The user saved the file in the editor while the turn ran: the change is theirs, not the
    turn's. Undo and restore leave it alone, and it is not what Shiro left there."""

    @property
    def not_covered(self) -> str | None:
        """Why undo and restore leave this file as it is (None: they can put it back)."""
        if self.by_user:
            return "saved by you while the turn ran"
        if self.unrecorded is not None:
            return f"its content before the turn was not recorded ({self.unrecorded})"
        return None

    @property
    def left(self) -> FileState | None:
        """What Shiro last left at this path by this checkpoint."""
        return self.latest if self.latest_set else self.after

    def set_latest(self, state: FileState | None) -> None:
        self.latest, self.latest_set = state, True

    def set_after(self, state: FileState | None) -> None:
        self.after, self.latest, self.latest_set = state, None, False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "before": self.before.to_json() if self.before else None,
            "after": self.after.to_json() if self.after else None,
            "from": self.moved_from,
            "to": self.moved_to,
            "reviewed": self.reviewed,
        }
        if self.latest_set:
            out["latest"] = self.latest.to_json() if self.latest else None
        if self.counts is not None:
            out["counts"] = list(self.counts)
        if self.unrecorded is not None:
            out["unrecorded"] = self.unrecorded
        if self.by_user:
            out["byUser"] = True
        return out

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> FileRecord:
        counts = value.get("counts")
        return cls(
            FileState.from_json(value.get("before")),
            FileState.from_json(value.get("after")),
            value.get("from"),
            value.get("to"),
            bool(value.get("reviewed", False)),
            FileState.from_json(value.get("latest")),
            "latest" in value,
            (int(counts[0]), int(counts[1])) if isinstance(counts, list) and len(counts) == 2 else None,
            str(value["unrecorded"]) if value.get("unrecorded") is not None else None,
            bool(value.get("byUser", False)),
        )

    @property
    def status(self) -> Literal["added", "modified", "deleted", "moved"]:
        if self.moved_from is not None:
            return "moved"
        if self.before is None and self.unrecorded is None:
            return "added"
        if self.after is None:
            return "deleted"
        return "modified"


@dataclass
class Checkpoint:
    id: str
    session_id: str
    task_id: str
    created_at: str
    prompt: str
    message_index: int
    """How many session messages came before this turn's user message."""
    kind: Kind = "turn"
    files: dict[str, FileRecord] = field(default_factory=dict)
    not_covered: list[str] = field(default_factory=list)
    restored_from: str | None = None
    """A redo checkpoint: the checkpoint whose restore it undoes."""
    mode: RestoreMode | None = None
    keep: int | None = None
    """A redo checkpoint of a chat restore: keep this many messages, then append ``tail``..."""
    tail: list[dict[str, Any]] | None = None
    expected_length: int | None = None
    """...provided the session still has this many (nothing was said since the restore)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "id": self.id,
            "sessionId": self.session_id,
            "taskId": self.task_id,
            "createdAt": self.created_at,
            "prompt": self.prompt,
            "messageIndex": self.message_index,
            "kind": self.kind,
            "files": {path: record.to_json() for path, record in self.files.items()},
            "notCovered": self.not_covered,
            "restoredFrom": self.restored_from,
            "mode": self.mode,
            "keep": self.keep,
            "tail": self.tail,
            "expectedLength": self.expected_length,
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Checkpoint:
        checkpoint = cls._from_json(value)
        checkpoint._mark_unrecorded_from_notes()
        return checkpoint

    def _mark_unrecorded_from_notes(self) -> None:
        """A checkpoint from before ``unrecorded`` existed said it only in a note: a record without
        a before that such a note names existed before the turn (it must not look added)."""
        for note in self.not_covered:
            path, found, _ = note.partition(UNRECORDED_NOTE)
            record = self.files.get(path) if found else None
            if record is not None and record.before is None and record.unrecorded is None:
                record.unrecorded = "not recorded"

    @classmethod
    def _from_json(cls, value: dict[str, Any]) -> Checkpoint:
        return cls(
            id=str(value["id"]),
            session_id=str(value["sessionId"]),
            task_id=str(value["taskId"]),
            created_at=str(value["createdAt"]),
            prompt=str(value.get("prompt", "")),
            message_index=int(value.get("messageIndex", 0)),
            kind="redo" if value.get("kind") == "redo" else "turn",
            files={str(p): FileRecord.from_json(r) for p, r in dict(value.get("files", {})).items()},
            not_covered=[str(x) for x in value.get("notCovered", [])],
            restored_from=value.get("restoredFrom"),
            mode=value.get("mode"),
            keep=value.get("keep"),
            tail=value.get("tail"),
            expected_length=value.get("expectedLength"),
        )

    def visible_files(self) -> list[str]:
        """Paths as the user thinks of them: a move is one row (its target)."""
        return [path for path, record in self.files.items() if record.moved_to is None]


# --- blobs ---------------------------------------------------------------------------------------


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    """Content-addressed bytes. A blob is written once (temp file + rename) and never changed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._root = str(root)
        self.held: dict[str, bytes] = {}
        """Blobs that so far live only inline in a journal record (see :meth:`hold`), by sha."""
        self._private = False
        self._lock = threading.Lock()

    def path(self, sha: str) -> Path:
        return self.root / sha[:2] / sha

    def has(self, sha: str) -> bool:
        return sha in self.held or self.path(sha).is_file()

    def hold(self, data: bytes) -> tuple[str, bool]:
        """Keep ``data`` in memory, to go inline into the next journal record instead of a file of
        its own (one write on the hot path instead of two). Returns (sha, whether it is new: the
        caller must then journal it). :meth:`flush` writes held blobs out as files later."""
        digest = sha256(data)
        with self._lock:
            if digest in self.held or os.path.isfile(os.path.join(self._root, digest[:2], digest)):
                return digest, False
            self.held[digest] = data
        return digest, True

    def flush(self) -> None:
        """Write the held blobs as files (after the turn; their journal record already has them)."""
        with self._lock:
            held, self.held = self.held, {}
        for digest, data in held.items():
            self.put(data, digest)

    def put(self, data: bytes, sha: str | None = None) -> str:
        """Store ``data`` as a blob file, owner-only (0600 in 0700 folders): blobs hold the earlier
        bytes of secrets files too, for a restore."""
        digest = sha or sha256(data)
        target = self.path(digest)
        if target.is_file():
            return digest
        self._private_folder(target.parent)
        write_bytes_atomic(target, data, sync=False)  # synced when it must be (see :meth:`sync`)
        return digest

    def _private_folder(self, bucket: Path) -> None:
        if not self._private:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(self.root, 0o700)  # one made by an earlier version was 0755
            self._private = True
        if not bucket.is_dir():
            bucket.mkdir(mode=0o700, exist_ok=True)

    def sync(self, sha: str) -> None:
        """Make a blob file durable (before a journal that carried it inline is rewritten without it)."""
        fd = os.open(self.path(sha), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        fsync_dir(self.path(sha).parent)

    def get(self, sha: str) -> bytes:
        held = self.held.get(sha)
        if held is not None:
            return held
        data = self.path(sha).read_bytes()
        if sha256(data) != sha:
            raise OSError(f"checkpoint blob {sha[:12]} is damaged")
        return data

    def all(self) -> Iterator[str]:
        if not self.root.is_dir():
            return
        for bucket in self.root.iterdir():
            if bucket.is_dir():
                for blob in bucket.iterdir():
                    if not blob.name.startswith("."):
                        yield blob.name

    def remove(self, sha: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path(sha).unlink()


# --- the store -----------------------------------------------------------------------------------


class CheckpointStore:
    """Manifests per session and the shared blobs."""

    def __init__(self, root: Path, reporter: Reporter = log_reporter) -> None:
        self.root = root
        self.reporter = reporter
        self.paths = CheckpointPaths(root)
        self.blobs = BlobStore(self.paths.blobs_dir)
        self._checked: dict[str, int] = {}
        """Per session, the journal's size when :meth:`maybe_compact` last compacted it."""

    def session_dir(self, session_id: str) -> Path:
        if not session_id or "/" in session_id or session_id.startswith("."):
            raise ValueError(f"bad session id {session_id!r}")
        return self.root / session_id

    def scan_cache(self, project_key: str) -> Path:
        return self.paths.scan_cache(project_key)

    # -- manifests

    def journal(self, session_id: str) -> Path:
        return self.session_dir(session_id) / JOURNAL

    def save(self, checkpoint: Checkpoint, inline: Iterable[str] = ()) -> None:
        """Append the checkpoint's new version to its session's journal (the last version wins).

        One ``write`` of one line, no temp file or rename: this runs before every file tool.
        ``inline``: shas of held blobs (:meth:`BlobStore.hold`) to carry in the same record; a
        reader of the journal writes them out as blob files (:meth:`list`). Not fsynced: a power
        cut can cost the newest checkpoint (undo), never the user's files.
        """
        line = _compact_json(checkpoint.to_json())
        blobs = ",".join(
            f'"{sha}":"{base64.b64encode(self.blobs.get(sha)).decode("ascii")}"' for sha in inline
        )
        if blobs:  # hex keys and base64 values need no escaping: spliced in, not scanned by json
            line = f'{line[:-1]},"blobs":{{{blobs}}}}}'
        append_record(self.journal(checkpoint.session_id), (line + "\n").encode("utf-8"))

    def list(self, session_id: str) -> list[Checkpoint]:
        """Oldest first (ids are UUIDv7, so their order is creation order).

        Manifests of format 1 (one ``<id>.json`` file each) are read too; a journal version of the
        same checkpoint is newer.
        """
        directory = self.session_dir(session_id)
        if not directory.is_dir():
            return []
        found: dict[str, Checkpoint] = {}
        for path in sorted(directory.glob("*.json")):
            try:
                checkpoint = Checkpoint.from_json(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, KeyError, TypeError) as error:
                self.reporter(f"Checkpoint {path.name} could not be read ({error}); it is left as it is.")
                continue
            found[checkpoint.id] = checkpoint
        try:
            records = read_records(directory / JOURNAL)
        except OSError as error:
            self.reporter(f"The checkpoint journal of {session_id} could not be read ({error}).")
            records = []
        for number, record in enumerate(records, start=1):
            try:
                value = json.loads(record)
                checkpoint = Checkpoint.from_json(value)
                self._write_out(value.get("blobs"))
            except (ValueError, KeyError, TypeError) as error:
                self.reporter(
                    f"Record {number} of {session_id}'s checkpoint journal is damaged ({error}); skipped."
                )
                continue
            found[checkpoint.id] = checkpoint
        return [found[key] for key in sorted(found)]

    def compact(self, session_id: str, *, force: bool = True) -> bool:
        """Rewrite the session's journal with only the last version of each checkpoint.

        The blobs superseded records carried inline are first written out as files and synced,
        so every state a live checkpoint refers to is on disk before the old journal goes; the
        rewrite itself is atomic (:func:`rewrite_records`). A line that cannot be read is kept as it
        is. ``force=False``: only when superseded versions are more than half of the bytes.
        """
        path = self.journal(session_id)
        clean_stale_temp_files([path.parent])  # of a rewrite a kill interrupted

        def rewrite(records: list[bytes]) -> list[bytes] | None:
            kept: list[bytes] = []
            parsed: list[dict[str, Any]] = []
            for record in records:
                try:
                    value = json.loads(record)
                    str(value["id"])
                except (ValueError, KeyError, TypeError):
                    kept.append(record)  # unreadable: not ours to drop
                    continue
                parsed.append(value)
            last: dict[str, dict[str, Any]] = {}
            for value in parsed:
                last.pop(str(value["id"]), None)  # re-inserted: in the order of the last versions
                last[str(value["id"])] = value
            out = kept + [
                _compact_json({k: v for k, v in value.items() if k != "blobs"}).encode("utf-8")
                for value in last.values()
            ]
            if not force and sum(map(len, out)) > sum(map(len, records)) // 2:
                return None  # mostly live records: not worth a rewrite yet
            for value in parsed:  # superseded ones too: a later version refers to their blobs
                inline = value.get("blobs")
                for sha, encoded in inline.items() if isinstance(inline, dict) else ():
                    try:
                        self._write_out({sha: encoded}, sync=True)
                    except ValueError as error:
                        self.reporter(f"A blob in {session_id}'s checkpoint journal is damaged ({error}).")
            return out

        compacted = rewrite_records(path, rewrite)
        self._checked[session_id] = self._size(path)
        return compacted

    def maybe_compact(self, session_id: str) -> bool:
        """:meth:`compact` when the journal passed :data:`COMPACT_MIN_BYTES` and has grown by half
        since it was last looked at (a turn's end calls this; most turns only stat the file)."""
        path = self.journal(session_id)
        size = self._size(path)
        seen = self._checked.get(session_id)
        if size < COMPACT_MIN_BYTES or (seen is not None and size < seen * 3 // 2):
            return False
        return self.compact(session_id, force=False)

    @staticmethod
    def _size(path: Path) -> int:
        try:
            return path.stat().st_size
        except FileNotFoundError:
            return 0

    def _write_out(self, inline: Any, *, sync: bool = False) -> None:
        """Blobs a journal record carries inline become files (once; content-addressed)."""
        if not isinstance(inline, dict):
            return
        for sha, encoded in inline.items():
            if self.blobs.has(sha) and not sync:
                continue
            if not (sync and self.blobs.path(sha).is_file()):  # held in memory is not on disk
                data = base64.b64decode(encoded, validate=True)
                if sha256(data) != sha:
                    raise ValueError(f"inline blob {sha[:12]} is damaged")
                self.blobs.put(data, sha)
            if sync:
                self.blobs.sync(sha)

    def get(self, session_id: str, checkpoint_id: str) -> Checkpoint | None:
        for checkpoint in self.list(session_id):
            if checkpoint.id == checkpoint_id:
                return checkpoint
        return None

    # -- deletion (with the session only)

    def delete_session(self, session_id: str) -> None:
        directory = self.session_dir(session_id)
        if directory.is_dir():
            shutil.rmtree(directory)
        self.collect_garbage()

    def referenced(self) -> set[str]:
        refs: set[str] = set()
        if not self.root.is_dir():
            return refs
        for directory in self.root.iterdir():
            if not directory.is_dir() or self.paths.is_shared(directory.name):
                continue
            for checkpoint in self.list(directory.name):
                for record in checkpoint.files.values():
                    states = (record.before, record.after, record.latest)
                    refs.update(s.sha for s in states if s is not None)
        scans = self.paths.scans_dir
        if scans.is_dir():
            for cache in scans.glob("*.json"):
                with contextlib.suppress(OSError, ValueError):
                    refs.update(
                        str(entry[4])
                        for entry in json.loads(cache.read_text(encoding="utf-8")).get("files", {}).values()
                        if isinstance(entry, list) and len(entry) > 4 and entry[4]
                    )
        return refs

    def collect_garbage(self) -> int:
        """Remove blobs no manifest or scan cache refers to."""
        keep = self.referenced()
        if self.blobs.root.is_dir():  # blob writes a kill interrupted
            clean_stale_temp_files([b for b in self.blobs.root.iterdir() if b.is_dir()])
        removed = 0
        for sha in list(self.blobs.all()):
            if sha not in keep:
                self.blobs.remove(sha)
                removed += 1
        return removed


@dataclass(frozen=True)
class RestoreTarget:
    """One path over a run of checkpoints: what a restore of the run's first one puts back."""

    before: FileState | None
    """The first checkpoint's before (None: the file did not exist, unless ``not_covered``)."""
    last_after: FileState | None
    not_covered: str | None
    """Why the restore leaves the file as it is: the first record has no bytes to put back, or
    the user saved the file during one of the turns."""


def restore_targets(checkpoints: Iterable[Checkpoint]) -> dict[str, RestoreTarget]:
    """For each path over a run of checkpoints (oldest first): its :class:`RestoreTarget`."""
    out: dict[str, RestoreTarget] = {}
    for checkpoint in checkpoints:
        for path, record in checkpoint.files.items():
            first = out.get(path)
            if first is None:
                out[path] = RestoreTarget(record.before, record.after, record.not_covered)
            else:
                why = first.not_covered or (record.not_covered if record.by_user else None)
                out[path] = RestoreTarget(first.before, record.after, why)
    return out


def left_states(checkpoints: Iterable[Checkpoint]) -> dict[str, FileState | None]:
    """What Shiro last left at each path (checkpoints oldest first); a user's save is not Shiro's."""
    out: dict[str, FileState | None] = {}
    for checkpoint in checkpoints:
        for path, record in checkpoint.files.items():
            if not record.by_user:
                out[path] = record.left
    return out


def last_touching(checkpoints: list[Checkpoint], path: str) -> Checkpoint | None:
    for checkpoint in reversed(checkpoints):
        if path in checkpoint.files:
            return checkpoint
    return None
