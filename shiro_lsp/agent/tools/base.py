"""The tool framework: what a tool is, how its input is checked, and the registry the engine asks.

A tool is a :class:`ToolSpec` (what the model is offered and what the permission rules match) plus
an async handler. A handler reports a failure the model should read by raising :class:`ToolError`;
the turn goes on and the model sees the message. Anything else that escapes a handler is a bug.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shiro_lsp.agent.tools.secrets import Redactor

if TYPE_CHECKING:
    import jsonschema

JsonObject = dict[str, Any]

MAX_OUTPUT = 30_000
"""Characters any single tool result may carry; the rest is cut with ``... [truncated N chars]``."""

SESSION_TOOLS: tuple[str, ...] = ("todo_write", "remember", "recall", "forget")
"""Tools that belong to the session (task list, project memory); their specs live in ``session.py``."""

READ_ONLY_TOOLS: frozenset[str] = frozenset(
    {
        "read_file",
        "read_many_files",
        "glob",
        "grep",
        "list_dir",
        "git_status",
        "git_diff",
        "git_log",
        "git_show",
        "git_blame",
        "task",
        "todo_write",
        "remember",
        "recall",
        "skill",
    }
)
"""The allow-list offered to the read-only agent variants (``plan``, ``review``), spec §7.2."""


class ToolError(Exception):
    """A failure the model reads as the tool's result; the turn continues."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def no_subject(_input: JsonObject) -> list[str]:
    return []


def field_subject(name: str) -> Callable[[JsonObject], list[str]]:
    """A subject extractor that reads one string field (``command``, ``path``, ``pattern``, ...)."""

    def subject(input: JsonObject) -> list[str]:
        value = input.get(name)
        return [value] if isinstance(value, str) else []

    return subject


@dataclass(frozen=True)
class ToolSpec:
    """What the model is offered, and what the permission rules match.

    ``subject`` turns a call's input into the strings a permission pattern is matched against:
    the command for ``bash``, the path(s) for file tools, the pattern for ``glob``/``grep``, the
    ref for ``git_show``. A tool with no natural subject returns ``[]`` and only ``*`` rules match.
    ``mutating`` marks tools that change the workspace or run arbitrary code.
    """

    name: str
    description: str
    parameters: JsonObject
    mutating: bool = False
    subject: Callable[[JsonObject], list[str]] = no_subject

    def to_openai(self) -> JsonObject:
        """The Chat Completions function-tool shape."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass
class ToolContext:
    """What a running tool may use besides its input.

    ``on_output`` receives streamed chunks (bash stdout/stderr) as they arrive. Setting
    ``interrupt`` stops the running command only (the user's per-command interrupt): the tool
    then fails with the reference's "The user interrupted this command..." message and the turn
    goes on. Cancelling the task instead aborts the whole turn.
    """

    workspace: Path
    on_output: Callable[[str], None] = field(default=lambda _chunk: None)
    interrupt: asyncio.Event = field(default_factory=asyncio.Event)
    call_id: str = ""
    redactor: Redactor = field(default_factory=Redactor)
    """The secrets policy's redactor: its ``values`` are the configured keys (kept out of bash's env)."""
    sandbox: str = "off"
    """How bash runs: ``off`` (unsandboxed), ``auto`` (bubblewrap when it works), ``required``."""
    sandbox_network: bool = False


Handler = Callable[[JsonObject, ToolContext], Awaitable[str]]


@dataclass(frozen=True)
class Tool:
    spec: ToolSpec
    handler: Handler

    @property
    def name(self) -> str:
        return self.spec.name

    async def run(self, input: JsonObject, ctx: ToolContext) -> str:
        return await self.handler(input, ctx)


def cap(text: str, limit: int = MAX_OUTPUT) -> str:
    """Cut a result to ``limit`` characters and say how much was dropped."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n... [truncated {len(text) - limit} chars]"


def _location(path: Iterable[Any]) -> str:
    parts = [str(p) for p in path]
    return ".".join(parts)


