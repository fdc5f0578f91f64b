"""Read-only git tools. git runs with an argument list, never a shell, in the workspace root.

Arguments come from the model, so paths are jailed and passed after ``--``, and a ref is
refused when it could be read as an option (``--output=...``); ``--end-of-options`` guards it twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from pathlib import Path
from typing import Annotated

from pydantic import Field

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.jail import relative_posix, resolve_in_workspace, session_root, workspace_root
from shiro_lsp.fs.secrets import git_exclusions, is_secret_path, refusal
from shiro_lsp.tools.base import (
    MAX_OUTPUT,
    Handler,
    Tool,
    ToolContext,
    ToolInput,
    ToolSpec,
    field_subject,
    no_subject,
)
from shiro_lsp.tools.environment import command_env
from shiro_lsp.tools.shell import BoundedText

GIT_TIMEOUT_S = 30.0
DEFAULT_LOG = 15
MAX_LOG = 40
BLAME_SPAN = 40
_BAD_REF = re.compile(r"[\s\x00-\x1f\x7f]")

STATUS_LABEL = {
    "M": "modified",
    "T": "type changed",
    "A": "added",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "U": "conflicted",
    "?": "untracked",
    "!": "ignored",
}


def _env() -> dict[str, str]:
    extra = {"GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    return command_env(os.environ, (), extra)


async def run_git(workspace: Path, args: list[str]) -> str:
    """stdout of ``git <args>``, bounded to one result's worth; a failure becomes a ToolError."""
    root = await asyncio.to_thread(workspace_root, workspace)
    try:
        proc = await asyncio.create_subprocess_exec(
            "git",
            "--no-pager",
            "-c",
            "color.ui=never",
            "-c",
            "core.quotepath=off",
            *args,
            cwd=root,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=_env(),
        )
    except FileNotFoundError as exc:
        raise ToolError("git is not installed or not on PATH.") from exc
    assert proc.stdout is not None and proc.stderr is not None
    out = BoundedText(head=MAX_OUTPUT, tail=0)

    async def read_out() -> None:
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(65_536):
            out.add(chunk.decode("utf-8", "replace"))

    try:
        async with asyncio.timeout(GIT_TIMEOUT_S):
            _, err_bytes, _ = await asyncio.gather(read_out(), proc.stderr.read(65_536), proc.wait())
    except TimeoutError as exc:
        raise ToolError(f"git {args[0]} took longer than {GIT_TIMEOUT_S:.0f} s and was stopped.") from exc
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    if proc.returncode != 0:
        message = (
            err_bytes.decode("utf-8", "replace").strip()
            or out.text().strip()
            or f"git exited {proc.returncode}"
        )
        if "not a git repository" in message.lower():
            raise ToolError(f"{root} is not a git repository.")
        raise ToolError(message)
    return out.text()


def _jailed(workspace: Path, path: str) -> str:
    return relative_posix(workspace, resolve_in_workspace(workspace, path))


async def _path_arg(workspace: Path, path: str) -> str:
    return await asyncio.to_thread(_jailed, workspace, path)


async def _content_path(workspace: Path, path: str) -> str:
    """A path whose file contents the tool prints: secrets files are refused (the one policy)."""
    rel = await _path_arg(workspace, path)
    if is_secret_path(path, rel):
        raise ToolError(refusal(path))
    return rel


def check_ref(ref: str) -> str:
    if not ref or ref.startswith("-") or _BAD_REF.search(ref) or len(ref) > 256:
        raise ToolError(
            f"Invalid ref: {ref!r}. Give a commit hash, branch, tag, or an expression like HEAD~2."
        )
    return ref


def _describe_status(line: str) -> str:
    staged, unstaged, path = line[0], line[1], line[3:]
    parts: list[str] = []
    if staged not in " ?":
        parts.append(f"staged {STATUS_LABEL.get(staged, staged)}")
    if unstaged != " ":
        parts.append(STATUS_LABEL.get(unstaged, unstaged))
    return f"{path}  ({', '.join(parts) or 'unknown'})"


Narrow = Annotated[
    str | None, Field(description="Limit to one file or directory (relative to the workspace root)")
]


class GitStatusInput(ToolInput):
    pass


class GitDiffInput(ToolInput):
    staged: bool = False
    path: Narrow = None


class GitLogInput(ToolInput):
    limit: int = Field(DEFAULT_LOG, ge=1, le=MAX_LOG, description="Default 15, max 40")
    path: Narrow = None


class GitShowInput(ToolInput):
    ref: str
    path: Narrow = None


class GitBlameInput(ToolInput):
    path: str
    start_line: int | None = Field(None, ge=1)
    end_line: int | None = Field(None, ge=1)


