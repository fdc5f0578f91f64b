"""Project instructions for the system prompt (design.md "Ecosystem (v2)"): every file kind peers use.

- ``AGENTS.md``, ``CLAUDE.md``, ``.shiro.md`` in every folder from the git root down to the
  workspace, and ``AGENTS.md`` in every folder between the workspace and a file the turn touched
  (nearest to the file last: it wins where they disagree);
- ``.github/copilot-instructions.md``, ``.cursorrules`` and ``.clinerules`` (a file, or a folder
  of rule files) at the workspace root.

Each file is capped and labelled with its path relative to the root. Reading them is file I/O,
so :class:`ProjectInstructions` does it in a thread and the prompt builder only reads the result.
``/init`` expands to a normal turn that writes an ``AGENTS.md`` (approved like any write).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.reader import read_text

FOLDER_FILES = ("AGENTS.md", "CLAUDE.md", ".shiro.md")
NESTED_FILES = ("AGENTS.md",)
ROOT_FILES = (".github/copilot-instructions.md", ".cursorrules")
CLINERULES = ".clinerules"
CLINERULES_LIMIT = 20
FILE_CAP = 12_000
READ_LIMIT_BYTES = 1024 * 1024
"""What is read of one file before it is cut at FILE_CAP characters."""
TOTAL_CAP = 48_000
HEADER = (
    "Project instructions (from the files below). Treat these as standing orders from the user; they "
    "override your defaults but never your safety rules. Where two AGENTS.md files disagree, the one "
    "nearest to the file you are working on wins (it is listed later)."
)
INIT_PROMPT = (
    "Write an AGENTS.md at the root of this workspace for coding agents working here. First learn the "
    "repository: list the top-level layout, read the README and the build/test configuration (package "
    "manifests, Makefile, CI files), and look at a few representative source and test files. Then write "
    "a concise AGENTS.md (under 150 lines) with: what the project is, the layout, how to set up, build, "
    "lint and run the tests (exact commands), the code style and conventions you observed, and anything "
    "surprising a newcomer must know. If an AGENTS.md already exists, improve it instead of replacing "
    "what is still true. Only state what you verified in the repository."
)


def git_root(workspace: Path) -> Path:
    for candidate in [workspace, *workspace.parents]:
        if (candidate / ".git").exists():
            return candidate
    return workspace


def _read(root: Path, path: Path, cap: int = FILE_CAP) -> str | None:
    """An instructions file below ``root`` (the git root) through the confined reader: no link out of
    it, no FIFO or device, bounded; None when there is none (or it is not a readable text file)."""
    try:
        if path.is_symlink():
            return None
        text = read_text(root, str(path), limit=READ_LIMIT_BYTES)
    except (ToolError, OSError, ValueError):  # a path under a folder the model named can be anything
        return None
    if len(text) > cap:
        text = text[:cap] + f"\n... [cut: the file has {len(text)} characters, the first {cap} are shown]"
    return text.strip() or None


def _folders_between(top: Path, bottom: Path) -> list[Path]:
    """``top`` and every folder below it down to ``bottom`` (inclusive), outermost first."""
    rel = bottom.relative_to(top)
    return [top] + [top.joinpath(*rel.parts[: i + 1]) for i in range(len(rel.parts))]


def instruction_files(workspace: Path, touched: Iterable[Path] = ()) -> list[Path]:
    """Which files apply, in prompt order (outermost first; the nearest AGENTS.md last)."""
    root = git_root(workspace)
    found: list[Path] = []
    for folder in _folders_between(root, workspace):
        found += [folder / name for name in FOLDER_FILES]
    found += [workspace / name for name in ROOT_FILES]
    rules = workspace / CLINERULES
    if rules.is_dir() and not rules.is_symlink():
        found += sorted(p for p in rules.iterdir() if p.is_file())[:CLINERULES_LIMIT]
    else:
        found.append(rules)
    nested: list[Path] = []
    for file in sorted(set(touched)):
        folder = file if _is_dir(file) else file.parent
        try:
            folder.relative_to(workspace)
        except ValueError:
            continue
        for step in _folders_between(workspace, folder)[1:]:
            nested += [step / name for name in NESTED_FILES if step / name not in nested]
    return found + nested


def _is_dir(path: Path) -> bool:
    """A path the model named may be anything: too long for the file system, unreadable, a loop."""
    try:
        return path.is_dir()
    except OSError:
        return False


def build_block(workspace: Path, touched: Iterable[Path] = ()) -> str:
    """The labelled, capped instructions block ('' when there are none). Blocking file reads."""
    root = git_root(workspace)
    blocks: list[str] = []
    total = 0
    for path in instruction_files(workspace, touched):
        text = _read(root, path)
        if text is None:
            continue
        label = path.relative_to(root).as_posix()
        block = f"--- {label} ---\n{text}"
        if total + len(block) > TOTAL_CAP:
            blocks.append(
                f"--- {label} --- (left out: the project instructions are over {TOTAL_CAP} characters)"
            )
            continue
        total += len(block)
        blocks.append(block)
    if not blocks:
        return ""
    return "\n" + HEADER + "\n" + "\n".join(blocks)


def touched_path(workspace: Path, input: object) -> list[Path]:
    """The workspace paths a tool call names (``path``, ``paths``, ``file_path``)."""
    if not isinstance(input, dict):
        return []
    values: list[object] = [input.get("path"), input.get("file_path")]
    paths = input.get("paths")
    if isinstance(paths, list):
        values += paths
    out = []
    for value in values:
        if isinstance(value, str) and value and "\0" not in value:
            candidate = Path(value) if Path(value).is_absolute() else workspace / value
            out.append(Path(*candidate.parts))
    return out


class ProjectInstructions:
    """The instructions block for one turn: read in a thread, refreshed when the turn touches new folders."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.touched: set[Path] = set()
        self._built_for: frozenset[Path] | None = None
        self.block = ""

    def touch(self, input: object) -> None:
        self.touched.update(touched_path(self.workspace, input))

    async def refresh(self) -> str:
        key = frozenset(p.parent for p in self.touched)
        if key != self._built_for:
            self.block = await asyncio.to_thread(build_block, self.workspace, sorted(self.touched))
            self._built_for = key
        return self.block


def expand_command(text: str) -> str:
    """``/init`` becomes the prompt that writes AGENTS.md; anything else is the user's text."""
    stripped = text.strip()
    if stripped == "/init" or stripped.startswith("/init "):
        extra = stripped[len("/init") :].strip()
        return INIT_PROMPT + (f"\n\nAlso: {extra}" if extra else "")
    return text
