"""Finding things: list_dir, glob, grep. All honour ``.gitignore`` unless ``includeIgnored`` is set."""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import pathspec
from pydantic import Field

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.ignore import Walker
from shiro_lsp.fs.jail import (
    Folders,
    HardLinked,
    Roots,
    folder_relative,
    locate,
    resolve_in_workspace,
    roots_of,
    workspace_root,
)
from shiro_lsp.fs.reader import SNIFF_BYTES, is_binary, opening
from shiro_lsp.fs.secrets import flag, is_secret_path, private_within, skipped_note
from shiro_lsp.tools.base import ToolContext, ToolInput, ToolSpec, field_subject, typed_tool

MAX_TREE_ENTRIES = 300
DEFAULT_GLOB_LIMIT = 200
MAX_GREP_HITS = 200
MAX_HIT_CHARS = 300
COUNT_CEILING = 10_000
RG_TIMEOUT_S = 60.0


IncludeIgnored = Annotated[bool, Field(description="Also include files .gitignore excludes")]


class ListDirInput(ToolInput):
    path: str = Field(".", description="Directory relative to the workspace root, default .")
    depth: int = Field(2, ge=1, le=6, description="Levels, default 2")
    include_ignored: IncludeIgnored = False


class GlobInput(ToolInput):
    pattern: str
    limit: int = Field(DEFAULT_GLOB_LIMIT, ge=1, description="Max paths to return, default 200")
    include_ignored: IncludeIgnored = False


class GrepInput(ToolInput):
    pattern: str = Field(description="Regex (ripgrep syntax when ripgrep is installed, otherwise Python re)")
    include: str | None = Field(None, description="Gitignore-style glob limiting which files are searched")
    ignore_case: bool = False
    include_ignored: IncludeIgnored = False


# --- list_dir -------------------------------------------------------------------------------


def _human_size(size: int) -> str:
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{round(size / 1024)}K"
    return f"{size / 1024 / 1024:.1f}M"


def list_dir_sync(workspace: Roots, path: str, depth: int, include_ignored: bool) -> str:
    root, start = locate(workspace, path)
    if not start.is_dir():
        raise ToolError(f"Not a directory: {path}")
    walker = Walker(root, include_ignored=include_ignored)
    base_depth = len(start.relative_to(walker.root).parts)
    rel = "." if start == walker.root else start.relative_to(walker.root).as_posix()
    shown = folder_relative(workspace, roots_of(workspace).index(root), rel)
    label = "." if shown == "." else shown + "/"
    rows: list[str] = []
    limited = False
    for entry in walker.walk(start, max_depth=depth):
        if len(rows) >= MAX_TREE_ENTRIES:
            limited = True
            break
        level = len(entry.rel.split("/")) - base_depth - 1
        name = entry.rel.rsplit("/", 1)[-1]
        if entry.is_dir:
            rows.append(f"{'  ' * level}{name}/")
        else:
            try:
                size = _human_size(entry.path.stat().st_size)
            except OSError:
                size = "?"
            rows.append(f"{'  ' * level}{name}  {size}")
    if not rows:
        return f"{label} is empty (or everything in it is ignored)."
    tail = f"\n... [{MAX_TREE_ENTRIES}-entry limit reached]" if limited else ""
    return f"{label}\n" + "\n".join(rows) + tail


async def list_dir(input: ListDirInput, ctx: ToolContext) -> str:
    return await asyncio.to_thread(
        list_dir_sync, ctx.workspace, input.path, input.depth, input.include_ignored
    )


# --- glob ------------------------------------------------------------------------------------

_GLOB_CHARS = re.compile(r"[*?\[{]")


