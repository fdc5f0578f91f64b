"""One home per tool: the facts on each ToolSpec drive the schema, the policy, the prompt and the plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from shiro_lsp.agent.agents import variant
from shiro_lsp.agent.permissions import PermissionPolicy
from shiro_lsp.agent.prompt import how_to_work, tools_section
from shiro_lsp.agent.setup import plan_turn
from shiro_lsp.errors import ToolError
from shiro_lsp.headless import HEADLESS_DENIAL
from shiro_lsp.tools import (
    KNOWN_SPECS,
    JsonObject,
    ToolContext,
    ToolInput,
    ToolSpec,
    builtin_registry,
    dynamic_tool,
    typed_tool,
)


def _walk(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [d for item in node for d in _walk(item)]
    if not isinstance(node, dict):
        return []
    return [node, *(d for value in node.values() for d in _walk(value))]


@pytest.mark.parametrize("name", sorted(KNOWN_SPECS))
def test_every_schema_is_plain_json_schema_a_provider_can_read(name: str) -> None:
    schema = KNOWN_SPECS[name].parameters
    assert schema["type"] == "object"
    for node in _walk(schema):
        assert "$ref" not in node and "$defs" not in node, name
        assert not ("title" in node and isinstance(node["title"], str)), name
        assert {"type": "null"} not in node.get("anyOf", []), name
    for prop in schema["properties"]:
        assert prop == prop[:1].lower() + prop[1:] and "_" not in prop, f"{name}.{prop} is not camelCase"


def test_schemas_keep_descriptions_bounds_and_required_fields() -> None:
    read_many = KNOWN_SPECS["read_many_files"].parameters
    assert read_many["required"] == ["files"]
    files = read_many["properties"]["files"]
    assert (files["type"], files["minItems"], files["maxItems"]) == ("array", 1, 20)
    assert files["description"] == "The files to read, at most 20"
    item = files["items"]
    assert item["type"] == "object" and item["required"] == ["path"]
    assert item["properties"]["path"] == {
        "type": "string",
        "description": "File path relative to the workspace root",
    }
    assert item["properties"]["offset"]["minimum"] == 1

    blame = KNOWN_SPECS["git_blame"].parameters
    assert blame["required"] == ["path"]
    assert blame["properties"]["startLine"] == {"type": "integer", "minimum": 1}

    grep = KNOWN_SPECS["grep"].parameters["properties"]["include"]
    assert grep["type"] == "string" and "default" not in grep

    edit = KNOWN_SPECS["multi_edit"].parameters["properties"]["edits"]["items"]
    assert sorted(edit["required"]) == ["newString", "oldString"]
    assert KNOWN_SPECS["remember"].parameters["properties"]["kind"]["enum"] == [
        "fact",
        "decision",
        "gotcha",
        "command",
    ]


def test_spec_facts_are_the_policy_defaults() -> None:
    policy = PermissionPolicy()
    for name, spec in KNOWN_SPECS.items():
        assert policy.entry_for(name) == spec.default_rule, name
        assert policy.is_mutating(name) == spec.mutating, name
    assert policy.is_mutating("mcp__unknown__tool")
    assert policy.entry_for("mcp__unknown__tool") == "ask"


def test_an_auto_approved_tool_does_not_ask_even_when_a_rule_says_ask() -> None:
    policy = PermissionPolicy({"todo_write": "ask", "remember": "deny"})
    assert policy.check("todo_write", {"todos": []}).decision == "allow"
    assert policy.check("remember", {"kind": "fact", "text": "x"}).decision == "deny"


class _EchoInput(ToolInput):
    text: str = Field(description="What to echo")
    times: int = Field(1, ge=1, le=3)


async def _echo(input: _EchoInput, ctx: ToolContext) -> str:
    return " ".join([input.text] * input.times)


def test_a_new_typed_tool_brings_its_own_facts_everywhere() -> None:
    spec = ToolSpec(
        name="echo",
        description="Echo text",
        input_model=_EchoInput,
        plan_safe=True,
        default_rule="allow",
        prompt_hint="say something back.",
    )
    registry = builtin_registry()
    registry.register(typed_tool(spec, _EchoInput, _echo))

    plan = plan_turn(variant("plan"), registry)
    assert "echo" in plan.tools and "write_file" not in plan.tools
    assert spec in plan.specs
    assert "- echo: say something back." in tools_section(plan.specs)
    assert PermissionPolicy(registry=registry).check("echo", {"text": "hi"}).decision == "allow"
    assert spec.parameters["required"] == ["text"]
    assert spec.parameters["properties"]["text"]["description"] == "What to echo"


async def test_a_typed_handler_receives_its_model_with_defaults(workspace: Path) -> None:
    spec = ToolSpec(name="echo", description="", input_model=_EchoInput)
    registry = builtin_registry()
    registry.register(typed_tool(spec, _EchoInput, _echo))
    ctx = ToolContext(workspace=workspace)
    assert await registry.run("echo", '{"text": "hi"}', ctx) == "hi"
    assert await registry.run("echo", {"text": "hi", "times": 3}, ctx) == "hi hi hi"
    with pytest.raises(
        ToolError, match=r"^Invalid input for echo: 'text' is required; 'times' must be at most 3$"
    ):
        await registry.run("echo", {"times": 4}, ctx)


def test_a_spec_cannot_have_two_schemas_and_a_handler_must_match_its_model() -> None:
    with pytest.raises(ValueError, match="not both"):
        ToolSpec(name="x", description="", parameters={"type": "object"}, input_model=_EchoInput)

    class Other(ToolInput):
        pass

    async def other(input: Other, ctx: ToolContext) -> str:
        return ""

    with pytest.raises(ValueError, match="its handler takes Other"):
        typed_tool(ToolSpec(name="x", description="", input_model=_EchoInput), Other, other)


SCHEMA: JsonObject = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "Issue title"},
        "labels": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "priority": {"type": "integer", "minimum": 1},
        "state": {"type": "string", "enum": ["open", "closed"]},
    },
    "required": ["title"],
}


async def _create(input: JsonObject, ctx: ToolContext) -> str:
    return f"created {input['title']}"


async def test_a_dynamic_tool_runs_with_its_json_schema_and_fails_closed(workspace: Path) -> None:
    tool = dynamic_tool("mcp__github__create_issue", "Create an issue", SCHEMA, _create)
    registry = builtin_registry()
    registry.register(tool)
    ctx = ToolContext(workspace=workspace)
    assert await registry.run(tool.name, {"title": "bug"}, ctx) == "created bug"

    # unknown effects: refused in restricted mode, asks, not offered to plan/review
    policy = PermissionPolicy(trusted=False, registry=registry)
    assert policy.check(tool.name, {"title": "x"}).decision == "deny"
    assert PermissionPolicy(registry=registry).check(tool.name, {"title": "x"}).decision == "ask"
    assert tool.name not in plan_turn(variant("review"), registry).tools
    assert tool.name in plan_turn(variant("default"), registry).tools
    assert tool.name in how_to_work([tool.spec], can_ask=True)[2]


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({}, "'title' is required"),
        ({"title": 3}, "'title' must be of type string"),
        ({"title": "x", "priority": 0}, "'priority' must be at least 1"),
        ({"title": "x", "labels": ["a", "b", "c"]}, "'labels' must have at most 2 item(s)"),
        ({"title": "x", "state": "merged"}, "'state' must be one of"),
    ],
)
async def test_dynamic_and_typed_tools_word_a_bad_input_alike(
    workspace: Path, arguments: JsonObject, problem: str
) -> None:
    class Issue(ToolInput):
        title: str
        labels: list[str] = Field(default_factory=list, max_length=2)
        priority: int = Field(1, ge=1)
        state: str = "open"

    async def typed(input: Issue, ctx: ToolContext) -> str:
        return ""

    registry = builtin_registry()
    registry.register(dynamic_tool("dyn", "", SCHEMA, _create))
    registry.register(typed_tool(ToolSpec(name="typed", description="", input_model=Issue), Issue, typed))
    ctx = ToolContext(workspace=workspace)
    with pytest.raises(ToolError) as dynamic_error:
        await registry.run("dyn", arguments, ctx)
    assert dynamic_error.value.message.startswith(f"Invalid input for dyn: {problem}")
    if "state" not in arguments:  # the typed model has no enum for state
        with pytest.raises(ToolError) as typed_error:
            await registry.run("typed", arguments, ctx)
        assert typed_error.value.message == dynamic_error.value.message.replace("dyn", "typed", 1)


def test_the_server_keeps_pydantic_wording_through_the_same_formatter() -> None:
    from pygls.exceptions import JsonRpcException

    from shiro_lsp.server.app import parse

    class Params(BaseModel):
        limit: int = Field(ge=1)

    with pytest.raises(JsonRpcException) as missing:
        parse(Params, {}, "shiro/x")
    assert missing.value.message == "Invalid params for shiro/x: limit: Field required"
    with pytest.raises(JsonRpcException) as small:
        parse(Params, {"limit": 0}, "shiro/x")
    assert (
        small.value.message == "Invalid params for shiro/x: limit: Input should be greater than or equal to 1"
    )
    with pytest.raises(JsonRpcException) as whole:
        parse(Params, [1], "shiro/x")
    assert whole.value.message.startswith("Invalid params for shiro/x: params: Input should be")


def test_the_headless_denial_names_every_tool_that_would_ask() -> None:
    asking = [name for name, spec in KNOWN_SPECS.items() if spec.asks]
    assert asking == [
        "write_file",
        "edit_file",
        "multi_edit",
        "apply_patch",
        "move_file",
        "delete_file",
        "bash",
        "web_fetch",
    ]
    assert HEADLESS_DENIAL.startswith(f"shiro: headless denies {', '.join(asking)} and mcp tools")


@pytest.mark.parametrize("name", sorted(KNOWN_SPECS))
def test_schemas_carry_no_defaults_the_handler_fills_them_in(name: str) -> None:
    """A default rides on every request and says nothing the model needs: leaving a field out is
    how it asks for the default (the input model fills it in; descriptions name it where it matters)."""
    for node in _walk(KNOWN_SPECS[name].parameters):
        assert "default" not in node, name


async def test_an_input_checked_against_a_spec_is_checked_again_only_when_the_tool_changed(
    workspace: Path,
) -> None:
    """The engine checks a call's input before its permission and approval, then runs it with
    ``run_parsed``: not a second schema check per call, unless the tool was registered anew (an
    MCP server's new schema) in between."""

    async def handler(input: JsonObject, ctx: ToolContext) -> str:
        return str(input["n"])

    def tool(maximum: int) -> Any:
        schema = {"type": "object", "properties": {"n": {"type": "integer", "maximum": maximum}}}
        return dynamic_tool("mcp__kit__count", "", schema, handler)

    class CountingValidator:
        def __init__(self, real: Any) -> None:
            self.real, self.checks = real, 0

        def iter_errors(self, instance: object) -> Any:
            self.checks += 1
            return self.real.iter_errors(instance)

    registry = builtin_registry()
    registry.register(tool(10))
    spec = registry.get("mcp__kit__count").spec
    counting = CountingValidator(spec.validator)
    spec.__dict__["validator"] = counting  # the spec's cached validator, seen through
    ctx = ToolContext(workspace=workspace)
    assert await registry.run_parsed("mcp__kit__count", {"n": 5}, spec, ctx) == "5"
    assert counting.checks == 0
    assert await registry.run("mcp__kit__count", {"n": 5}, ctx) == "5"
    assert counting.checks == 1
    registry.register(tool(3), replace=True)
    with pytest.raises(ToolError, match="must be at most 3"):
        await registry.run_parsed("mcp__kit__count", {"n": 5}, spec, ctx)
