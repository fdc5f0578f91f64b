"""What a small model is shown of its workspace: when a turn starts, the files there and the content
of the files the user's message names (in a session's first turn in a small workspace, of the other
files too, while they fit); after a call that changed files, the diff (:func:`with_changes`).

A small model that cannot see the workspace guesses (``edit_file src/main.py`` in a folder holding
``calc.py``). The view is built once per turn and carried with the turn's user message (under
:data:`VIEW_KEY`, merged into its text only on the wire by :func:`with_workspace_views`), so every
request of the turn, and of later turns, starts with the same bytes and the provider's prompt cache
serves them. The session keeps the user's words as typed.

Bounded on every side (files listed, characters of content), ignore files honoured (the overview
walks like ``list_dir``), and secrets files never listed or read (:mod:`shiro_lsp.fs.secrets`);
secret values in a named file are cut out by the turn's redactor.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.ignore import Walker
from shiro_lsp.fs.secrets import is_secret_path
from shiro_lsp.messages import Message
from shiro_lsp.tools.files import open_text

VIEW_KEY = "shiroWorkspaceView"
"""The key of a user message that carries the workspace view (dropped by every provider adapter)."""
VIEW_NOTE_KEY = "shiroWorkspaceNote"
"""The key of the view's note, put after the user's words on the wire (before them, a 1.5B model
ignored it)."""
_CARRIED = (VIEW_KEY, VIEW_NOTE_KEY)
OVERVIEW_DEPTH = 3
MAX_NAMED_FILES = 4
MIN_FILE_CHARS = 200
CHANGES_CHARS = 1_500
_PATH_LIKE = re.compile(r"[\w][\w.\-/]*")
_CUT_NOTE = "(cut here"
_REFERENCE = re.compile(r"(?<![\w#&/])#\d{2,}\b")
MAX_REFERENCES = 3


@dataclass(frozen=True)
class ViewBudget:
    files: int
    """Paths the overview lists at most."""
    content_chars: int
    """Characters of named files' content, all files together."""
    overview: bool = True
    """Whether the files are listed (a session's first view), or only used to find named ones."""


