"""Shiro's built-in tools (spec §7.3) and the registry the turn engine asks.

``builtin_registry()`` returns a fresh registry holding every built-in tool; the session adds its
own tools (``session.py``: todo_write, remember, recall, forget) and any MCP or plugin tools with
``ToolRegistry.register``.
"""

from __future__ import annotations

from shiro_lsp.agent.tools.base import (
    MAX_OUTPUT,
    READ_ONLY_TOOLS,
    SESSION_TOOLS,
    JsonObject,
    Tool,
    ToolContext,
    ToolError,
    ToolRegistry,
    ToolSpec,
    cap,
    field_subject,
    parse_arguments,
    validate_input,
)
from shiro_lsp.agent.tools.files import FILE_TOOLS
from shiro_lsp.agent.tools.git import GIT_TOOLS
from shiro_lsp.agent.tools.jail import PathEscapes, resolve_in_workspace
from shiro_lsp.agent.tools.search import SEARCH_TOOLS
from shiro_lsp.agent.tools.shell import BASH, INTERRUPTED

BUILTIN_TOOLS: tuple[Tool, ...] = (*FILE_TOOLS, *SEARCH_TOOLS, BASH, *GIT_TOOLS)


def builtin_registry() -> ToolRegistry:
    return ToolRegistry(BUILTIN_TOOLS)


__all__ = [
    "BUILTIN_TOOLS",
    "INTERRUPTED",
    "MAX_OUTPUT",
    "READ_ONLY_TOOLS",
    "SESSION_TOOLS",
    "JsonObject",
    "PathEscapes",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "ToolSpec",
    "builtin_registry",
    "cap",
    "field_subject",
    "parse_arguments",
    "resolve_in_workspace",
    "validate_input",
]
