"""Errors a person reads. The server maps each to a JSON-RPC error with the same message."""

from __future__ import annotations

from typing import Any

INVALID_PARAMS = -32602
SHIRO_ERROR = -32000
NOT_FOUND = -32001
CONFLICT = -32002
READ_ONLY = -32003
TOO_LARGE = -32004
MODEL_ERROR = -32005


class ShiroError(Exception):
    """A failure with a message fit for the user; ``code`` is its JSON-RPC error code."""

    code = SHIRO_ERROR

    def __init__(self, message: str, *, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


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
