"""What the reflections read in a reply and in the workspace: code blocks, the paths a text names,
a file's lines."""

from __future__ import annotations

import json
import re
from typing import Any

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.jail import Roots
from shiro_lsp.tools.files import open_text

FENCED = re.compile(r"```[^\n`]*\n(?P<body>.*?)```", re.S)
_PATH = re.compile(r"(?<![\w/.-])[\w./-]*\w\w\.[A-Za-z][A-Za-z0-9]{0,7}\b")
MAX_QUOTED_FILE = 200_000


def code_blocks(text: str) -> list[list[str]]:
    """The stripped non-blank lines of each code block of more than one line."""
    blocks = (
        [line.strip() for line in m.group("body").splitlines() if line.strip()] for m in FENCED.finditer(text)
    )
    return [block for block in blocks if len(block) > 1]


def asks_the_user(text: str) -> bool:
    """The reply ends by asking something (its prose's last line ends with a question mark)."""
    prose = FENCED.sub("", text).strip()
    return bool(prose) and prose.splitlines()[-1].rstrip().endswith("?")


def named_paths(text: str) -> list[str]:
    """The file paths ``text`` names, in order, once each."""
    return list(dict.fromkeys(m.group(0).strip("`'\"") for m in _PATH.finditer(text)))


def listed_file(before: str) -> str | None:
    """The one file the text before a block names as the block's: on the line right before it, else
    anywhere since the previous block (a list of files, then "New content:")."""
    lines = before.rstrip().splitlines()
    for text in (lines[-1] if lines else "", before):
        named = named_paths(text)
        if named:
            return named[0] if len(named) == 1 else None
    return None


def is_the_file(block: set[str], file_lines: set[str]) -> bool:
    """A code block's stripped lines are the file's, blank lines aside: the file as it already is."""
    return bool(block) and block == file_lines - {""}


def file_lines(workspace: Roots, path: str) -> set[str] | None:
    """The stripped lines of an existing workspace file, None when there is none (or it is not text)."""
    try:
        with open_text(workspace, path) as f:
            return {line.strip() for line in f.read(MAX_QUOTED_FILE).splitlines()}
    except (ToolError, OSError):
        return None


def output_text(part: dict[str, Any]) -> str:
    """A tool-result part's output as text."""
    value = part.get("output", {}).get("value", "")
    return value if isinstance(value, str) else json.dumps(value)
