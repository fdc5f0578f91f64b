"""Reviewable file tools: apply_patch, move_file, delete_file, and the *plans* of every file tool.

A plan says what a call would do to each file (bytes before, bytes after) without touching the
disk. The approval card shows it as a diff before the user decides, the checkpoint records the
"before" side of exactly those paths, and these tools then carry the plan out: apply_patch
writes all its files or none (a write that fails half way puts the earlier ones back).

Every path goes through the workspace jail; all disk work runs in ``asyncio.to_thread``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from shiro_lsp.bounded import small_int
from shiro_lsp.errors import ToolError
from shiro_lsp.fs import jail
from shiro_lsp.fs.jail import Roots, relative_posix, resolve_in_workspace
from shiro_lsp.fs.reader import read_bytes
from shiro_lsp.tools.base import JsonObject, ToolContext, ToolInput, ToolSpec, typed_tool
from shiro_lsp.tools.files import CHANGE_HINT, _apply_edit, refuse_secrets
from shiro_lsp.tools.nearby import missing_file_message

MAX_PATCH_FILES = 50


@dataclass(frozen=True)
class FileChange:
    """What one call does to one file. ``before``/``after`` None: absent before / after."""

    path: str
    before: bytes | None
    after: bytes | None
    moved_from: str | None = None
    mode: int | None = None
    """The mode the new file gets (a move keeps its source's)."""
    before_mode: int | None = None
    """The mode of the file the plan read (None: not known; the checkpoint then stats it)."""


Planner = Callable[[Roots, JsonObject], list[FileChange]]


# --- disk helpers --------------------------------------------------------------------------------


def _resolve(workspace: Roots, path: str) -> tuple[Path, str]:
    resolved = resolve_in_workspace(workspace, path)
    return resolved, relative_posix(workspace, resolved)


def _read(workspace: Roots, rel: str) -> bytes | None:
    """The file's bytes through the confined reader (links out, hard links and special files refused;
    a secrets file too: its bytes are kept for undo, never shown); ``None`` when it does not exist."""
    try:
        return read_bytes(workspace, rel, secrets=True).data
    except jail.NoSuchFile:
        return None


def write_whole(workspace: Roots, rel: str, data: bytes, mode: int | None = None) -> None:
    """Replace the file whole through the jail (temp file + rename in the opened parent); a
    restored file gets its recorded ``mode`` back (set on the temp file, before the rename)."""
    jail.write_atomic(workspace, rel, data, mode)


def _decode(data: bytes, shown: str) -> str:
    if b"\x00" in data[:8192]:
        raise ToolError(f"{shown} is a binary file, not text.")
    return data.decode("utf-8", errors="surrogateescape")


def _encode(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


# --- plans of the existing file tools -------------------------------------------------------------


def plan_write(workspace: Roots, input: JsonObject) -> list[FileChange]:
    _resolved, rel = _resolve(workspace, str(input["path"]))
    return [FileChange(rel, _read(workspace, rel), _encode(str(input["content"])))]


def plan_edits(workspace: Roots, path: str, edits: list[JsonObject]) -> list[FileChange]:
    read = read_bytes(workspace, path, secrets=True)  # one resolve: this is on every edit's path
    data, mode = read.data, read.opened.mode
    rel = relative_posix(workspace, read.opened.resolved)
    text = _decode(data, rel)
    for edit in edits:
        text, _ = _apply_edit(
            text, edit["oldString"], edit["newString"], bool(edit.get("replaceAll", False)), path
        )
    return [FileChange(rel, data, _encode(text), before_mode=mode)]


def plan_edit(workspace: Roots, input: JsonObject) -> list[FileChange]:
    return plan_edits(workspace, str(input["path"]), [input])


def plan_multi_edit(workspace: Roots, input: JsonObject) -> list[FileChange]:
    return plan_edits(workspace, str(input["path"]), list(input["edits"]))


# --- apply_patch ---------------------------------------------------------------------------------

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class _Hunk:
    header: str
    old_start: int
    lines: list[tuple[str, str]]
    """(' '|'-'|'+'|'~', text without its newline); '~' is a bare empty line, taken as context."""
    no_newline_old: bool = False
    no_newline_new: bool = False


@dataclass
class _FilePatch:
    old: str | None
    new: str | None
    hunks: list[_Hunk]


def _strip_prefix(name: str) -> str | None:
    name = name.split("\t", 1)[0].strip()
    if name == "/dev/null":
        return None
    if name.startswith(("a/", "b/")):
        return name[2:]
    return name


def parse_patch(text: str) -> list[_FilePatch]:
    """A unified diff (``git diff`` or ``diff -u`` style). Header line counts are not trusted:
    models miscount them, and the hunk's own lines say what it changes."""
    patches: list[_FilePatch] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            patches.append(_FilePatch(_strip_prefix(line[4:]), _strip_prefix(lines[i + 1][4:]), []))
            i += 2
            continue
        match = _HUNK.match(line)
        if match:
            if not patches:
                raise ToolError("apply_patch: a hunk comes before any '--- a/path' / '+++ b/path' header.")
            start = small_int(match.group(1))
            if start is None:
                raise ToolError(
                    f"apply_patch: the hunk header {line[:60]!r} has a line number too long to be one."
                )
            hunk = _Hunk(line, start, [])
            i += 1
            while i < len(lines):
                body = lines[i]
                if body.startswith("\\"):
                    if hunk.lines and hunk.lines[-1][0] in " -~":
                        hunk.no_newline_old = True
                    if hunk.lines and hunk.lines[-1][0] in " +~":
                        hunk.no_newline_new = True
                    i += 1
                    continue
                if _HUNK.match(body) or body.startswith("diff "):
                    break
                if body.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
                    break
                if body == "":
                    hunk.lines.append(("~", ""))  # a context line whose space was stripped
                elif body[0] in " -+":
                    hunk.lines.append((body[0], body[1:]))
                else:
                    break
                i += 1
            while hunk.lines and hunk.lines[-1][0] == "~":
                hunk.lines.pop()  # blank lines after a hunk separate it from the next one
            patches[-1].hunks.append(hunk)
            continue
        i += 1
    if not patches:
        raise ToolError(
            "apply_patch: no file headers found. Give a unified diff: '--- a/path', '+++ b/path', then "
            "'@@ -l,n +l,n @@' hunks."
        )
    return patches


def _exact(line: str) -> str:
    return line


def _trailing_space(line: str) -> str:
    return line.rstrip()


def _find(haystack: list[str], needle: list[str], hint: int) -> int | None:
    """Where ``needle`` occurs in ``haystack``, nearest to ``hint`` (exact, then ignoring trailing space)."""
    if not needle:
        return max(0, min(hint, len(haystack)))
    for normalise in (_exact, _trailing_space):
        wanted = [normalise(s) for s in needle]
        found: list[int] = []
        first = wanted[0]
        for start in range(0, len(haystack) - len(needle) + 1):
            if (
                normalise(haystack[start]) == first
                and [normalise(s) for s in haystack[start : start + len(needle)]] == wanted
            ):
                found.append(start)
        if found:
            return min(found, key=lambda s: abs(s - hint))
    return None


def _split(text: str) -> tuple[list[str], str, bool]:
    newline = "\r\n" if "\r\n" in text else "\n"
    ends_with_newline = text.endswith("\n")
    body = text[: -len(newline)] if text.endswith(newline) else text.rstrip("\n")
    return (body.split(newline) if text else []), newline, ends_with_newline


def apply_hunks(text: str, hunks: list[_Hunk], shown: str) -> str:
    """The file with every hunk applied, or a ToolError naming the hunk that does not apply."""
    lines, newline, final_newline = _split(text)
    final_newline = final_newline or not text  # a new file ends with a newline unless the patch says not
    offset = 0
    for number, hunk in enumerate(hunks, start=1):
        old = [t for kind, t in hunk.lines if kind in " -~"]
        new = [t for kind, t in hunk.lines if kind in " +~"]
        hint = max(0, hunk.old_start - 1 + offset) if old else max(0, hunk.old_start + offset)
        at = _find(lines, old, hint)
        if at is None:
            raise ToolError(
                f"apply_patch: hunk {number} of {shown} ({hunk.header.strip()}) does not apply: its "
                "context and removed lines are not in the file. Nothing was changed; read the file "
                "again and send a patch against its current content."
            )
        lines[at : at + len(old)] = new
        offset += len(new) - len(old)
        if hunk.no_newline_new and at + len(new) == len(lines):
            final_newline = False
        elif hunk.no_newline_old and at + len(new) == len(lines):
            final_newline = True
    if not lines:
        return ""
    return newline.join(lines) + (newline if final_newline else "")


def plan_patch(workspace: Roots, input: JsonObject) -> list[FileChange]:
    patches = parse_patch(str(input["patch"]))
    if len(patches) > MAX_PATCH_FILES:
        raise ToolError(f"apply_patch: at most {MAX_PATCH_FILES} files per call (got {len(patches)}).")
    changes: dict[str, FileChange] = {}
    for patch in patches:
        if patch.old is None and patch.new is None:
            raise ToolError("apply_patch: a file header has /dev/null on both sides.")
        target_name = patch.new if patch.new is not None else patch.old
        assert target_name is not None
        _resolved, rel = _resolve(workspace, target_name)
        if patch.old is not None and patch.new is not None and patch.old != patch.new:
            raise ToolError(
                f"apply_patch: {patch.old} → {patch.new} is a rename; use move_file for that, then patch."
            )
        current = changes[rel].after if rel in changes else _read(workspace, rel)
        original = changes[rel].before if rel in changes else current
        if patch.old is None:  # a new file
            if current is not None:
                raise ToolError(f"apply_patch: {rel} already exists; patch it against its content instead.")
            text = apply_hunks("", patch.hunks, rel)
            changes[rel] = FileChange(rel, original, _encode(text))
            continue
        if current is None:
            raise ToolError(
                f"apply_patch: {missing_file_message(workspace, rel, tool='apply_patch')} Nothing was changed."
            )
        refuse_secrets(workspace, rel)  # as edit_file: a secrets file's lines never reach the model
        text = apply_hunks(_decode(current, rel), patch.hunks, rel)
        if patch.new is None:  # a delete: every line must have been removed
            if text:
                raise ToolError(
                    f"apply_patch: the patch deletes {rel} but leaves lines in it. Nothing was changed."
                )
            changes[rel] = FileChange(rel, original, None)
        else:
            changes[rel] = FileChange(rel, original, _encode(text))
    return list(changes.values())


def carry_out(workspace: Roots, changes: list[FileChange]) -> None:
    """Write every change, or none: if one fails, the ones already written are put back."""
    done: list[FileChange] = []
    try:
        for change in changes:  # every rename, unlink and write goes through the jail's opened dirs
            if change.moved_from is not None:
                jail.move(workspace, change.moved_from, change.path)
            elif change.after is None:
                if not jail.remove_file(workspace, change.path):
                    raise jail.NoSuchFile(change.path)
            else:
                write_whole(workspace, change.path, change.after, change.mode)
            done.append(change)
    except BaseException:
        for change in reversed(done):
            with contextlib.suppress(OSError, ToolError):
                if change.moved_from is not None:
                    jail.move(workspace, change.path, change.moved_from)
                elif change.before is None:
                    jail.remove_file(workspace, change.path)
                else:
                    write_whole(workspace, change.path, change.before)
        raise


def _summary(changes: list[FileChange]) -> str:
    from shiro_lsp.diffs import counts

    parts = []
    for change in changes:
        if change.after is None:
            parts.append(f"{change.path} (deleted)")
        elif change.before is None:
            lines = change.after.count(b"\n") or 1
            parts.append(f"{change.path} (new, {lines} lines)")
        else:
            added, removed = counts(
                change.before.decode("utf-8", "replace"), change.after.decode("utf-8", "replace")
            )
            parts.append(f"{change.path} (+{added} -{removed})")
    return ", ".join(parts)


def apply_patch_sync(workspace: Roots, input: JsonObject) -> str:
    changes = plan_patch(workspace, input)
    changes = [c for c in changes if c.before != c.after]
    if not changes:
        raise ToolError("apply_patch: the patch changes nothing.")
    carry_out(workspace, changes)
    return f"Applied the patch to {len(changes)} file(s): {_summary(changes)}"


# --- move_file and delete_file -------------------------------------------------------------------


def plan_move(workspace: Roots, input: JsonObject) -> list[FileChange]:
    source, source_rel = _resolve(workspace, str(input["from"]))
    target, target_rel = _resolve(workspace, str(input["to"]))
    data = _read(workspace, source_rel)
    if data is None:
        raise ToolError(f"No such file: {input['from']}")
    if source_rel == target_rel:
        raise ToolError("move_file: from and to are the same path.")
    if os.path.lexists(target):
        raise ToolError(f"move_file: {target_rel} already exists; nothing was moved.")
    return [
        FileChange(target_rel, None, data, moved_from=source_rel, mode=stat.S_IMODE(os.stat(source).st_mode))
    ]


def move_sync(workspace: Roots, input: JsonObject) -> str:
    changes = plan_move(workspace, input)
    carry_out(workspace, changes)
    return f"Moved {changes[0].moved_from} to {changes[0].path}"


def plan_delete(workspace: Roots, input: JsonObject) -> list[FileChange]:
    _resolved, rel = _resolve(workspace, str(input["path"]))
    data = _read(workspace, rel)
    if data is None:
        raise ToolError(f"No such file: {input['path']}")
    return [FileChange(rel, data, None)]


def delete_sync(workspace: Roots, input: JsonObject) -> str:
    changes = plan_delete(workspace, input)
    carry_out(workspace, changes)
    return f"Deleted {changes[0].path} (it can be restored from this turn's checkpoint)"


def patch_paths(input: JsonObject) -> list[str]:
    """The permission subjects of apply_patch: every path the patch names."""
    text = input.get("patch")
    if not isinstance(text, str):
        return []
    try:
        patches = parse_patch(text)
    except ToolError:
        return []
    out: list[str] = []
    for patch in patches:
        for name in (patch.old, patch.new):
            if name is not None and name not in out:
                out.append(name)
    return out


def move_paths(input: JsonObject) -> list[str]:
    return [str(input[k]) for k in ("from", "to") if isinstance(input.get(k), str)]


def path_subject(input: JsonObject) -> list[str]:
    value = input.get("path")
    return [value] if isinstance(value, str) else []


PLANNERS: dict[str, Planner] = {
    "write_file": plan_write,
    "edit_file": plan_edit,
    "multi_edit": plan_multi_edit,
    "apply_patch": plan_patch,
    "move_file": plan_move,
    "delete_file": plan_delete,
}
"""The tools that change files by path: what each call would change (used before it runs)."""


class ApplyPatchInput(ToolInput):
    patch: str


class MoveFileInput(ToolInput):
    from_: str = Field(alias="from")
    to: str = Field(description="Its new path (missing directories are created)")


class DeleteFileInput(ToolInput):
    path: str = Field(description="File path relative to the workspace root")


async def apply_patch_tool(input: ApplyPatchInput, ctx: ToolContext) -> str:
    return await asyncio.to_thread(apply_patch_sync, ctx.workspace, {"patch": input.patch})


async def move_file_tool(input: MoveFileInput, ctx: ToolContext) -> str:
    return await asyncio.to_thread(move_sync, ctx.workspace, {"from": input.from_, "to": input.to})


async def delete_file_tool(input: DeleteFileInput, ctx: ToolContext) -> str:
    return await asyncio.to_thread(delete_sync, ctx.workspace, {"path": input.path})


APPLY_PATCH = typed_tool(
    ToolSpec(
        name="apply_patch",
        description=(
            "Apply a unified diff to one or more files, all or nothing: if any hunk does not apply, no "
            "file is changed. Headers '--- a/path' / '+++ b/path' ('--- /dev/null' for a new file, "
            "'+++ /dev/null' to delete one); line numbers may be approximate, context lines must match."
        ),
        input_model=ApplyPatchInput,
        mutating=True,
        subject=patch_paths,
        prompt_hint=CHANGE_HINT,
    ),
    ApplyPatchInput,
    apply_patch_tool,
)

MOVE_FILE = typed_tool(
    ToolSpec(
        name="move_file",
        description="Move or rename a file inside the workspace. Refuses to overwrite an existing file.",
        input_model=MoveFileInput,
        mutating=True,
        subject=move_paths,
        prompt_hint=CHANGE_HINT,
    ),
    MoveFileInput,
    move_file_tool,
)

DELETE_FILE = typed_tool(
    ToolSpec(
        name="delete_file",
        description="Delete one file. The user can restore it from this turn's checkpoint.",
        input_model=DeleteFileInput,
        mutating=True,
        subject=path_subject,
        prompt_hint=CHANGE_HINT,
    ),
    DeleteFileInput,
    delete_file_tool,
)

EDIT_TOOLS = (APPLY_PATCH, MOVE_FILE, DELETE_FILE)
