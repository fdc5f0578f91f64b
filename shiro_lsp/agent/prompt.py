"""System prompt assembly (spec §7.7), rebuilt before every model step from live state.

Order: identity, environment, tools, how to work, how to reply, then each starting with a blank
line: project instructions, project memory, notes, agent appendix, and the task list last.
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from shiro_lsp.agent.tools.base import ToolSpec


@dataclass(frozen=True)
class PromptParts:
    workspace: Path
    tools: Sequence[ToolSpec]
    can_ask: bool = True
    project_instructions: str = ""
    memory_block: str = ""
    notes_block: str = ""
    appendix: str = ""
    task_block: str = ""


def tools_section(tools: Sequence[ToolSpec]) -> list[str]:
    """One line per tool (its ``prompt_hint``); tools sharing a hint share one line, after the rest."""
    lines = ["Tools available to you now:"]
    shared: dict[str, list[str]] = {}
    for spec in tools:
        shared.setdefault(spec.prompt_hint, []).append(spec.name)
    for spec in tools:
        if spec.prompt_hint and len(shared[spec.prompt_hint]) > 1:
            continue
        lines.append(f"- {spec.name}: {spec.prompt_hint or 'see its own description.'}")
    for hint, names in shared.items():
        if hint and len(names) > 1:
            lines.append(f"- {', '.join(names)}: {hint}")
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
    "- Markdown is rendered: use code blocks with a language for code, and paths as `path/to/file`.",
    "- Report failures as they are; never claim a test passed that you did not run.",
]


def build_system_prompt(parts: PromptParts) -> str:
    lines = [
        "You are Shiro, a coding agent working in the user's editor (VS Code).",
        "",
        "Environment:",
        f"- Workspace root: {parts.workspace}",
        f"- Platform: {platform.system().lower()}",
        "- Paths are resolved inside the workspace. Anything outside it is refused.",
        "",
        *tools_section(parts.tools),
        "",
        *how_to_work(parts.tools, parts.can_ask),
        "",
        *HOW_TO_REPLY,
    ]
    prompt = "\n".join(lines) + "\n"
    for block in (
        parts.project_instructions,
        parts.memory_block,
        parts.notes_block,
        parts.appendix,
        parts.task_block,
    ):
        if block:
            prompt += block if block.startswith("\n") else "\n" + block
    return prompt
