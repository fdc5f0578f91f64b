"""What a small model is shown of its workspace with the user's message (built by
:mod:`shiro_lsp.adapt.context_builder` from the repository map, :mod:`shiro_lsp.adapt.repo_map`):
the files the message names, the files defining the symbols it names, the files of a pasted
traceback, their tests, then the map of the rest, in a real share of the window; a small workspace
whole. After a call that changed files, the model is shown the diff (``hints.py``).

A model that cannot see the workspace guesses (``edit_file src/main.py`` in a folder that has no
``src``). The view is built once per turn and carried with the turn's user message (under
:data:`VIEW_KEY`, merged into its text only on the wire by :func:`with_workspace_views`), so every
request of the turn, and of later turns, starts with the same bytes and the provider's prompt cache
serves them. The session keeps the user's words as typed. A later turn of the session shows only
the files its message points at.

Bounded on every side (the map's limits, the budget), ignore files honoured, secrets files never
listed or read (:mod:`shiro_lsp.fs.secrets`); secret values are cut out by the turn's redactor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shiro_lsp.adapt.context_builder import build_context, first_look
from shiro_lsp.adapt.prose import references
from shiro_lsp.adapt.repo_map import repo_map_of
from shiro_lsp.fs.ignore import Walker
from shiro_lsp.fs.secrets import is_secret_path
from shiro_lsp.messages import Message

VIEW_KEY = "shiroWorkspaceView"
"""The key of a user message that carries the workspace view (dropped by every provider adapter)."""
VIEW_NOTE_KEY = "shiroWorkspaceNote"
"""The key of the view's note, put after the user's words on the wire (before them, a 1.5B model
ignored it)."""
_CARRIED = (VIEW_KEY, VIEW_NOTE_KEY)
OVERVIEW_DEPTH = 3
MAX_VIEW_FILES = 40
MAX_REFERENCES = 3


@dataclass(frozen=True)
class ViewBudget:
    files: int
    """Paths the overview lists at most."""
    content_chars: int
    """Characters of named files' content, all files together."""
    overview: bool = True
    """Whether the files are listed (a session's first view), or only used to find named ones."""


@dataclass(frozen=True)
class WorkspaceView:
    text: str
    """'' when there is nothing to show."""
    whole: bool = False
    """The workspace is small enough to be shown whole (and a session's first view shows it so)."""
    note: str = ""
    """What follows the user's words: the references it makes that no file of the workspace holds."""


def workspace_view(root: Path, text: str, budget: ViewBudget, redact: Callable[[str], str]) -> WorkspaceView:
    """The view for a turn whose user typed ``text`` (``user_words``; a later turn's when not
    ``budget.overview``). Blocking (a bounded walk, parsing what changed, a few reads): call it in
    a thread."""
    scan = repo_map_of(root).scan()
    built = build_context(scan, root, text, budget.content_chars // 4, redact, overview=budget.overview)
    note = missing_references_note(text, built.text) if built.whole else ""
    return WorkspaceView(built.text, built.whole, note)


def first_look_view(root: Path, text: str, tokens: int, redact: Callable[[str], str]) -> WorkspaceView:
    """A model with a large window: the repository map alone, in ``tokens``, with a session's first
    message (it reads the files it needs itself). Blocking: call it in a thread."""
    return WorkspaceView(first_look(repo_map_of(root).scan(), root, text, tokens, redact))


def missing_references_note(words: str, workspace_text: str) -> str:
    """The issue or ticket numbers the user's words name that the workspace, read whole, never
    mentions: said after the user's words, so that a model asked about one it cannot see says so
    instead of inventing what it asks."""
    missing = [ref for ref in references(words) if ref not in workspace_text]
    if not missing:
        return ""
    verb = "is" if len(missing) == 1 else "are"
    return f"{' and '.join(missing[:MAX_REFERENCES])} {verb} not in the workspace: if you cannot tell what it asks, say so."


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


def with_workspace_views(messages: list[Message]) -> list[Message]:
    """The wire messages with each carried view put before its user message's text, its note after."""
    return [_merged(message) if any(map(message.get, _CARRIED)) else message for message in messages]


def _merged(message: Message) -> Message:
    merged = {key: value for key, value in message.items() if key not in _CARRIED}
    content = message.get("content")
    if isinstance(content, str):
        parts = (message.get(VIEW_KEY), content, message.get(VIEW_NOTE_KEY))
        merged["content"] = "\n\n".join(str(part) for part in parts if part)
    elif isinstance(content, list):  # a prompt with images: the view and the note as text parts around it
        view, note = message.get(VIEW_KEY), message.get(VIEW_NOTE_KEY)
        before = [{"type": "text", "text": f"{view}\n\n"}] if view else []
        after = [{"type": "text", "text": f"\n\n{note}"}] if note else []
        merged["content"] = [*before, *content, *after]
    return merged
