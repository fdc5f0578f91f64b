"""The tool framework: what a tool is, how its input is checked, and the registry the engine asks.

A tool is a :class:`ToolSpec` plus an async handler. The spec is the one home of every fact about
the tool: what the model is offered (name, description, input schema, its line in the system
prompt), what the permission rules match (``subject``), whether it changes things (``mutating``),
whether the read-only variants may use it (``plan_safe``) and its default rule. The lists the
permission policy, the prompt and the headless front door use are derived from these specs.

A built-in tool's input is a :class:`ToolInput` (pydantic) model: its JSON Schema comes from
``model_json_schema()`` and its handler receives the validated model. A tool discovered at run
time (MCP) brings a JSON Schema instead (:func:`dynamic_tool`); its handler receives the checked
JSON object. Either way a bad input is one ``ToolError`` worded like the server's ``-32602``.

A handler reports a failure the model should read by raising :class:`ToolError`; the turn goes on
and the model sees the message. Anything else that escapes a handler is a bug.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails

from shiro_lsp.bounded import MAX_JSON_DEPTH, json_depth
from shiro_lsp.errors import ToolError, describe_problem, describe_problems, os_error_text
from shiro_lsp.fs.secrets import Redactor
from shiro_lsp.images.store import ImageStore, StoredImage

if TYPE_CHECKING:
    import jsonschema

JsonObject = dict[str, Any]

MAX_OUTPUT = 30_000
"""Characters any single tool result may carry; the rest is cut with ``... [truncated N chars]``."""

RuleDecision = Literal["allow", "ask", "deny"]
"""What a permission rule says about a call (the user's answer is ``agent.setup.Decision``)."""
ToolRules = dict[str, RuleDecision]
"""``{pattern: decision}`` matched against a call's subjects; the last matching pattern wins."""
RuleEntry = RuleDecision | ToolRules


def no_subject(_input: JsonObject) -> list[str]:
    return []


def field_subject(name: str) -> Callable[[JsonObject], list[str]]:
    """A subject extractor that reads one string field (``command``, ``path``, ``pattern``, ...)."""

    def subject(input: JsonObject) -> list[str]:
        value = input.get(name)
        return [value] if isinstance(value, str) else []

    return subject


class ToolInput(BaseModel):
    """A tool's input: JSON types taken strictly ("3" is not an integer), camelCase on the wire,
    unknown fields ignored (as a JSON Schema without ``additionalProperties`` allows)."""

    model_config = ConfigDict(strict=True, frozen=True, alias_generator=to_camel, extra="ignore")


_SUBSCHEMA_KEYS = frozenset(
    {"items", "anyOf", "allOf", "oneOf", "not", "additionalProperties", "prefixItems"}
)
_SCHEMA_MAPS = frozenset({"properties", "patternProperties"})
_DROPPED_KEYS = frozenset({"title", "$defs", "default"})  # see input_schema


def input_schema(model: type[BaseModel]) -> JsonObject:
    """The JSON Schema the model is offered for ``model``: pydantic's, made plain for every provider.

    References are inlined (no ``$defs``: some OpenAI-compatible servers do not follow them), the
    generated titles are dropped (they only repeat the names), and an optional field (``X | None``)
    is shown as ``X``. Defaults are dropped too: they ride on every request and a default is the
    handler's business (the input model fills it in); leaving a field out is how the model asks for
    it, and a description says the default where the model needs to know it ("default 2000").
    """
    schema = model.model_json_schema(by_alias=True)
    defs: dict[str, Any] = schema.get("$defs", {})

    def plain(node: Any) -> Any:
        if isinstance(node, list):
            return [plain(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            target = defs[str(node["$ref"]).rsplit("/", 1)[-1]]
            return plain({**target, **{k: v for k, v in node.items() if k != "$ref"}})
        out: JsonObject = {}
        for key, value in node.items():
            if key in _DROPPED_KEYS:
                continue
            if key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {name: plain(sub) for name, sub in value.items()}
            elif key in _SUBSCHEMA_KEYS:
                out[key] = plain(value)
            else:
                out[key] = value
        options = out.get("anyOf")
        if isinstance(options, list) and {"type": "null"} in options:
            rest = [option for option in options if option != {"type": "null"}]
            if len(rest) == 1:
                del out["anyOf"]
                out = {**rest[0], **out}
        return out

    result: JsonObject = plain(schema)
    return result


_EMPTY_SCHEMA: JsonObject = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class ToolSpec:
    """Everything Shiro knows about one tool, in one place.

    - ``parameters``: the JSON Schema the model is offered. For a built-in tool it is derived
      from ``input_model`` (pass one or the other, not both).
    - ``subject`` turns a call's input into the strings a permission pattern is matched against:
      the command for ``bash``, the path(s) for file tools, the pattern for ``glob``/``grep``, the
      ref for ``git_show``. A tool with no natural subject returns ``[]`` and only ``*`` rules match.
    - ``mutating``: it changes the workspace or project state or runs arbitrary code (refused in
      restricted mode; runs under the workspace reservation).
    - ``plan_safe``: offered to the read-only variants (``plan``, ``review``).
    - ``default_rule``: the permission rule when the config says nothing about the tool.
    - ``auto_approved``: never prompts, whatever the rules say (a deny rule still refuses it).
    - ``prompt_hint``: its line under "Tools available to you now" (``name: hint``); tools that
      share a hint (a family: ``files.READ_HINT``, ``files.CHANGE_HINT``, ``git.GIT_HINT``) are
      listed together on one line, where the first of them comes.
    - ``grant``: what an ``always`` answer grants, a pattern over the call's subjects (None: ``*``,
      or for bash the command's first word; web_fetch: the URL's host).
    - ``screen``: why a call must not run at all, decided before anyone is asked (web_fetch: a URL
      that holds a secret); None: the call goes on to the permission rules.
    """

    name: str
    description: str
    parameters: JsonObject = field(default_factory=dict)
    mutating: bool = False
    subject: Callable[[JsonObject], list[str]] = no_subject
    input_model: type[ToolInput] | None = None
    plan_safe: bool = False
    default_rule: RuleEntry = "ask"
    auto_approved: bool = False
    prompt_hint: str = ""
    grant: Callable[[JsonObject], str] | None = None
    screen: Callable[[JsonObject, Redactor], str | None] | None = None

    def __post_init__(self) -> None:
        if self.input_model is not None:
            if self.parameters:
                raise ValueError(f"tool {self.name!r}: give an input model or a JSON Schema, not both")
            object.__setattr__(self, "parameters", input_schema(self.input_model))
        elif not self.parameters:
            object.__setattr__(self, "parameters", dict(_EMPTY_SCHEMA))

    @cached_property
    def validator(self) -> Any:
        """The JSON Schema validator of a tool without an input model, built once (not per call)."""
        import jsonschema  # ~100 ms to import: paid on the first dynamic tool call, not at server start

        return jsonschema.Draft202012Validator(self.parameters)

    @property
    def asks(self) -> bool:
        """Whether a call asks the user when no rule or grant says otherwise."""
        return self.default_rule == "ask" and not self.auto_approved

    def to_openai(self) -> JsonObject:
        """The Chat Completions function-tool shape."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


class WriteRecorder(Protocol):
    """Told by a file tool, in the tool's own thread, right before and after it replaces a file.

    ``before_write`` gets the bytes and mode being replaced (None: no file yet) and the new bytes:
    the turn's checkpoint is on disk before the write, so nothing is read twice. ``after_write``
    gets the mode the file has now. ``rel`` is the workspace-relative posix path.
    """

    def before_write(self, rel: str, old: bytes | None, old_mode: int | None, new: bytes) -> None: ...

    def after_write(self, rel: str, mode: int) -> None: ...


@dataclass
class ToolContext:
    """What a running tool may use besides its input.

    ``on_output`` receives streamed chunks (bash stdout/stderr) as they arrive. Setting
    ``interrupt`` stops the running command only (the user's per-command interrupt): the tool
    then fails with the reference's "The user interrupted this command..." message and the turn
    goes on. Cancelling the task instead aborts the whole turn.
    """

    workspace: Path | Sequence[Path]
    """The session's root, or (multi-root) ``jail.Folders``: every folder, the session's root first."""
    on_output: Callable[[str], None] = field(default=lambda _chunk: None)
    interrupt: asyncio.Event = field(default_factory=asyncio.Event)
    call_id: str = ""
    redactor: Redactor = field(default_factory=Redactor)
    """The secrets policy's redactor: its ``values`` are the configured keys (kept out of bash's env)."""
    sandbox: str = "off"
    """How bash runs: ``off`` (unsandboxed), ``auto`` (bubblewrap when it works), ``required``."""
    sandbox_network: bool = False
    recorder: WriteRecorder | None = None
    """Set while a checkpoint watches this call (edit_file, multi_edit, write_file tell it)."""
    web_allow_hosts: tuple[str, ...] = ()
    """Hosts the user lets web_fetch reach at a non-public address (``shiro.webFetch.allowHosts``)."""
    images: ImageStore | None = None
    """Set when the model takes images: a tool may show it one (``read_file`` of an image)."""
    shown_images: list[StoredImage] = field(default_factory=list)
    """The images the call showed; its result carries them (``images.parts.TOOL_IMAGES``)."""


Handler = Callable[[Any, ToolContext], Awaitable[str]]
"""Receives the validated input model (a built-in tool) or the checked JSON object (a dynamic one)."""

InputT = TypeVar("InputT", bound=ToolInput)


@dataclass(frozen=True)
class Tool:
    spec: ToolSpec
    handler: Handler

    @property
    def name(self) -> str:
        return self.spec.name

    async def run(self, input: JsonObject, ctx: ToolContext) -> str:
        model = self.spec.input_model
        return await self.handler(model.model_validate(input) if model is not None else input, ctx)


def typed_tool(
    spec: ToolSpec, model: type[InputT], handler: Callable[[InputT, ToolContext], Awaitable[str]]
) -> Tool:
    """A built-in tool whose handler takes ``model`` (checked against ``spec.input_model``)."""
    if spec.input_model is not model:
        raise ValueError(f"tool {spec.name!r}: its handler takes {model.__name__}, its spec another input")
    return Tool(spec, handler)


def dynamic_tool(
    name: str,
    description: str,
    schema: JsonObject,
    handler: Callable[[JsonObject, ToolContext], Awaitable[str]],
    *,
    mutating: bool = True,
    plan_safe: bool = False,
    subject: Callable[[JsonObject], list[str]] = no_subject,
    prompt_hint: str = "",
) -> Tool:
    """A tool found at run time (an MCP server's) with a JSON Schema instead of an input model.

    Its effects are unknown, so by default it counts as mutating (refused in restricted mode,
    run under the reservation), is not offered to the read-only variants, and asks.
    """
    spec = ToolSpec(
        name=name,
        description=description,
        parameters=schema or dict(_EMPTY_SCHEMA),
        mutating=mutating,
        subject=subject,
        plan_safe=plan_safe,
        prompt_hint=prompt_hint,
    )
    return Tool(spec, handler)


def cap(text: str, limit: int = MAX_OUTPUT) -> str:
    """Cut a result to ``limit`` characters and say how much was dropped."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n... [truncated {len(text) - limit} chars]"


_JSON_TYPE_ERRORS = {
    "integer": "int_type",
    "number": "float_type",
    "string": "string_type",
    "boolean": "bool_type",
    "array": "list_type",
    "object": "dict_type",
    "null": "none_required",
}
_JSON_LIMIT_ERRORS = {
    "minimum": ("greater_than_equal", "ge"),
    "maximum": ("less_than_equal", "le"),
    "exclusiveMinimum": ("greater_than", "gt"),
    "exclusiveMaximum": ("less_than", "lt"),
    "minItems": ("too_short", "min_length"),
    "maxItems": ("too_long", "max_length"),
    "minLength": ("string_too_short", "min_length"),
    "maxLength": ("string_too_long", "max_length"),
}


def _as_problem(error: jsonschema.ValidationError) -> ErrorDetails:
    """A JSON Schema failure as the pydantic error it corresponds to, so both read the same."""
    loc = tuple(error.absolute_path)
    kind = error.validator
    value: Any = error.validator_value
    detail = ErrorDetails(type="value_error", loc=loc, msg=error.message, input=error.instance)
    if kind == "required":
        present = error.instance if isinstance(error.instance, dict) else {}
        missing = [name for name in value if name not in present]
        return ErrorDetails(
            type="missing", loc=(*loc, missing[0] if missing else str(value)), msg="", input=None
        )
    if kind == "type" and isinstance(value, str) and value in _JSON_TYPE_ERRORS:
        detail["type"] = _JSON_TYPE_ERRORS[value]
    elif kind in _JSON_LIMIT_ERRORS:
        detail["type"], key = _JSON_LIMIT_ERRORS[str(kind)]
        detail["ctx"] = {key: value}
    elif kind == "enum":
        detail["type"] = "enum"
        detail["ctx"] = {"expected": ", ".join(json.dumps(v) for v in value)}
    return detail


def validate_input(spec: ToolSpec, input: object) -> JsonObject:
    """Check ``input`` against the spec; raise a ToolError that names every problem."""
    if not isinstance(input, dict):
        raise ToolError(f"Invalid input for {spec.name}: expected a JSON object, got {type(input).__name__}")
    if spec.input_model is not None:
        try:
            spec.input_model.model_validate(input)
        except ValidationError as error:
            raise ToolError(f"Invalid input for {spec.name}: {describe_problems(error)}") from None
        return input
    errors = sorted(
        spec.validator.iter_errors(input), key=lambda e: (len(e.absolute_path), str(e.absolute_path))
    )
    if errors:
        problems = "; ".join(describe_problem(_as_problem(e)) for e in errors)
        raise ToolError(f"Invalid input for {spec.name}: {problems}")
    return input


def parse_arguments(spec: ToolSpec, raw: str | JsonObject | None) -> JsonObject:
    """Turn the model's argument text into a checked input object."""
    if raw is None or raw == "":
        value: object = {}
    elif isinstance(raw, str):
        if json_depth(raw) > MAX_JSON_DEPTH:
            raise ToolError(
                f"Invalid input for {spec.name}: the arguments nest deeper than {MAX_JSON_DEPTH} levels"
            )
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
        """Registered tools the read-only variants may use (their specs say ``plan_safe``)."""
        return [name for name, tool in self._tools.items() if tool.spec.plan_safe]

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
        return await self.run_parsed(name, parse_arguments(tool.spec, raw_input), tool.spec, ctx)

    async def run_parsed(self, name: str, input: JsonObject, spec: ToolSpec, ctx: ToolContext) -> str:
        """:meth:`run` of an input :func:`parse_arguments` already checked against ``spec`` (the
        engine checks a call before asking about it): not checked again unless the tool was
        registered anew meanwhile."""
        tool = self.get(name)
        if tool.spec is not spec:
            input = validate_input(tool.spec, input)
        try:
            return cap(await tool.run(input, ctx))
        except ToolError as exc:
            raise ToolError(cap(exc.message)) from exc
        except OSError as exc:
            # A filesystem refusal (permissions, a file where a directory should be) is news for
            # the model, not a crash.
            raise ToolError(f"{name} failed: {os_error_text(exc)}") from exc