async def git_status(input: GitStatusInput, ctx: ToolContext) -> str:
    lines = (
        await run_git(session_root(ctx.workspace), ["status", "--porcelain=v1", "--branch"])
    ).splitlines()
    branch = lines[0][3:] if lines and lines[0].startswith("## ") else "(unknown branch)"
    changes = [line for line in lines[1:] if line]
    if not changes:
        return f"On {branch}, working tree clean."
    described = [_describe_status(line) for line in changes[:200]]
    more = [f"... [{len(changes) - 200} more]"] if len(changes) > 200 else []
    return "\n".join([f"On {branch}, {len(changes)} changed:", *described, *more])


async def git_diff(input: GitDiffInput, ctx: ToolContext) -> str:
    args = ["diff", "--no-color"]
    if input.staged:
        args.append("--staged")
    scope = await _content_path(session_root(ctx.workspace), input.path) if input.path else "."
    args += ["--", scope, *git_exclusions()]
    text = (await run_git(session_root(ctx.workspace), args)).strip()
    return text or ("Nothing staged." if input.staged else "No uncommitted changes.")


async def git_log(input: GitLogInput, ctx: ToolContext) -> str:
    args = ["log", f"-n{input.limit}", "--date=short", "--pretty=format:%h  %ad  %an  %s"]
    if input.path:
        args += ["--", await _path_arg(session_root(ctx.workspace), input.path)]
    try:
        text = (await run_git(session_root(ctx.workspace), args)).strip()
    except ToolError as exc:
        if "does not have any commits" in exc.message:
            return "No commits."
        raise
    return text or "No commits."


async def git_show(input: GitShowInput, ctx: ToolContext) -> str:
    ref = check_ref(input.ref)
    if ":" in ref and is_secret_path(ref.split(":", 1)[1]):
        raise ToolError(refusal(ref.split(":", 1)[1]))
    head = ["show", "--no-color", "--date=short", "--end-of-options", ref]
    scope = await _content_path(session_root(ctx.workspace), input.path) if input.path else "."
    shown = (await run_git(session_root(ctx.workspace), [*head, "--", scope, *git_exclusions()])).strip()
    if shown or ":" in ref:
        return shown or "Nothing to show."
    header = (
        await run_git(session_root(ctx.workspace), [*head[:-2], "--no-patch", "--end-of-options", ref])
    ).strip()
    if not header:
        return "Nothing to show."
    return f"{header}\n\n(its changes here are only to secrets files, which Shiro leaves out)"


async def git_blame(input: GitBlameInput, ctx: ToolContext) -> str:
    path = await _content_path(session_root(ctx.workspace), input.path)
    start, end = input.start_line, input.end_line
    args = ["blame", "--date=short", "-w"]
    if start is not None or end is not None:
        first = start if start is not None else 1
        last = end if end is not None else first + BLAME_SPAN
        if last < first:
            raise ToolError(f"endLine ({last}) is before startLine ({first}).")
        args += ["-L", f"{first},{last}"]
    return (await run_git(session_root(ctx.workspace), [*args, "--", path])).strip() or "No blame output."


GIT_HINT = "inspect the repository's state and history."
"""One line in the prompt for all the git tools (they share it)."""


def _git_tool(
    name: str, description: str, model: type[ToolInput], handler: Handler, subject: str | None
) -> Tool:
    spec = ToolSpec(
        name=name,
        description=description,
        input_model=model,
        subject=field_subject(subject) if subject else no_subject,
        plan_safe=True,
        default_rule="allow",
        prompt_hint=GIT_HINT,
    )
    return Tool(spec, handler)


GIT_STATUS = _git_tool(
    "git_status",
    "Working tree status: current branch, and which files are staged, modified, or untracked.",
    GitStatusInput,
    git_status,
    None,
)
GIT_DIFF = _git_tool(
    "git_diff",
    "Unified diff of uncommitted changes. Pass staged to see what is staged instead, or a path to narrow it.",
    GitDiffInput,
    git_diff,
    "path",
)
GIT_LOG = _git_tool(
    "git_log",
    "Recent commits, newest first: short hash, date, author, subject. Pass a path for commits touching it.",
    GitLogInput,
    git_log,
    "path",
)
GIT_SHOW = _git_tool(
    "git_show",
    "One commit in full: message, author, and its diff. Takes a hash, tag, or ref like HEAD~2.",
    GitShowInput,
    git_show,
    "ref",
)
GIT_BLAME = _git_tool(
    "git_blame",
    "Who last changed each line of a file, with the commit and date. Narrow with startLine and endLine.",
    GitBlameInput,
    git_blame,
    "path",
)

GIT_TOOLS = (GIT_STATUS, GIT_DIFF, GIT_LOG, GIT_SHOW, GIT_BLAME)