def _expand_braces(pattern: str) -> list[str]:
    match = re.search(r"\{([^{}]*)\}", pattern)
    if not match:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    out: list[str] = []
    for option in match.group(1).split(","):
        out.extend(_expand_braces(head + option + tail))
    return out


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[" and "]" in pattern[i + 1 :]:
            end = pattern.index("]", i + 1)
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
            i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    return "".join(out)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob over posix relative paths.

    ``*`` and ``?`` stay within one segment, ``**`` spans segments, ``{a,b}`` is either.
    """
    alternatives = [_translate(p) for p in _expand_braces(pattern)]
    return re.compile("(?:" + "|".join(alternatives) + r")\Z", re.DOTALL)


def _normalise_pattern(workspace: Roots, pattern: str) -> str:
    if pattern.startswith("/"):
        root = str(workspace_root(workspace))
        if not pattern.startswith(root + "/"):
            raise ToolError(f"Path escapes workspace: {pattern}")
        pattern = pattern[len(root) + 1 :]
    while pattern.startswith("./"):
        pattern = pattern[2:]
    if any(part == ".." for part in pattern.split("/")):
        raise ToolError(f"Path escapes workspace: {pattern}")
    return pattern


def folder_scope(workspace: Roots, pattern: str) -> tuple[int, Path, str]:
    """Which root a glob pattern (or grep ``include``) searches: ``(index, root, pattern in it)``.

    One folder: the workspace, as always. Several: an absolute pattern inside a folder, or one
    that starts with a folder's name (``api/**/*.py``), searches that folder; any other the
    session's root (``./name/...`` too).
    """
    roots = roots_of(workspace)
    if not isinstance(workspace, Folders) or len(roots) < 2:
        return 0, roots[0], pattern
    if pattern.startswith("/"):
        for index, root in enumerate(roots):
            if pattern.startswith(str(root) + "/"):
                return index, root, pattern[len(str(root)) + 1 :]
        raise ToolError(f"Path escapes workspace: {pattern}")
    if not pattern.startswith("./"):
        head, _, rest = pattern.partition("/")
        for index, (name, _) in enumerate(workspace.entries):
            if name == head and rest:
                return index, roots[index], rest
    return 0, roots[0], pattern


def _literal_start(workspace: Roots, pattern: str) -> Path:
    """The deepest directory named literally at the head of the pattern; the walk starts there."""
    parts = pattern.split("/")[:-1]
    literal: list[str] = []
    for part in parts:
        if _GLOB_CHARS.search(part):
            break
        literal.append(part)
    start = resolve_in_workspace(workspace, "/".join(literal) or ".")
    return start


def glob_sync(workspace: Roots, pattern: str, limit: int, include_ignored: bool) -> str:
    index, root, pattern = folder_scope(workspace, pattern)
    pattern = _normalise_pattern(root, pattern)
    matcher = glob_regex(pattern)
    start = _literal_start(root, pattern)
    if not start.is_dir():
        return "No files matched."
    hits: list[str] = []
    more = 0
    for entry in Walker(root, include_ignored=include_ignored).walk(start):
        if entry.is_dir or not matcher.match(entry.rel):
            continue
        if len(hits) < limit:
            shown = folder_relative(workspace, index, entry.rel)
            hits.append(flag(shown) if is_secret_path(entry.rel) else shown)
        else:
            more += 1
            if more >= COUNT_CEILING:
                break
    if not hits:
        return "No files matched."
    if more:
        more_text = f"{more}+" if more >= COUNT_CEILING else str(more)
        hits.append(f"... [{more_text} more not shown; narrow the pattern or raise limit]")
    return "\n".join(hits)


async def glob(input: GlobInput, ctx: ToolContext) -> str:
    return await asyncio.to_thread(
        glob_sync, ctx.workspace, input.pattern, input.limit, input.include_ignored
    )


# --- grep ------------------------------------------------------------------------------------


Label = Callable[[str], str]
"""How a path relative to the searched root is shown (another folder's paths start with its name)."""


def _same(rel: str) -> str:
    return rel


def _hit(rel: str, number: int | str, text: str) -> str:
    return f"{rel}:{number}: {text.rstrip(chr(13) + chr(10))[:MAX_HIT_CHARS]}"


@dataclass
class _Skipped:
    """Files grep did not search, and why: secrets files and hard-linked files."""

    secrets: list[str] = field(default_factory=list)
    hardlinked: list[str] = field(default_factory=list)

    def notes(self) -> list[str]:
        notes = [skipped_note(self.secrets)] if self.secrets else []
        if self.hardlinked:
            shown = ", ".join(self.hardlinked[:5])
            notes.append(
                f"[{len(self.hardlinked)} hard-linked file(s) skipped ({shown}): another link can lie "
                "outside the workspace]"
            )
        return notes


def _finish(hits: list[str], limited: bool, skipped: _Skipped | None = None) -> str:
    body = "\n".join(hits) if hits else "No matches."
    tail = f"\n... [hit limit {MAX_GREP_HITS}]" if hits and limited else ""
    notes = skipped.notes() if skipped else []
    return body + tail + "".join(f"\n{n}" for n in notes)


def _include_spec(include: str | None) -> pathspec.GitIgnoreSpec | None:
    return pathspec.GitIgnoreSpec.from_lines([include]) if include else None


def _included(rel: str, only: pathspec.GitIgnoreSpec | None) -> bool:
    """``include`` narrows with gitignore-style matching."""
    return only is None or only.match_file(rel)


def grep_python(
    workspace: Roots,
    pattern: str,
    include: str | None,
    ignore_case: bool,
    include_ignored: bool,
    label: Label = _same,
) -> str:
    """The fallback when ripgrep is not installed: Python ``re``, same output shape."""
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"Invalid regex: {exc}") from exc
    only = _include_spec(include)
    walker = Walker(workspace_root(workspace), include_ignored=include_ignored)
    hits: list[str] = []
    skipped = _Skipped()
    for entry in walker.walk(walker.root):
        if entry.is_dir or not _included(entry.rel, only):
            continue
        if is_secret_path(entry.rel):
            skipped.secrets.append(label(entry.rel))
            continue
        try:
            with opening(walker.root, entry.rel) as (_, handle):
                if is_binary(handle.peek(SNIFF_BYTES)):
                    continue
                for number, raw in enumerate(handle, start=1):
                    line = raw.decode("utf-8", "replace")
                    if regex.search(line):
                        if len(hits) >= MAX_GREP_HITS:
                            return _finish(hits, True, skipped)
                        hits.append(_hit(label(entry.rel), number, line))
        except HardLinked:
            skipped.hardlinked.append(label(entry.rel))
        except (ToolError, OSError):
            continue
    return _finish(hits, False, skipped)


