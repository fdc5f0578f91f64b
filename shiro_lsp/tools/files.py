"""File tools: read_file, read_many_files, write_file, edit_file, multi_edit.

Every path goes through the workspace jail; all disk work runs in ``asyncio.to_thread``.
Reads never hold more than about one result's worth of text, however large the file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from typing import IO, Annotated

from pydantic import Field, JsonValue, field_validator

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.jail import NoSuchFile, Roots, locate, relative_posix, write_atomic, write_atomic_mode
from shiro_lsp.fs.reader import NotText, is_binary, read_bytes
from shiro_lsp.fs.reader import open_text as open_text  # the one way a tool reads a text file
from shiro_lsp.fs.reader import refuse_secrets as refuse_secrets
from shiro_lsp.fs.secrets import (
    SECRET_FILE_EXCEPTIONS,
    SECRET_FILE_PATTERNS,
    HiddenSecretWrite,
    Redactor,
    with_hidden_values,
)
from shiro_lsp.images.files import image_for_the_model, is_image_path
from shiro_lsp.tools.base import (
    MAX_OUTPUT,
    JsonObject,
    ToolContext,
    ToolInput,
    ToolRules,
    ToolSpec,
    WriteRecorder,
    field_subject,
    typed_tool,
)
from shiro_lsp.tools.loose_match import loose_replace
from shiro_lsp.tools.nearby import missing_file_message

DEFAULT_LIMIT = 2000
SECRETS_HIDDEN = "Secret values are hidden from you"
HIDDEN_SECRET_WRITE = (
    "Not written: {path}: {why}. " + SECRETS_HIDDEN + " as [redacted …]: you cannot know or "
    "set them. Keep those lines as you were shown them; if the task needs a secret, tell the user to set "
    "it themselves."
)
MAX_LINE_CHARS = 2000
MAX_BATCH_FILES = 20
READ_BUDGET = MAX_OUTPUT - 200
MAX_SHOWN_ON_MISS = 6_000
"""Characters of a file shown in the error of an edit whose oldString is not in it."""
"""Characters of numbered lines per read, leaving room for the continuation note."""


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


def read_numbered(workspace: Roots, path: str, offset: int = 1, limit: int = DEFAULT_LIMIT) -> str:
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


# Hints shared by a family of tools: one line of the prompt's tool list names them all (see
# ``ToolSpec.prompt_hint``); each tool's own description says the rest.
READ_HINT = "read files (numbered lines); use offset/limit for long files."
CHANGE_HINT = "change files; read a file before you edit it."

FilePath = Annotated[str, Field(description="File path relative to the workspace root")]
OldString = Annotated[str, Field(description="Exact text to find, including whitespace and indentation")]
NewString = str
ReplaceAll = Annotated[bool, Field(description="Replace every occurrence instead of requiring exactly one")]


_ONE_BASED: dict[str, JsonValue] = {"minimum": 1}
"""What the schema offers (counted from 1), whatever the validation forgives."""


class FileSlice(ToolInput):
    # One file of read_many_files: read_file's fields, described once, on read_file (a docstring
    # here would be sent as the schema's description). Numbers are taken as meant: "40" is 40, an
    # offset of 0 the first line (models count from 0 as often as from 1), a limit of 0 the default.
    path: FilePath
    offset: int = Field(1, ge=0, strict=False, json_schema_extra=_ONE_BASED)
    limit: int = Field(DEFAULT_LIMIT, ge=0, strict=False, json_schema_extra=_ONE_BASED)

    @field_validator("offset")
    @classmethod
    def _first_line_at_least(cls, value: int) -> int:
        return max(value, 1)

    @field_validator("limit")
    @classmethod
    def _default_when_zero(cls, value: int) -> int:
        return value or DEFAULT_LIMIT


class ReadFileInput(FileSlice):
    offset: int = Field(
        1, ge=0, strict=False, json_schema_extra=_ONE_BASED, description="First line to return (1-based)"
    )
    limit: int = Field(
        DEFAULT_LIMIT,
        ge=0,
        strict=False,
        json_schema_extra=_ONE_BASED,
        description="Max lines to return, default 2000",
    )


class ReadManyFilesInput(ToolInput):
    files: list[FileSlice] = Field(
        min_length=1, max_length=MAX_BATCH_FILES, description="The files to read, at most 20"
    )


class WriteFileInput(ToolInput):
    path: FilePath
    content: str = Field(description="The whole new content")


class Edit(ToolInput):
    # One edit of multi_edit: edit_file's fields, described once, on edit_file (no docstring: it
    # would be sent as the schema's description).
    old_string: str
    new_string: str
    replace_all: bool = False


class EditFileInput(ToolInput):
    path: FilePath
    old_string: OldString
    new_string: NewString
    replace_all: ReplaceAll = False


class MultiEditInput(ToolInput):
    path: FilePath
    edits: list[Edit] = Field(min_length=1, description="Edits in the order they should be applied")


async def read_file(input: ReadFileInput, ctx: ToolContext) -> str:
    if is_image_path(input.path):
        text, shown = await asyncio.to_thread(image_for_the_model, ctx.workspace, input.path, ctx.images)
        if shown is not None:
            ctx.shown_images.append(shown)
        return text
    return await asyncio.to_thread(read_numbered, ctx.workspace, input.path, input.offset, input.limit)


def _read_block(workspace: Roots, item: FileSlice) -> str:
    try:
        body = read_numbered(workspace, item.path, item.offset, item.limit)
    except ToolError as exc:
        body = f"[unreadable: {exc.message}]"
    return f"===== {item.path} =====\n{body}"


async def read_many_files(input: ReadManyFilesInput, ctx: ToolContext) -> str:
    blocks = await asyncio.gather(*(asyncio.to_thread(_read_block, ctx.workspace, f) for f in input.files))
    return "\n\n".join(blocks)


def _write_text(workspace: Roots, path: str, content: str) -> None:
    """Replace the file whole through the jail (temp file + rename inside the opened parent)."""
    write_atomic(workspace, path, content.encode("utf-8"))


def _read_exact(workspace: Roots, path: str) -> str:
    with open_text(workspace, path, newline="") as f:
        return f.read()


def _read_original(workspace: Roots, path: str, tool: str) -> tuple[str, bytes, str, int]:
    """A text file about to be edited, from one read through the confined reader (secrets refused):
    its text (decoded as :func:`open_text` does), its bytes, its workspace-relative path and its mode."""
    try:
        read = read_bytes(workspace, path)
    except NoSuchFile as error:
        raise ToolError(missing_file_message(workspace, path, tool=tool)) from error
    if is_binary(read.data):
        raise NotText(path)
    rel = relative_posix(workspace, read.opened.resolved)
    return read.data.decode("utf-8", errors="replace"), read.data, rel or ".", read.opened.mode


def _replace(
    workspace: Roots,
    path: str,
    rel: str,
    data: bytes,
    before: tuple[bytes | None, int | None],
    recorder: WriteRecorder | None,
) -> None:
    """``write_atomic``, with the checkpoint told before (the old bytes) and after (the new state)."""
    if recorder is not None:
        recorder.before_write(rel, *before, data)
    _, mode = write_atomic_mode(workspace, path, data)
    if recorder is not None:
        recorder.after_write(rel, mode)


def _raw_before(workspace: Roots, path: str) -> tuple[bytes | None, int | None] | None:
    """The bytes and mode a write will replace ((None, None): no file yet); None if unreadable
    (``write_atomic`` then gives the reason)."""
    try:
        read = read_bytes(workspace, path, secrets=True)  # kept for undo, never shown
        return read.data, read.opened.mode
    except NoSuchFile:
        return None, None
    except (ToolError, OSError):
        return None


def _collapsed(before: str, after: str) -> bool:
    """A rewrite of similar size with far fewer lines: usually squeezed whitespace, rarely intended."""
    if not before:
        return False
    ratio = len(after) / len(before)
    return 0.5 <= ratio <= 1.5 and after.count("\n") + 1 < (before.count("\n") + 1) / 2


UNCHANGED_WRITE = "Not written: {path} already holds exactly this content, so nothing would change."


def _keeping_hidden_values(path: str, before: str, after: str, redactor: Redactor) -> str:
    try:
        return with_hidden_values(before, after, redactor)
    except HiddenSecretWrite as error:
        raise ToolError(HIDDEN_SECRET_WRITE.format(path=path, why=error)) from error


def write_sync(
    workspace: Roots,
    path: str,
    content: str,
    recorder: WriteRecorder | None = None,
    redactor: Redactor | None = None,
) -> str:
    target = locate(workspace, path)[1]
    if target.is_dir():
        raise ToolError(f"{path} is a directory; give a file path.")
    before: str | None = None
    if target.is_file():
        try:
            before = _read_exact(workspace, path)
        except ToolError:
            before = None  # binary, or a secrets file: overwriting it is the user's call (approval)
    content = _keeping_hidden_values(path, before or "", content, redactor or Redactor())
    if before is not None and content == before:
        raise ToolError(UNCHANGED_WRITE.format(path=path))
    raw = _raw_before(workspace, path) if recorder is not None else None
    if raw is None:
        _write_text(workspace, path, content)
    else:
        _replace(workspace, path, relative_posix(workspace, target), content.encode("utf-8"), raw, recorder)
    message = f"Wrote {len(content)} chars to {path}"
    if before is not None and _collapsed(before, content):
        old_lines, new_lines = before.count("\n") + 1, content.count("\n") + 1
        message += (
            f", but it collapsed {old_lines} lines into {new_lines}. If that was not intended, "
            "re-send the content with its original newlines and indentation."
        )
    return message


async def write_file(input: WriteFileInput, ctx: ToolContext) -> str:
    return await asyncio.to_thread(
        write_sync, ctx.workspace, input.path, input.content, ctx.recorder, ctx.redactor
    )


def not_found(where: str, text: str) -> str:
    """The error of an oldString that is not in the file, with the file's content to copy it from
    (the read the model skipped or misremembers), when it is short enough."""
    message = f"{where}: oldString not found, not even ignoring indentation."
    if len(text) > MAX_SHOWN_ON_MISS or "```" in text:
        return message + " Read the file, then copy oldString from it exactly."
    return f"{message} The file's current content, to copy oldString from exactly:\n```\n{text}\n```"


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
        loose = loose_replace(text, old, new, where)
        if loose is None:
            raise ToolError(not_found(where, text))
        return loose, 1
    if count > 1 and not replace_all:
        raise ToolError(
            f"{where}: oldString appears {count} times. Add surrounding context or set replaceAll."
        )
    if replace_all:
        return text.replace(old, new), count
    return text.replace(old, new, 1), 1


def edit_sync(
    workspace: Roots,
    path: str,
    edits: Sequence[Edit | EditFileInput],
    *,
    batch: bool,
    recorder: WriteRecorder | None = None,
    redactor: Redactor | None = None,
) -> str:
    original, data, rel, mode = _read_original(workspace, path, "multi_edit" if batch else "edit_file")
    text = original
    counts: list[int] = []
    for index, edit in enumerate(edits, start=1):
        where = f"edit {index} in {path}" if batch else path
        try:
            text, count = _apply_edit(text, edit.old_string, edit.new_string, edit.replace_all, where)
        except ToolError as exc:
            suffix = " No edits were applied." if batch else ""
            raise ToolError(exc.message + suffix) from exc
        counts.append(count)
    text = _keeping_hidden_values(path, original, text, redactor or Redactor())
    if text == original:
        raise ToolError(f"No change to {path}: the edits cancel out.")
    _replace(workspace, path, rel, text.encode("utf-8"), (data, mode), recorder)
    if batch:
        return f"Applied {len(edits)} edit(s) to {path} ({', '.join(f'{c}x' for c in counts)})"
    return f"Replaced {counts[0]} occurrence(s) in {path}"


async def edit_file(input: EditFileInput, ctx: ToolContext) -> str:
    return await asyncio.to_thread(
        edit_sync,
        ctx.workspace,
        input.path,
        [input],
        batch=False,
        recorder=ctx.recorder,
        redactor=ctx.redactor,
    )


async def multi_edit(input: MultiEditInput, ctx: ToolContext) -> str:
    return await asyncio.to_thread(
        edit_sync,
        ctx.workspace,
        input.path,
        input.edits,
        batch=True,
        recorder=ctx.recorder,
        redactor=ctx.redactor,
    )


def _many_paths(input: JsonObject) -> list[str]:
    files = input.get("files")
    if not isinstance(files, list):
        return []
    return [f["path"] for f in files if isinstance(f, dict) and isinstance(f.get("path"), str)]


SECRET_RULES: ToolRules = {
    "*": "allow",
    **dict.fromkeys(SECRET_FILE_PATTERNS, "deny"),
    **dict.fromkeys(SECRET_FILE_EXCEPTIONS, "allow"),
}
"""The default rule of the read tools: anything but secrets files (``*.env``, ``*.pem``, keys)."""

READ_FILE = typed_tool(
    ToolSpec(
        name="read_file",
        description=(
            "Read a UTF-8 text file. Lines are numbered like `cat -n`: the 1-based line number right-aligned "
            "in 6 columns, a tab, then the line; the numbers are not part of the file. Returns up to `limit` "
            "lines from `offset`; a note at the end says where to continue. An image file is shown to you."
        ),
        input_model=ReadFileInput,
        subject=field_subject("path"),
        plan_safe=True,
        default_rule=SECRET_RULES,
        prompt_hint=READ_HINT,
    ),
    ReadFileInput,
    read_file,
)

READ_MANY_FILES = typed_tool(
    ToolSpec(
        name="read_many_files",
        description=(
            "Read several text files in one call (at most 20), each with its own offset and limit, numbered "
            "like read_file. A file that cannot be read is reported in its own block "
            "and does not stop the others."
        ),
        input_model=ReadManyFilesInput,
        subject=_many_paths,
        plan_safe=True,
        default_rule=SECRET_RULES,
        prompt_hint=READ_HINT,
    ),
    ReadManyFilesInput,
    read_many_files,
)

WRITE_FILE = typed_tool(
    ToolSpec(
        name="write_file",
        description=(
            "Create a file or overwrite it completely; missing parent directories are created. "
            "Prefer edit_file for changes to an existing file."
        ),
        input_model=WriteFileInput,
        mutating=True,
        subject=field_subject("path"),
        prompt_hint=CHANGE_HINT,
    ),
    WriteFileInput,
    write_file,
)

EDIT_FILE = typed_tool(
    ToolSpec(
        name="edit_file",
        description=(
            "Replace an exact string in a file. "
            "oldString must appear exactly once unless replaceAll is true. "
            "Include surrounding context to make oldString unique."
        ),
        input_model=EditFileInput,
        mutating=True,
        subject=field_subject("path"),
        prompt_hint=CHANGE_HINT,
    ),
    EditFileInput,
    edit_file,
)

MULTI_EDIT = typed_tool(
    ToolSpec(
        name="multi_edit",
        description=(
            "Apply several edits (each as edit_file's) to one file in one call; "
            "each edit sees the result of the previous one. "
            "All or nothing: if any edit fails, nothing is written."
        ),
        input_model=MultiEditInput,
        mutating=True,
        subject=field_subject("path"),
        prompt_hint=CHANGE_HINT,
    ),
    MultiEditInput,
    multi_edit,
)

FILE_TOOLS = (READ_FILE, READ_MANY_FILES, WRITE_FILE, EDIT_FILE, MULTI_EDIT)
