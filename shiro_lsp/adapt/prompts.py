"""What a system prompt is built from, and the compact variant Shiro sends a model with a small
context window: few rules in few words, seven built-in tools with one-line descriptions and stripped
schemas, and the offered tool that does the work of each one left out. The full prompt is
``agent/prompt.py``; a profile (``adapt/profiles.py``) says which one a turn gets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from shiro_lsp.tools.base import ToolSpec


@dataclass(frozen=True)
class PromptParts:
    workspace: Path
    tools: Sequence[ToolSpec]
    writes_out: bool = False
    """The model writes files out in its reply (adapt/formats/whole_file.py) instead of calling file tools."""
    can_ask: bool = True
    project_instructions: str = ""
    memory_block: str = ""
    notes_block: str = ""
    appendix: str = ""
    task_block: str = ""
    folders: tuple[tuple[str, Path], ...] = ()
    """A multi-root workspace's folders (name, path), the session's root first; empty for one folder."""


def folder_lines(parts: PromptParts) -> list[str]:
    """How to reach the other folders of a multi-root workspace (nothing for one folder)."""
    if len(parts.folders) < 2:
        return []
    (own, _), others = parts.folders[0], parts.folders[1:]
    listed = ", ".join(f"{name}/ = {path}" for name, path in others)
    return [
        f"- Workspace folders: this session's root is folder {own}; the others are {listed}.",
        "- A path that starts with a folder's name is in that folder (also for glob patterns and grep's "
        "include); other relative paths, and ./name/..., are in this session's root. bash and git run "
        "in this session's root.",
    ]


def with_blocks(prompt: str, parts: PromptParts) -> str:
    """The prompt with the project instructions, memory, notes, appendix and task blocks after it."""
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


# --- the compact variant, for models with a small context window -------------------------------

COMPACT_TOOLS = frozenset({"read_file", "write_file", "edit_file", "list_dir", "grep", "bash", "todo_write"})
"""The built-in tools a small model is offered: few tools it uses well (bash stands in for git, moves
and deletes; list_dir and grep for glob). Tools from MCP servers or extensions are still offered."""


COMPACT_INSTEAD = {
    "multi_edit": "edit_file",
    "apply_patch": "edit_file",
    "read_many_files": "read_file",
    "glob": "list_dir or grep",
    "delete_file": "bash",
    "move_file": "bash",
    "git_status": "bash",
    "git_diff": "bash",
    "git_log": "bash",
    "git_show": "bash",
    "git_blame": "bash",
}
"""The offered tool that does the work of each built-in tool a small window leaves out."""


COMPACT_DESCRIPTIONS = {
    "read_file": "Read a text file (numbered lines).",
    "write_file": "Create or overwrite a whole file.",
    "edit_file": "Replace an exact string (once) in a file.",
    "list_dir": "List a folder's tree.",
    "grep": "Search file contents by regex.",
    "bash": "Run a shell command in the workspace.",
    "todo_write": "Replace your task list (send all tasks).",
}
COMPACT_DROPPED_PARAMETERS = frozenset({"includeIgnored", "timeout"})
"""Optional parameters a small model is not shown (their defaults serve it)."""
_SCHEMA_KEYS = frozenset({"type", "properties", "required", "items", "enum"})


def compact_schema(schema: object) -> object:
    """A JSON Schema with only what a call needs to be valid: no descriptions, bounds or defaults."""
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, object] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {
                name: compact_schema(sub)
                for name, sub in value.items()
                if name not in COMPACT_DROPPED_PARAMETERS
            }
        elif key in _SCHEMA_KEYS:
            out[key] = compact_schema(value)
    return out


def compact_spec(spec: ToolSpec) -> ToolSpec:
    """The same tool as a small model is offered it (the engine still checks input with the full spec)."""
    description = COMPACT_DESCRIPTIONS.get(spec.name) or spec.description.split(". ")[0].rstrip(".") + "."
    parameters = compact_schema(spec.parameters)
    assert isinstance(parameters, dict)
    return replace(spec, description=description, parameters=parameters, input_model=None)


WRITE_OUT_RULES = (
    "- Once you understand the request, decide which files must change, then write out each of them "
    "whole: its path alone on one line, then its entire new content in a fenced code block. Never leave "
    "lines out.",
    "- Call a tool only to read, search or run something you need.",
)
"""How a small model writes files without a tool call (read back by adapt/formats/whole_file.py), put first: the
1.5B model acts on the first rule it is given."""
NO_INVENTED_FACTS = (
    "- Never invent what the workspace does not hold (a password, a key, an ID): say so and ask for it."
)


def build_compact_system_prompt(parts: PromptParts) -> str:
    """The system prompt for small context windows: the rules that matter, in few words."""
    names = {spec.name for spec in parts.tools}
    asks = [spec.name for spec in parts.tools if spec.asks]
    lines = ["You are Shiro, a coding agent in the user's editor. Work in the workspace.", "Rules:"]
    if parts.writes_out:
        lines += WRITE_OUT_RULES if parts.tools else WRITE_OUT_RULES[:1]
    else:
        lines += [
            "- Call a tool to act.",
            "- Read a file before you edit it. Make the smallest change that works.",
        ]
    lines += [
        "- When you are done, answer in a few sentences, outcome first, naming the files.",
        NO_INVENTED_FACTS,
        "- A failed or refused call is an answer: never repeat the same call.",
    ]
    if asks:
        lines.append(f"- {', '.join(asks)} may need the user's approval.")
    # not for a model that writes files out: a 1.5B model then runs the command before changing anything
    if "bash" in names and not parts.writes_out:
        lines.append("- Verify changes with bash (run the tests).")
    if "todo_write" in names:
        lines.append("- For multi-step work keep a plan with todo_write.")
    if not parts.can_ask:
        lines.append("- No one can answer questions this run: decide and say what you assumed.")
    lines += ["", f"Workspace root: {parts.workspace} (paths are relative to it; outside it is refused)."]
    lines += folder_lines(parts)
    return with_blocks("\n".join(lines) + "\n", parts)
