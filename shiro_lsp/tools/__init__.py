"""Shiro's built-in tools (spec §7.3) and the registry the turn engine asks.

``builtin_registry()`` returns a fresh registry holding every built-in tool; the session adds its
own tools (``session.py``: todo_write, remember, recall, forget) and any MCP or plugin tools with
``ToolRegistry.register`` (a run-time tool with only a JSON Schema: ``dynamic_tool``). The engine
runs a call with ``await registry.run(name, raw_args, ctx)``: the arguments are parsed and
validated against the tool's input model (or schema), the result is capped at 30,000 characters,
and every failure the model should read is a ``ToolError``.

Every fact about a tool lives on its ``ToolSpec``; the name lists below are derived from the specs.
To add a built-in tool: write its input model, handler and spec in ``<area>.py`` and add it to
``BUILTIN_TOOLS``.

What the model sees:

- ``read_file`` / ``read_many_files``: lines numbered like ``cat -n`` (the 1-based number
  right-aligned in 6 columns, a tab, the line); at most 2000 lines per read, lines cut at 2000
  chars, and a closing note ``... [more lines follow; continue with offset=N]`` when there is more.
  Binary files (a NUL in the first 8 KB) are refused.
- ``write_file`` / ``edit_file`` / ``multi_edit``: exact-string edits, all-or-nothing for
  ``multi_edit``; CRLF files keep their line endings.
- ``apply_patch`` (a unified diff over several files, all or nothing), ``move_file``,
  ``delete_file``: their plans (bytes before and after) feed the approval preview and the
  turn's checkpoint (``checkpoints/recorder.py``).
- ``list_dir`` (≤ 300 entries), ``glob`` (≤ 200 paths by default), ``grep`` (≤ 200 hits as
  ``path:line: text``; ripgrep when ``rg`` is on PATH, else Python ``re``): ``.gitignore`` and
  ``.shiroignore`` are honoured unless ``includeIgnored``; grep never searches secrets files.
- ``bash``: ``exit: N`` then ``stdout:`` / ``stderr:`` sections, head and tail kept when long.
- ``git_status`` / ``git_diff`` / ``git_log`` / ``git_show`` / ``git_blame``: git without a shell.
- ``web_fetch``: a web page as Markdown (text and JSON as they are), 25,000 characters a call with an
  offset to read on; public addresses only, every redirect checked (``shiro_lsp/web/``).

Every path is jailed to the workspace (``Path escapes workspace: <p>``), symlinks included.
"""

from __future__ import annotations

from shiro_lsp.tools.base import (
    MAX_OUTPUT,
    JsonObject,
    RuleDecision,
    RuleEntry,
    Tool,
    ToolContext,
    ToolInput,
    ToolRegistry,
    ToolRules,
    ToolSpec,
    cap,
    dynamic_tool,
    field_subject,
    input_schema,
    parse_arguments,
    typed_tool,
    validate_input,
)
from shiro_lsp.tools.edits import EDIT_TOOLS
from shiro_lsp.tools.files import FILE_TOOLS
from shiro_lsp.tools.git import GIT_TOOLS
from shiro_lsp.tools.search import SEARCH_TOOLS
from shiro_lsp.tools.session import SESSION_SPECS
from shiro_lsp.tools.shell import BASH, INTERRUPTED
from shiro_lsp.tools.web import WEB_FETCH

BUILTIN_TOOLS: tuple[Tool, ...] = (*FILE_TOOLS, *EDIT_TOOLS, *SEARCH_TOOLS, BASH, *GIT_TOOLS, WEB_FETCH)

KNOWN_SPECS: dict[str, ToolSpec] = {
    spec.name: spec for spec in (*(t.spec for t in BUILTIN_TOOLS), *SESSION_SPECS)
}
"""Every tool Shiro itself defines, by name: the built-ins and the session's tools."""

SESSION_TOOLS: tuple[str, ...] = tuple(spec.name for spec in SESSION_SPECS)
READ_ONLY_TOOLS: frozenset[str] = frozenset(name for name, spec in KNOWN_SPECS.items() if spec.plan_safe)
"""The tools the read-only variants (``plan``, ``review``) are offered."""


def builtin_registry() -> ToolRegistry:
    return ToolRegistry(BUILTIN_TOOLS)


__all__ = [
    "BUILTIN_TOOLS",
    "INTERRUPTED",
    "KNOWN_SPECS",
    "MAX_OUTPUT",
    "READ_ONLY_TOOLS",
    "SESSION_TOOLS",
    "JsonObject",
    "RuleDecision",
    "RuleEntry",
    "Tool",
    "ToolContext",
    "ToolInput",
    "ToolRegistry",
    "ToolRules",
    "ToolSpec",
    "builtin_registry",
    "cap",
    "dynamic_tool",
    "field_subject",
    "input_schema",
    "parse_arguments",
    "typed_tool",
    "validate_input",
]
