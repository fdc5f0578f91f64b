"""What peers call Shiro's tools: Claude Code's tool names and Copilot's tools and tool sets.

A command file written for Claude Code (``allowed-tools: Read, Grep, Bash(git diff:*)``) or a Copilot
prompt file (``tools: ['codebase', 'editFiles']``), and a hook whose ``matcher`` names ``Edit|Write``,
mean these Shiro tools. Names of Shiro's own tools (and ``mcp__server__tool``) are used as they are.
"""

from __future__ import annotations

READ = ("read_file", "read_many_files", "list_dir", "glob", "grep")
EDIT = ("write_file", "edit_file", "multi_edit", "apply_patch", "move_file", "delete_file")
GIT = ("git_status", "git_diff", "git_log", "git_show", "git_blame")
WEB = ("web_fetch",)

CLAUDE_TOOLS: dict[str, tuple[str, ...]] = {
    "Read": ("read_file", "read_many_files"),
    "Write": ("write_file",),
    "Edit": ("edit_file", "apply_patch"),
    "MultiEdit": ("multi_edit",),
    "Glob": ("glob",),
    "Grep": ("grep",),
    "LS": ("list_dir",),
    "Bash": ("bash",),
    "TodoWrite": ("todo_write",),
    "WebFetch": WEB,
}
"""Claude Code's tool names (in ``allowed-tools`` and hook matchers) and the Shiro tools they mean."""

COPILOT_TOOLS: dict[str, tuple[str, ...]] = {
    **{name: READ for name in ("codebase", "search", "usages", "findTestFiles", "searchResults", "read")},
    **{name: READ for name in ("readFile", "fileSearch", "textSearch", "listDirectory")},
    **{name: EDIT for name in ("editFiles", "edit", "new", "createFile", "createDirectory")},
    **{name: ("bash",) for name in ("runCommands", "runInTerminal", "execute", "runTasks", "runTests")},
    "terminalLastCommand": ("bash",),
    "changes": GIT,
    "todos": ("todo_write",),
    "fetch": WEB,
}
"""Copilot's built-in tools and tool sets (a prompt file's ``tools``) and the Shiro tools they mean."""


def claude_name(tool: str) -> str | None:
    """The Claude Code name of a Shiro tool (what a hook matcher written for Claude Code names)."""
    return next((name for name, tools in CLAUDE_TOOLS.items() if tool in tools), None)
