"""File tools: read_file, read_many_files, write_file, edit_file, multi_edit.

Every path goes through the workspace jail; all disk work runs in ``asyncio.to_thread``.
Reads never hold more than about one result's worth of text, however large the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from shiro_lsp.agent.tools.base import (
    MAX_OUTPUT,
    JsonObject,
    Tool,
    ToolContext,
    ToolError,
    ToolSpec,
    field_subject,
)
from shiro_lsp.agent.tools.jail import Roots, locate, reading, relative_posix, write_atomic
from shiro_lsp.agent.tools.secrets import is_secret_path, refusal

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_BATCH_FILES = 20
SNIFF_BYTES = 8192
READ_BUDGET = MAX_OUTPUT - 200
"""Characters of numbered lines per read, leaving room for the continuation note."""


def is_binary(path: Path) -> bool:
    """A NUL byte in the first 8 KB means the file is not text (the heuristic git and ripgrep use)."""
    with path.open("rb") as f:
        return b"\x00" in f.read(SNIFF_BYTES)


def refuse_secrets(workspace: Roots, path: str) -> None:
    """The one check every reading tool makes: the given path and the resolved one."""
    root, resolved = locate(workspace, path)
    if is_secret_path(path, relative_posix(root, resolved)):
        raise ToolError(refusal(path))


@contextlib.contextmanager
def open_text(workspace: Roots, path: str, *, newline: str | None = None) -> Iterator[IO[str]]:
    """An existing text file opened through the jail for the model to read (secrets refused)."""
    refuse_secrets(workspace, path)
    with reading(workspace, path) as (_, handle):
        if b"\x00" in handle.read(SNIFF_BYTES):
            raise ToolError(f"{path} is a binary file, not text. Use bash if you need to inspect it.")
        handle.seek(0)
        with io.TextIOWrapper(handle, encoding="utf-8", errors="replace", newline=newline) as text:
            yield text


def _bounded_lines(f: IO[str]) -> Iterator[tuple[str, bool]]:
    """Lines without their newline, each cut at MAX_LINE_CHARS (flag True when cut)."""
    while True:
        line = f.readline(MAX_LINE_CHARS)
        if not line:
            return
        if line.endswith("\n"):
            yield line[:-1], False
            continue
        cut = False
        while True:  # skip the rest of an over-long line without holding it
            rest = f.readline(65_536)
            if not rest:
                break
            cut = cut or rest != "\n"
            if rest.endswith("\n"):
                break
        yield line, cut


def read_numbered(workspace: Path, path: str, offset: int = 1, limit: int = DEFAULT_LIMIT) -> str:
    """Lines ``offset..offset+limit-1`` numbered like ``cat -n``: 6-column number, a tab, the line."""
    out: list[str] = []
    used = 0
    number = 0
    with open_text(workspace, path) as f:
        lines = _bounded_lines(f)
        for number, (text, cut) in enumerate(lines, start=1):
            if number < offset:
                continue
            if number >= offset + limit:
                out.append(f"... [more lines follow; continue with offset={number}]")
                break
            row = f"{number:>6}\t{text}" + (" ... [line cut]" if cut else "")
            if used + len(row) > READ_BUDGET and out:
                out.append(f"... [output capped at {MAX_OUTPUT} chars; continue with offset={number}]")
                break
            out.append(row)
            used += len(row) + 1
    if not out:
        if number == 0:
            return f"{path} is empty."
        raise ToolError(f"{path} has {number} lines; offset {offset} is past the end.")
    return "\n".join(out)


async def read_file(input: JsonObject, ctx: ToolContext) -> str:
    return await asyncio.to_thread(
        read_numbered, ctx.workspace, input["path"], input.get("offset", 1), input.get("limit", DEFAULT_LIMIT)
    )


def _read_block(workspace: Path, item: JsonObject) -> str:
    path = item["path"]
    try:
        body = read_numbered(workspace, path, item.get("offset", 1), item.get("limit", DEFAULT_LIMIT))
    except ToolError as exc:
        body = f"[unreadable: {exc.message}]"
    return f"===== {path} =====\n{body}"


async def read_many_files(input: JsonObject, ctx: ToolContext) -> str:
    files: list[JsonObject] = input["files"]
    blocks = await asyncio.gather(*(asyncio.to_thread(_read_block, ctx.workspace, f) for f in files))
    return "\n\n".join(blocks)


def _write_text(workspace: Roots, path: str, content: str) -> None:
    """Replace the file whole through the jail (temp file + rename inside the opened parent)."""
    write_atomic(workspace, path, content.encode("utf-8"))


def _read_exact(workspace: Roots, path: str) -> str:
    with open_text(workspace, path, newline="") as f:
        return f.read()


def _collapsed(before: str, after: str) -> bool:
    """A rewrite of similar size with far fewer lines: usually squeezed whitespace, rarely intended."""
    if not before:
        return False
    ratio = len(after) / len(before)
    return 0.5 <= ratio <= 1.5 and after.count("\n") + 1 < (before.count("\n") + 1) / 2


def write_sync(workspace: Path, path: str, content: str) -> str:
    target = locate(workspace, path)[1]
    if target.is_dir():
        raise ToolError(f"{path} is a directory; give a file path.")
    before: str | None = None
    if target.is_file():
        try:
            before = _read_exact(workspace, path)
        except ToolError:
            before = None  # binary, or a secrets file: overwriting it is the user's call (approval)
    _write_text(workspace, path, content)
    message = f"Wrote {len(content)} chars to {path}"
    if before is not None and _collapsed(before, content):
        old_lines, new_lines = before.count("\n") + 1, content.count("\n") + 1
        message += (
            f", but it collapsed {old_lines} lines into {new_lines}. If that was not intended, "
            "re-send the content with its original newlines and indentation."
        )
    return message


async def write_file(input: JsonObject, ctx: ToolContext) -> str:
    return await asyncio.to_thread(write_sync, ctx.workspace, input["path"], input["content"])


def _apply_edit(text: str, old: str, new: str, replace_all: bool, where: str) -> tuple[str, int]:
    """One exact-string replacement; ``where`` prefixes the error (``path`` or ``edit 2: ... path``)."""
    if old == "":
        raise ToolError(f"{where}: oldString is empty. Use write_file to create or overwrite a file.")
    if old == new:
        raise ToolError(f"{where}: oldString and newString are identical.")
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
        # The model writes "\n"; the file has CRLF endings. Match and write in the file's style.
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
    if count == 0:
        raise ToolError(
            f"{where}: oldString not found. It must match the file exactly, including whitespace and "
            "indentation; read the file again before retrying."
        )
    if count > 1 and not replace_all:
        raise ToolError(
            f"{where}: oldString appears {count} times. Add surrounding context or set replaceAll."
        )
    if replace_all:
        return text.replace(old, new), count
    return text.replace(old, new, 1), 1


def edit_sync(workspace: Path, path: str, edits: list[JsonObject], *, batch: bool) -> str:
    original = _read_exact(workspace, path)
    text = original
    counts: list[int] = []
    for index, edit in enumerate(edits, start=1):
        where = f"edit {index} in {path}" if batch else path
        try:
            text, count = _apply_edit(
                text, edit["oldString"], edit["newString"], bool(edit.get("replaceAll", False)), where
            )
        except ToolError as exc:
            suffix = " No edits were applied." if batch else ""
            raise ToolError(exc.message + suffix) from exc
        counts.append(count)
    if text == original:
        raise ToolError(f"No change to {path}: the edits cancel out.")
    _write_text(workspace, path, text)
    if batch:
        return f"Applied {len(edits)} edit(s) to {path} ({', '.join(f'{c}x' for c in counts)})"
    return f"Replaced {counts[0]} occurrence(s) in {path}"


async def edit_file(input: JsonObject, ctx: ToolContext) -> str:
    return await asyncio.to_thread(edit_sync, ctx.workspace, input["path"], [input], batch=False)


async def multi_edit(input: JsonObject, ctx: ToolContext) -> str:
    return await asyncio.to_thread(edit_sync, ctx.workspace, input["path"], input["edits"], batch=True)


def _many_paths(input: JsonObject) -> list[str]:
    files = input.get("files")
    if not isinstance(files, list):
        return []
    return [f["path"] for f in files if isinstance(f, dict) and isinstance(f.get("path"), str)]


_PATH: dict[str, Any] = {"type": "string", "description": "File path relative to the workspace root"}
_OFFSET: dict[str, Any] = {"type": "integer", "minimum": 1, "description": "First line to return (1-based)"}
_LIMIT: dict[str, Any] = {"type": "integer", "minimum": 1, "description": "Max lines to return, default 2000"}
_EDIT_PROPS: dict[str, Any] = {
    "oldString": {
        "type": "string",
        "description": "Exact text to find, including whitespace and indentation",
    },
    "newString": {"type": "string", "description": "Replacement text"},
    "replaceAll": {
        "type": "boolean",
        "description": "Replace every occurrence instead of requiring exactly one",
    },
}

READ_FILE = Tool(
    ToolSpec(
        name="read_file",
        description=(
            "Read a UTF-8 text file. Lines are numbered like `cat -n`: the 1-based line number right-aligned "
            "in 6 columns, a tab, then the line; the numbers are not part of the file. Returns up to `limit` "
            "lines (default 2000) from `offset`; a note at the end says where to continue."
        ),
        parameters={
            "type": "object",
            "properties": {"path": _PATH, "offset": _OFFSET, "limit": _LIMIT},
            "required": ["path"],
        },
        subject=field_subject("path"),
    ),
    read_file,
)

READ_MANY_FILES = Tool(
    ToolSpec(
        name="read_many_files",
        description=(
            "Read several text files in one call (at most 20), each with its own offset and limit, numbered "
            "like read_file. A file that cannot be read is reported in its own block "
            "and does not stop the others."
        ),
        parameters={
            "type": "object",
            "properties": {
                "files": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": MAX_BATCH_FILES,
                    "items": {
                        "type": "object",
                        "properties": {"path": _PATH, "offset": _OFFSET, "limit": _LIMIT},
                        "required": ["path"],
                    },
                    "description": "The files to read, at most 20",
                }
            },
            "required": ["files"],
        },
        subject=_many_paths,
    ),
    read_many_files,
)

WRITE_FILE = Tool(
    ToolSpec(
        name="write_file",
        description=(
            "Create a file or overwrite it completely; missing parent directories are created. "
            "Prefer edit_file for changes to an existing file."
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": _PATH,
                "content": {"type": "string", "description": "The whole new content"},
            },
            "required": ["path", "content"],
        },
        mutating=True,
        subject=field_subject("path"),
    ),
    write_file,
)

EDIT_FILE = Tool(
    ToolSpec(
        name="edit_file",
        description=(
            "Replace an exact string in a file. "
            "oldString must appear exactly once unless replaceAll is true. "
            "Include surrounding context to make oldString unique."
        ),
        parameters={
            "type": "object",
            "properties": {"path": _PATH, **_EDIT_PROPS},
            "required": ["path", "oldString", "newString"],
        },
        mutating=True,
        subject=field_subject("path"),
    ),
    edit_file,
)

MULTI_EDIT = Tool(
    ToolSpec(
        name="multi_edit",
        description=(
            "Apply several exact-string edits to one file in one call; "
            "each edit sees the result of the previous one. "
            "All or nothing: if any edit fails, nothing is written."
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": _PATH,
                "edits": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": _EDIT_PROPS,
                        "required": ["oldString", "newString"],
                    },
                    "description": "Edits in the order they should be applied",
                },
            },
            "required": ["path", "edits"],
        },
        mutating=True,
        subject=field_subject("path"),
    ),
    multi_edit,
)

FILE_TOOLS = (READ_FILE, READ_MANY_FILES, WRITE_FILE, EDIT_FILE, MULTI_EDIT)
