"""System prompt assembly (spec §7.7), rebuilt before every model step from live state.

Order: identity, environment, tools, how to work, how to reply, then each starting with a blank
line: project instructions, project memory, notes, agent appendix. The environment (the absolute
workspace path) comes after the fixed sections, and the task list is not part of it at all: it
goes after the conversation (``loop.with_reminder``), so a ``todo_write`` keeps the provider's
cached prompt prefix valid.
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from pathlib import Path

from shiro_lsp.adapt import PromptParts, folder_lines, with_blocks
from shiro_lsp.tools.base import ToolSpec


def tools_section(tools: Sequence[ToolSpec]) -> list[str]:
    """One line per tool (its ``prompt_hint``); tools sharing a hint share one line, where the first
    of them comes. The lines only point the way: each tool's schema carries its description."""
    lines = ["Tools available to you now:"]
    shared: dict[str, list[str]] = {}
    for spec in tools:
        shared.setdefault(spec.prompt_hint, []).append(spec.name)
    for spec in tools:
        names = shared[spec.prompt_hint] if spec.prompt_hint else [spec.name]
        if names[0] == spec.name:
            lines.append(f"- {', '.join(names)}: {spec.prompt_hint or 'see its own description.'}")
    return lines


def how_to_work(tools: Sequence[ToolSpec], can_ask: bool) -> list[str]:
    approvals = [spec.name for spec in tools if spec.asks]
    names = {spec.name for spec in tools}
    lines = [
        "How to work:",
        "- Read the relevant code before you change it. Make the smallest change that does the job, in the style around it.",
    ]
    if approvals:
        lines.append(
            f"- {', '.join(approvals)} may need the user's approval; a denied call is an answer, not an obstacle to route around."
        )
    else:
        lines.append(
            "- You have no tools that change anything this turn: describe changes instead of making them."
        )
    if "bash" in names:
        lines.append("- Verify what you change: run the tests or the command that proves it.")
    else:
        lines.append("- You cannot run commands this turn; say what the user should run to verify.")
    lines.append("- When something fails twice, stop and re-read the error literally before trying again.")
    lines.append(
        "- Ask rather than guess when a choice is the user's to make."
        if can_ask
        else "- No one can answer a question this run. Decide yourself and state the assumption plainly."
    )
    lines.append(
        "- Long sessions get compacted as the context fills: keep the plan in todo_write and record what stays true with remember."
    )
    return lines


HOW_TO_REPLY = [
    "How to reply:",
    "- Lead with the outcome. No preamble, no restating the question.",
    "- Markdown is rendered: use code blocks with a language for code, and backticks for paths.",
    "- Report failures as they are; never claim a test passed that you did not run.",
]


def environment(parts: PromptParts) -> list[str]:
    """After the fixed sections: the absolute path differs per workspace, so it must not start the prompt
    (a provider's prompt cache reuses the longest identical prefix)."""
    return [
        "Environment:",
        f"- Workspace root: {parts.workspace}",
        f"- Platform: {platform.system().lower()}",
        "- Paths are resolved inside the workspace. Anything outside it is refused.",
        *folder_lines(parts),
    ]


def build_system_prompt(parts: PromptParts) -> str:
    lines = [
        "You are Shiro, a coding agent working in the user's editor (VS Code).",
        "",
        *tools_section(parts.tools),
        "",
        *how_to_work(parts.tools, parts.can_ask),
        "",
        *HOW_TO_REPLY,
        "",
        *environment(parts),
    ]
    return with_blocks("\n".join(lines) + "\n", parts)


def is_git_workspace(workspace: Path) -> bool:
    """Whether the workspace is inside a git repository (a ``.git`` here or in a parent)."""
    return any((folder / ".git").exists() for folder in [workspace, *workspace.parents])