def _describe(error: jsonschema.ValidationError) -> str:
    where = _location(error.absolute_path)
    named = f"'{where}'" if where else "the input"
    kind = error.validator
    value: Any = error.validator_value
    if kind == "required":
        instance = error.instance if isinstance(error.instance, dict) else {}
        missing = [name for name in value if name not in instance]
        name = missing[0] if missing else str(value)
        full = f"{where}.{name}" if where else name
        return f"'{full}' is required"
    if kind == "type":
        wanted = " or ".join(value) if isinstance(value, list) else str(value)
        return f"{named} must be of type {wanted}"
    if kind == "minimum":
        return f"{named} must be at least {value}"
    if kind == "maximum":
        return f"{named} must be at most {value}"
    if kind == "minItems":
        return f"{named} must have at least {value} item(s)"
    if kind == "maxItems":
        return f"{named} must have at most {value} item(s)"
    if kind == "enum":
        options = ", ".join(json.dumps(v) for v in value)
        return f"{named} must be one of {options}"
    return f"{named}: {error.message}"


def validate_input(spec: ToolSpec, input: object) -> JsonObject:
    """Check ``input`` against the spec's JSON Schema; raise a ToolError that names the problem."""
    if not isinstance(input, dict):
        raise ToolError(f"Invalid input for {spec.name}: expected a JSON object, got {type(input).__name__}")
    import jsonschema  # ~100 ms to import: paid on the first tool call, not at server start

    validator = jsonschema.Draft202012Validator(spec.parameters)
    errors = sorted(validator.iter_errors(input), key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    if errors:
        raise ToolError(f"Invalid input for {spec.name}: {_describe(errors[0])}")
    return input


def parse_arguments(spec: ToolSpec, raw: str | JsonObject | None) -> JsonObject:
    """Turn the model's argument text into a checked input object."""
    if raw is None or raw == "":
        value: object = {}
    elif isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ToolError(
                f"Invalid input for {spec.name}: the arguments are not valid JSON ({exc.msg})"
            ) from exc
    else:
        value = raw
    return validate_input(spec, value)


class ToolRegistry:
    """The tools a session can offer. Extra tools (session, MCP, plugins) register at runtime."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool, *, replace: bool = False) -> None:
        if tool.name in self._tools and not replace:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool:
        tool = self._tools.get(name)
        if tool is None:
            available = ", ".join(sorted(self._tools))
            raise ToolError(f'Unknown tool "{name}". Available: {available}')
        return tool

    def spec(self, name: str) -> ToolSpec | None:
        tool = self._tools.get(name)
        return tool.spec if tool else None

    def specs(self, names: Iterable[str] | None = None) -> list[ToolSpec]:
        """Specs in registration order, limited to ``names`` when given (unknown names skipped)."""
        if names is None:
            return [t.spec for t in self._tools.values()]
        wanted = set(names)
        return [t.spec for t in self._tools.values() if t.name in wanted]

    def read_only(self) -> list[str]:
        """Registered tools the read-only variants may use (spec §7.2 allow-list)."""
        return [name for name in self._tools if name in READ_ONLY_TOOLS]

    def is_mutating(self, name: str) -> bool:
        tool = self._tools.get(name)
        return True if tool is None else tool.spec.mutating

    def subjects(self, name: str, input: JsonObject) -> list[str] | None:
        """The permission subjects of a call, or None when the tool is not registered."""
        tool = self._tools.get(name)
        return tool.spec.subject(input) if tool else None

    async def run(self, name: str, raw_input: str | JsonObject | None, ctx: ToolContext) -> str:
        """Validate and run one call; the result is capped at :data:`MAX_OUTPUT`."""
        tool = self.get(name)
        input = parse_arguments(tool.spec, raw_input)
        try:
            return cap(await tool.run(input, ctx))
        except ToolError as exc:
            raise ToolError(cap(exc.message)) from exc
        except OSError as exc:
            # A filesystem refusal (permissions, a file where a directory should be) is news for
            # the model, not a crash.
            detail = exc.strerror or str(exc)
            where = f": {exc.filename}" if exc.filename else ""
            raise ToolError(f"{name} failed: {detail}{where}") from exc