def _rg_args(root: Path, pattern: str, ignore_case: bool, include_ignored: bool) -> list[str]:
    args = ["--line-number", "--no-heading", "--color", "never", "--null", "--hidden", "--no-require-git"]
    args += [
        "--max-columns",
        str(MAX_HIT_CHARS),
        "--max-columns-preview",
        "--sort",
        "path",
    ]
    if ignore_case:
        args.append("--ignore-case")
    return [*args, *_rg_scope(root, include_ignored), "--regexp", pattern, "--", "."]


def _rg_scope(root: Path, include_ignored: bool) -> list[str]:
    args = ["--glob", "!.git"]
    for private in private_within(root):  # the state root, when the workspace holds it
        args += ["--glob", "!/" + re.sub(r"([*?\[\]{}\\!])", r"\\\1", private)]
    if include_ignored:
        args.append("--no-ignore")
    else:
        args += ["--glob", "!node_modules"]
        shiroignore = root / ".shiroignore"
        if shiroignore.is_file():
            args += ["--ignore-file", str(shiroignore)]
    return args


async def _rg_secrets_in_scope(
    rg: str, root: Path, include_ignored: bool, only: pathspec.GitIgnoreSpec | None
) -> list[str]:
    """The secrets files a search would have covered (names only: rg lists, never reads, them)."""
    scope = await asyncio.to_thread(_rg_scope, root, include_ignored)
    proc = await asyncio.create_subprocess_exec(
        rg,
        "--files",
        "--hidden",
        "--no-require-git",
        "--null",
        "--sort",
        "path",
        *scope,
        "--",
        ".",
        cwd=root,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        async with asyncio.timeout(RG_TIMEOUT_S):
            out, _ = await proc.communicate()
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        return []
    names = [n.decode("utf-8", "replace").removeprefix("./") for n in out.split(b"\x00") if n]
    return [n for n in names if is_secret_path(n) and _included(n, only)]


def _hardlinked(root: Path, rel: str) -> bool:
    try:
        return (root / rel).lstat().st_nlink > 1
    except OSError:
        return True


async def grep_ripgrep(
    rg: str,
    workspace: Roots,
    pattern: str,
    include: str | None,
    ignore_case: bool,
    include_ignored: bool,
    label: Label = _same,
) -> str:
    """ripgrep: faster, same output shape. Reads hit by hit and stops rg once the hit limit is reached."""
    root = await asyncio.to_thread(workspace_root, workspace)
    args = await asyncio.to_thread(_rg_args, root, pattern, ignore_case, include_ignored)
    only = _include_spec(include)
    secrets_listing = asyncio.ensure_future(_rg_secrets_in_scope(rg, root, include_ignored, only))
    proc = await asyncio.create_subprocess_exec(
        rg,
        *args,
        cwd=root,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=1 << 20,
    )
    assert proc.stdout is not None and proc.stderr is not None
    hits: list[str] = []
    skipped = _Skipped()
    linked: dict[str, bool] = {}
    limited = False
    try:
        async with asyncio.timeout(RG_TIMEOUT_S):
            while line := await proc.stdout.readline():
                path_bytes, _, rest = line.partition(b"\x00")
                rel = path_bytes.decode("utf-8", "replace").removeprefix("./")
                if is_secret_path(rel) or not _included(rel, only):
                    continue
                if rel not in linked:
                    linked[rel] = await asyncio.to_thread(_hardlinked, root, rel)
                    if linked[rel]:
                        skipped.hardlinked.append(label(rel))
                if linked[rel]:
                    continue
                number, _, text = rest.decode("utf-8", "replace").partition(":")
                if len(hits) >= MAX_GREP_HITS:
                    limited = True
                    break
                hits.append(_hit(label(rel), number, text))
            stderr = ""
            if not limited:
                stderr = (await proc.stderr.read(65_536)).decode("utf-8", "replace")
                await proc.wait()
    except TimeoutError:
        limited = True
        stderr = ""
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        await proc.wait()
        skipped.secrets = [label(name) for name in await secrets_listing]
    if proc.returncode == 2 and not hits and "regex" in stderr.lower():
        raise ToolError(f"Invalid regex: {stderr.strip()}")
    return _finish(hits, limited, skipped)


def find_ripgrep() -> str | None:
    return shutil.which("rg")


async def grep(input: GrepInput, ctx: ToolContext) -> str:
    workspace = ctx.workspace
    index, root, include = await asyncio.to_thread(folder_scope, workspace, input.include or "")
    args = (root, input.pattern, include or None, input.ignore_case, input.include_ignored)

    def label(rel: str) -> str:
        return folder_relative(workspace, index, rel)

    rg = find_ripgrep()
    if rg:
        return await grep_ripgrep(rg, *args, label)
    return await asyncio.to_thread(grep_python, *args, label)


LIST_DIR = typed_tool(
    ToolSpec(
        name="list_dir",
        description=(
            "Directory tree, honouring .gitignore. Use it first to orient yourself in an unfamiliar project. "
            "Directories end with /, files show their size. At most 300 entries."
        ),
        input_model=ListDirInput,
        subject=field_subject("path"),
        plan_safe=True,
        default_rule="allow",
        prompt_hint="the tree under a folder.",
    ),
    ListDirInput,
    list_dir,
)

GLOB = typed_tool(
    ToolSpec(
        name="glob",
        description=(
            "Find files by glob pattern. `*` stays within one directory, `**` spans directories, "
            "`{a,b}` matches either. Skips anything .gitignore excludes. "
            "Paths are relative to the workspace root."
        ),
        input_model=GlobInput,
        subject=field_subject("pattern"),
        plan_safe=True,
        default_rule="allow",
        prompt_hint="find files by name pattern.",
    ),
    GlobInput,
    glob,
)

GREP = typed_tool(
    ToolSpec(
        name="grep",
        description=(
            "Search file contents with a regular expression. Skips binaries, secrets files (named in a "
            "closing note), hard-linked files and anything `.gitignore` excludes. "
            "Returns `path:line: text` hits, at most 200."
        ),
        input_model=GrepInput,
        subject=field_subject("pattern"),
        plan_safe=True,
        default_rule="allow",
        prompt_hint="search file contents by regular expression.",
    ),
    GrepInput,
    grep,
)

SEARCH_TOOLS = (LIST_DIR, GLOB, GREP)