def budget_for(context_window: int) -> ViewBudget:
    """A 16k window: 40 paths and 2,000 characters of content (about 600 tokens together)."""
    return ViewBudget(files=40, content_chars=max(1_000, context_window // 8))


@dataclass(frozen=True)
class WorkspaceView:
    text: str
    """'' when there is nothing to show."""
    whole: bool = False
    """The workspace is small enough to be shown whole (and a session's first view shows it so)."""
    note: str = ""
    """What follows the user's words: the references it makes that no file of the workspace holds."""


def workspace_view(root: Path, text: str, budget: ViewBudget, redact: Callable[[str], str]) -> WorkspaceView:
    """The view for a turn whose user message is ``text``.
    Blocking (a bounded directory walk and a few reads): call it in a thread."""
    listed, more = overview(root, budget.files)
    parts: list[str] = []
    if listed and budget.overview:
        tail = ["(more files not listed; use list_dir)"] if more else []
        parts.append("\n".join(["Files in the workspace:", *listed, *tail]))
    remaining = budget.content_chars
    named = named_files(root, text, listed)
    whole = not more and bool(listed)
    read: list[str] = []
    for position, rel in enumerate(named):  # each file gets a fair share of what is left
        share = remaining // (len(named) - position)
        shown = file_block(root, rel, share, redact)
        whole = whole and _CUT_NOTE not in shown and (bool(shown) or not _left_out(root, rel, share))
        parts.append(shown)
        read.append(shown)
        remaining -= len(shown)
    # a small workspace: the other files too, each while it fits whole (in a later view only measured,
    # so that every turn of the session is offered the same tools and its prompt prefix stays cached)
    for rel in (rel for rel in listed if rel not in named and not more):
        shown = file_block(root, rel, remaining, redact, whole=True)
        whole = whole and (bool(shown) or not _left_out(root, rel, remaining))
        parts.append(shown if budget.overview else "")
        read.append(shown)
        remaining -= len(shown)
    note = missing_references_note(text, "\n".join(read)) if whole else ""
    return WorkspaceView("\n\n".join(part for part in parts if part), whole, note)


def missing_references_note(text: str, workspace_text: str) -> str:
    """The issue or ticket numbers (``#4521``) the message names that the workspace, read whole, never
    mentions. Told nothing, a 1.5B model asked to "fix the bug from ticket #4521" invents a bug; told
    this, it says it cannot tell what the ticket asks (replays of the eval's recorded request)."""
    missing = [ref for ref in dict.fromkeys(_REFERENCE.findall(text)) if ref not in workspace_text]
    if not missing:
        return ""
    verb = "is" if len(missing) == 1 else "are"
    return f"{' and '.join(missing[:MAX_REFERENCES])} {verb} not in the workspace: if you cannot tell what it asks, say so."


def _left_out(root: Path, rel: str, budget: int) -> bool:
    """Whether a file not shown was left out for want of room (not for being empty or binary)."""
    try:
        size = (root / rel).stat().st_size
    except OSError:
        return False
    return size > 0 and (size > budget or budget < MIN_FILE_CHARS)


def overview(root: Path, limit: int) -> tuple[list[str], bool]:
    """Up to ``limit`` file paths (ignore files honoured, secrets files left out) and whether there are more."""
    listed: list[str] = []
    deeper = False  # a folder the walk did not enter
    for entry in Walker(root).walk(root, max_depth=OVERVIEW_DEPTH):
        if entry.is_dir:
            deeper = deeper or entry.rel.count("/") + 1 >= OVERVIEW_DEPTH
            continue
        if is_secret_path(entry.rel):
            continue
        if len(listed) == limit:
            return listed, True
        listed.append(entry.rel)
    return listed, deeper


def named_files(root: Path, text: str, listed: list[str]) -> list[str]:
    """Files the message names, by path or by a basename only one listed file has, in the order named."""
    by_name: dict[str, list[str]] = {}
    for rel in listed:
        by_name.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
    found: list[str] = []
    for word in _PATH_LIKE.findall(text):
        word = word.rstrip(".-/")
        same_name = by_name.get(word, [])
        named = same_name[0] if len(same_name) == 1 else word if _is_file(root, word) else None
        if named is not None and named not in found:
            found.append(named)
    return found[:MAX_NAMED_FILES]


def _is_file(root: Path, rel: str) -> bool:
    if "." not in rel and "/" not in rel:
        return False  # an ordinary word, not a path
    try:
        return (root / rel).is_file()
    except (OSError, ValueError):
        return False


def file_block(
    root: Path, rel: str, budget: int, redact: Callable[[str], str], *, whole: bool = False
) -> str:
    """``rel``'s content in a fence, cut at ``budget`` characters ('' for a secrets, binary or
    unreadable or empty file, and for one that would be cut when ``whole``)."""
    if budget < MIN_FILE_CHARS:
        return ""
    try:
        with open_text(root, rel) as handle:  # refuses secrets files, binaries and paths outside
            content = handle.read(budget + 1)
    except (ToolError, OSError, ValueError):
        return ""
    cut = len(content) > budget
    if not content.strip() or (cut and whole):
        return ""
    if cut:
        content = content[: content.rfind("\n", 0, budget) + 1]
    note = f"\n{_CUT_NOTE}; read_file {rel} with offset for the rest)" if cut else ""
    fence = "````" if "```" in content else "```"
    body = redact(content).rstrip("\n")
    return f"{rel}\n{fence}\n{body}\n{fence}{note}"  # the form a small model writes a file out in


def with_workspace_views(messages: list[Message]) -> list[Message]:
    """The wire messages with each carried view put before its user message's text, its note after."""
    return [_merged(message) if any(map(message.get, _CARRIED)) else message for message in messages]


def _merged(message: Message) -> Message:
    merged = {key: value for key, value in message.items() if key not in _CARRIED}
    content = message.get("content")
    if isinstance(content, str):
        parts = (message.get(VIEW_KEY), content, message.get(VIEW_NOTE_KEY))
        merged["content"] = "\n\n".join(str(part) for part in parts if part)
    return merged


NOTHING_EDITED = "\n(No file changed: the command's pattern matched nothing.)"
_IN_PLACE = re.compile(r"\b(?:sed|perl)\s+(?:-[\w]*\s+)*-[\w]*i")


def edits_in_place(tool: str, inputs: object) -> bool:
    """A bash call that edits files in place (``sed -i``, ``perl -pi``): when it changed nothing, a
    small model is told so (exit 0 alone reads as success)."""
    command = inputs.get("command") if isinstance(inputs, dict) else None
    return tool == "bash" and isinstance(command, str) and bool(_IN_PLACE.search(command))


def with_changes(output: str, diff: str) -> str:
    """A tool result with the diff of what the call changed (bash included), cut at CHANGES_CHARS."""
    if len(diff) > CHANGES_CHARS:
        diff = diff[: diff.rfind("\n", 0, CHANGES_CHARS) + 1] + "(diff cut here)\n"
    return f"{output}\n\nWhat this changed:\n{diff.rstrip()}"
