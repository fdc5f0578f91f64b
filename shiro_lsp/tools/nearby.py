"""What an edit of a missing file is told: the files that do exist where it looked.

A small model edits the path it imagines (a ``src/`` file in a flat project) before it looks. A
bare "No such file" makes it guess again; naming the files of the same name elsewhere in the
workspace and what the nearest existing folder holds lets the next call be right.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.ignore import Walker
from shiro_lsp.fs.jail import Roots, locate, relative_posix, roots_of

MAX_NAMED = 12
"""Entries named per list."""
MAX_WALKED = 5_000
"""Workspace entries looked at for files of the same name (a huge tree is not walked whole)."""


def missing_file_message(workspace: Roots, path: str, *, tool: str) -> str:
    """The error of ``tool`` on ``path``, which does not exist."""
    parts = [f"No such file: {path}."]
    try:
        same_name = _same_name(workspace, PurePosixPath(path).name)
        folder, listing = _nearest_listing(workspace, path)
    except (OSError, ToolError):
        same_name, folder, listing = [], "", []
    if same_name:
        parts.append(f"Files with that name: {', '.join(same_name)}.")
    if listing:
        parts.append(f"The folder {folder} holds: {', '.join(listing)}.")
    parts.append(f"{tool} changes an existing file; to create a new one, use write_file.")
    return " ".join(parts)


def _same_name(workspace: Roots, name: str) -> list[str]:
    if not name:
        return []
    root = roots_of(workspace)[0]
    walker = Walker(root)
    found: list[str] = []
    for seen, entry in enumerate(walker.walk(walker.root)):
        if seen >= MAX_WALKED or len(found) >= MAX_NAMED:
            break
        if not entry.is_dir and entry.rel.rsplit("/", 1)[-1] == name:
            found.append(relative_posix(workspace, entry.path))
    return found


def _nearest_listing(workspace: Roots, path: str) -> tuple[str, list[str]]:
    """The nearest folder on ``path``'s way that exists, and its entries (folders with a slash)."""
    root, resolved = locate(workspace, path)
    folder = resolved.parent
    while folder != root and not folder.is_dir():
        folder = folder.parent
    walker = Walker(root)
    shown = relative_posix(workspace, folder)
    entries: list[str] = []
    for entry in walker.walk(folder, max_depth=1):
        if len(entries) >= MAX_NAMED:
            entries.append("…")
            break
        name = Path(entry.rel).name
        entries.append(name + "/" if entry.is_dir else name)
    return shown, entries
