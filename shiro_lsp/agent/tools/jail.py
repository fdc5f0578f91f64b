"""The workspace jail: every path a tool touches resolves inside the workspace.

A path is resolved the way the kernel would follow it: symlinks in any component are followed
(``os.path.realpath``), ``..`` is applied after the link it follows, and for a file that does not
exist yet the nearest existing parent decides. Whatever lands outside the workspace root is
refused with ``Path escapes workspace: <p>``, so a symlink can never carry a read or a write out.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from shiro_lsp.agent.tools.base import ToolError


class PathEscapes(ToolError):
    def __init__(self, path: str) -> None:
        super().__init__(f"Path escapes workspace: {path}")


def workspace_root(workspace: Path) -> Path:
    return Path(os.path.realpath(workspace))


def inside(root: Path, resolved: Path) -> bool:
    return resolved == root or resolved.is_relative_to(root)


def resolve_in_workspace(workspace: Path, path: str) -> Path:
    """The real absolute path of ``path`` (relative to the workspace, or absolute inside it)."""
    if "\x00" in path:
        raise ToolError(f"Invalid path (contains a NUL byte): {path!r}")
    root = workspace_root(workspace)
    given = Path(path)
    candidate = given if given.is_absolute() else root / given
    resolved = Path(os.path.realpath(candidate))
    if not inside(root, resolved):
        raise PathEscapes(path)
    return resolved


def relative_posix(workspace: Path, resolved: Path) -> str:
    """A resolved path as the model should see it: posix, relative to the workspace root."""
    rel = resolved.relative_to(workspace_root(workspace))
    text = str(PurePosixPath(*rel.parts)) if rel.parts else "."
    return text
