"""Bounded parsing of text Shiro does not control: a model's replies, a model server's metadata,
files in the workspace, settings and the environment.

Each parse is bounded in depth, size or digits, and a value past the bound is a plain result (not
parsed, out of range), never an exception out of a turn: Python's own limits (the int-from-string
digit limit of 3.11, the recursion limit that ``json`` and ``ast`` hit) raise ``ValueError``,
``RecursionError`` or ``MemoryError`` from deep inside a turn otherwise.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

MAX_JSON_DEPTH = 64
"""Nesting a JSON value read from a model's text may have: a tool call's arguments or a data file a
small model writes out go a few levels deep; thousands is an attack or a loop."""
MAX_DIGITS = 18
"""Digits a number read from text may have (any line number, token count or size fits)."""

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


class NotParsed:
    """What :func:`json_value` returns for text that is not (bounded) JSON."""

    def __repr__(self) -> str:
        return "NOT_PARSED"


NOT_PARSED = NotParsed()


def json_depth(text: str) -> int:
    """How deep the arrays and objects of ``text`` nest (strings skipped); linear, no recursion."""
    depth = deepest = 0
    for char in _STRING.sub("", text):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def json_value(text: str, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``text`` decoded as one JSON value, or :data:`NOT_PARSED` (not JSON, or nested past ``max_depth``)."""
    if json_depth(text) > max_depth:
        return NOT_PARSED
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return NOT_PARSED


def raw_json_value(
    decoder: json.JSONDecoder, text: str, at: int, *, max_depth: int = MAX_JSON_DEPTH
) -> tuple[Any, int]:
    """``decoder.raw_decode(text, at)`` bounded: raises ``ValueError`` for anything not (bounded) JSON."""
    if json_depth(text[at:]) > max_depth:
        raise ValueError(f"JSON nested deeper than {max_depth} levels")
    try:
        return decoder.raw_decode(text, at)
    except RecursionError as error:
        raise ValueError("JSON nested too deep") from error


def python_module(source: str) -> ast.Module | None:
    """``source`` parsed as a Python module, or None: a syntax error, or nested past what the parser
    (or the memory) allows (a 20,000-term expression raises ``RecursionError``)."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def parses_as_python(source: str) -> bool:
    return python_module(source) is not None


def small_int(text: str, *, max_digits: int = MAX_DIGITS) -> int | None:
    """A decimal number of at most ``max_digits`` digits (an optional sign, ASCII digits), else None."""
    digits = text.strip().removeprefix("-").removeprefix("+")
    if not digits or len(digits) > max_digits or not (digits.isascii() and digits.isdigit()):
        return None
    return int(text.strip())


def int_in_range(value: Any, low: int, high: int) -> int | None:
    """``value`` when it is an int (not a bool) within ``low..high``, else None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if low <= value <= high else None


MIN_CONTEXT_WINDOW = 1_024
"""The smallest context window Shiro works in: the compact prompt alone takes about 1,200 tokens."""
MAX_CONTEXT_WINDOW = 16_777_216
"""The largest it takes as real: above every model served today, far below where arithmetic breaks."""


def context_window(value: Any) -> int | None:
    """A context window in tokens, when ``value`` is a plausible one."""
    return int_in_range(value, MIN_CONTEXT_WINDOW, MAX_CONTEXT_WINDOW)


def context_window_refusal(source: str, value: Any) -> str:
    """Why a context window from ``source`` (a setting, a variable, a server's field) is not used."""
    if isinstance(value, int) and abs(value) >= 10**MAX_DIGITS:
        shown = f"a number of more than {MAX_DIGITS} digits"
    else:
        shown = str(value)[:40]
    return (
        f"{source} gives a context window of {shown} tokens, outside {MIN_CONTEXT_WINDOW:,}–"
        f"{MAX_CONTEXT_WINDOW:,}; Shiro does not use it (set shiro.contextWindow to the model's window)."
    )
