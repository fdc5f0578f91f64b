"""Errors a person reads. The server maps each to a JSON-RPC error with the same message."""

from __future__ import annotations

import errno
import os
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # pydantic loads only when something is validated, not with every error
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails

INVALID_PARAMS = -32602
SHIRO_ERROR = -32000
NOT_FOUND = -32001
CONFLICT = -32002
READ_ONLY = -32003
TOO_LARGE = -32004
MODEL_ERROR = -32005
STATE_UNAVAILABLE = -32006


class ShiroError(Exception):
    """A failure with a message fit for the user; ``code`` is its JSON-RPC error code."""

    code = SHIRO_ERROR

    def __init__(self, message: str, *, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


class ToolError(Exception):
    """A failure the model reads as the tool's result; the turn continues (not a ``ShiroError``:
    the user never sees it as an error of the request)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadParams(ShiroError):
    code = INVALID_PARAMS


class NotFound(ShiroError):
    code = NOT_FOUND


class Conflict(ShiroError):
    """A write guarded by a hash found the stored value changed."""

    code = CONFLICT


class ReadOnly(ShiroError):
    code = READ_ONLY


class TooLarge(ShiroError):
    code = TOO_LARGE


class StateUnavailable(ShiroError):
    """The state on disk cannot be written (or read): full disk, read-only, permissions, not a folder."""

    code = STATE_UNAVAILABLE


_OS_ADVICE: dict[int, str] = {
    errno.ENOSPC: "No space left on the device holding {path} — free some space and try again",
    errno.EDQUOT: "The disk quota is used up for {path} — free some space and try again",
    errno.EROFS: "{path} is on a read-only file system — make it writable or set shiro.home elsewhere",
    errno.EACCES: "Permission denied for {path} — check its owner and permissions",
    errno.EPERM: "Permission denied for {path} — check its owner and permissions",
    errno.ENOTDIR: "{path} is in the way: a file stands where Shiro needs a folder — move it",
    errno.EISDIR: "{path} is a folder where Shiro needs a file — move it",
    errno.EEXIST: "{path} is in the way — move it",
    errno.EMFILE: "Too many open files — close some and try again",
    errno.ENFILE: "Too many open files — close some and try again",
}


def from_os_error(error: OSError, *, changed: bool = False) -> ShiroError:
    """A message a person can act on, for a failed file operation (no Python text)."""
    path = error.filename if isinstance(error.filename, str | bytes) else None
    shown = os.fsdecode(path) if path is not None else "Shiro's state folder"
    if len(shown) > 200:
        shown = "…" + shown[-200:]
    advice = _OS_ADVICE.get(error.errno or 0)
    if advice is None:
        reason = os.strerror(error.errno) if error.errno else "an I/O error"
        advice = f"Could not use {{path}} ({reason})"
    outcome = "" if changed else "; nothing was changed"
    return StateUnavailable(
        advice.format(path=shown) + outcome + ".",
        data={"errno": errno.errorcode.get(error.errno or 0, "EIO")},
    )


def from_sqlite_error(error: Exception) -> ShiroError:
    """The same kind of message for a failed write to ``shiro.db`` (no SQLite text on the wire)."""
    text = str(error).lower()
    if "full" in text:
        message = "No space left for Shiro's database (shiro.db) — free some space and try again"
        code = "ENOSPC"
    elif "readonly" in text or "read-only" in text:
        message = "Shiro's database (shiro.db) is on a read-only file system — make it writable"
        code = "EROFS"
    elif "locked" in text or "busy" in text:
        message = "Shiro's database (shiro.db) is busy (another Shiro window?) — try again in a moment"
        code = "EBUSY"
    elif "unable to open" in text:
        message = "Shiro's database (shiro.db) cannot be opened — check the state folder's permissions"
        code = "EACCES"
    else:
        message = "Shiro's database (shiro.db) could not be written"
        code = "EIO"
    return StateUnavailable(message + "; nothing was changed.", data={"errno": code})


# --- validation problems -----------------------------------------------------------------------
# Every pydantic validation error a person or the model reads goes through ``describe_problems``:
# the server's -32602 "Invalid params" and a tool's "Invalid input" alike. Both name every problem,
# in order, at its dotted location. Two styles, because each audience's wording is a contract:
# clients of the server read pydantic's own message (``text: Field required``); the model reads a
# sentence (``'text' is required``, ``'limit' must be at most 40``), also for JSON Schema tools.

Style = Literal["sentence", "pydantic"]

_TYPE_NAMES: dict[str, str] = {
    "int_type": "integer",
    "int_parsing": "integer",
    "int_from_float": "integer",
    "float_type": "number",
    "float_parsing": "number",
    "string_type": "string",
    "bool_type": "boolean",
    "bool_parsing": "boolean",
    "list_type": "array",
    "tuple_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
    "dataclass_type": "object",
    "none_required": "null",
}


def describe_problem(error: ErrorDetails, whole: str = "the input", style: Style = "sentence") -> str:
    """One problem in words, naming its place (``'edits.0.newString' is required``)."""
    where = ".".join(str(part) for part in error["loc"])
    if style == "pydantic":
        return f"{where or whole}: {error['msg']}"
    named = f"'{where}'" if where else whole
    kind = error["type"]
    ctx: dict[str, Any] = dict(error.get("ctx") or {})
    if kind == "missing":
        return f"{named} is required"
    if kind in _TYPE_NAMES:
        return f"{named} must be of type {_TYPE_NAMES[kind]}"
    if kind == "greater_than_equal":
        return f"{named} must be at least {ctx['ge']}"
    if kind == "less_than_equal":
        return f"{named} must be at most {ctx['le']}"
    if kind == "greater_than":
        return f"{named} must be greater than {ctx['gt']}"
    if kind == "less_than":
        return f"{named} must be less than {ctx['lt']}"
    if kind == "too_short":
        return f"{named} must have at least {ctx['min_length']} item(s)"
    if kind == "too_long":
        return f"{named} must have at most {ctx['max_length']} item(s)"
    if kind == "string_too_short":
        return f"{named} must be at least {ctx['min_length']} character(s)"
    if kind == "string_too_long":
        return f"{named} must be at most {ctx['max_length']} character(s)"
    if kind in ("literal_error", "enum"):
        return f"{named} must be one of {ctx['expected']}"
    if kind == "extra_forbidden":
        return f"{named} is not a known field"
    message = error["msg"].removeprefix("Value error, ")
    return f"{named}: {message}"


def describe_problems(error: ValidationError, whole: str = "the input", style: Style = "sentence") -> str:
    """Every problem of a validation error, in order, joined with ``; ``."""
    return "; ".join(describe_problem(e, whole, style) for e in error.errors())
