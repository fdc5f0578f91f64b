"""What a turn changed, as plain values: one row per file, the rows of a turn, a call's card.

:class:`ChangedFile` is one type from the checkpoint to the wire: the recorder puts it on tool
cards (``shiro/event``), the review answers ``shiro/changes`` with it, and ``server/protocol.py``
names it in the contract (so ``protocol.gen.ts`` types both).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import ConfigDict, Field

from shiro_lsp.state.checkpoints import sha256
from shiro_lsp.wire import Wire

BINARY_SNIFF = 8192
PREVIEW_MAX_BYTES = 512 * 1024
"""An approval preview carries a file's text up to this size; a larger one gets a one-line note."""

ChangeStatus = Literal["added", "modified", "deleted", "moved"]
ReviewState = Literal["pending", "kept", "undone", "conflicted"]


class ChangedFile(Wire):
    model_config = ConfigDict(frozen=True)

    path: str = Field(description="Workspace-relative, '/'-separated; for a move, where it is now.")
    status: ChangeStatus
    moved_from: str | None = Field(
        default=None,
        validation_alias="from",
        serialization_alias="from",
        description="moved: the path before the turn.",
    )
    additions: int
    deletions: int
    reviewed: bool = Field(description="Kept, undone, or otherwise dealt with by the user.")
    binary: bool = Field(default=False, description="Extension: additions/deletions are 0 for binary files.")
    turn_additions: int | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description=(
            "Extension: lines this turn itself added (its checkpoint vs what it left, fixed when the turn "
            "ended); `additions` compares the checkpoint with the file now, so it includes later turns' "
            "and the user's edits. Absent (or null) while the turn runs, for a file changed since the "
            "turn, and for checkpoints older than this field."
        ),
    )
    turn_deletions: int | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Extension: as `turnAdditions`, lines deleted.",
    )
    not_covered: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description=(
            "Extension: present when undo and restore leave this file as it is, and why: its content "
            "before the turn was not recorded (a secrets file, one over the scan's size limit; "
            "`additions`/`deletions` are then 0), or the user saved it in the editor while the turn ran."
        ),
    )
    review: ReviewState = Field(
        default="pending",
        exclude_if=lambda value: value == "pending",
        description=(
            "Extension: where the user's review of this file stands, absent while it is `pending` (on "
            "tool cards always): `kept`; `undone` (it holds what it held before the turn again); "
            "`conflicted` (it changed after Shiro's edit, by the user or another program, so undo "
            "leaves it as it is)."
        ),
    )


class FilePreview(Wire):
    """What a file tool is about to do to one file, for the client's diff editor."""

    model_config = ConfigDict(frozen=True)

    path: str = Field(description="Workspace-relative, '/'-separated.")
    before: str | None = Field(description="The file now; null for a new file.")
    after: str | None = Field(description="The file after the call; null for a delete.")
    moved_from: str | None = Field(
        default=None,
        validation_alias="from",
        serialization_alias="from",
        description="move_file: the path it moves from (`path` is the target).",
    )
    binary: bool = Field(
        default=False,
        description="A binary file: before/after are a one-line summary, not the bytes (null as above).",
    )
    additions: int = Field(
        default=0,
        description=(
            "Extension: lines the call adds, counted as the tool card's row (`ChangedFile.additions`) "
            "counts the same change, so the card and the row agree; 0 for a binary or too large file."
        ),
    )
    deletions: int = Field(default=0, description="Extension: as `additions`, lines deleted.")

    def row(self) -> ChangedFile:
        """The preview as a changed-file row: what the approval card's "Proposed change" line lists
        (kept with the user's answer, so a resumed card shows it without the files' text)."""
        status: ChangeStatus = (
            "moved"
            if self.moved_from
            else "added"
            if self.before is None
            else "deleted"
            if self.after is None
            else "modified"
        )
        return ChangedFile(
            path=self.path,
            status=status,
            moved_from=self.moved_from,
            additions=self.additions,
            deletions=self.deletions,
            reviewed=False,
            binary=self.binary,
        )


@dataclass(frozen=True)
class TurnChangesView:
    task_id: str | None
    checkpoint_id: str | None
    files: list[ChangedFile]


@dataclass(frozen=True)
class ToolChanges:
    """What one tool call changed, for its card: a short diff and one row per file."""

    diff: str
    files: list[ChangedFile]


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


def as_text(data: bytes | None) -> str | None:
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
