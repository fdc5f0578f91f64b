"""The registry: validation messages, unknown tools, runtime registration, caps, the read-only list."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiro_lsp.errors import ToolError
from shiro_lsp.tools import (
    MAX_OUTPUT,
    READ_ONLY_TOOLS,
    SESSION_TOOLS,
    Tool,
    ToolContext,
    ToolRegistry,
    ToolSpec,
    builtin_registry,
    cap,
)
from tool_helpers import RunTool


async def test_missing_field_names_the_field(run: RunTool) -> None:
    with pytest.raises(ToolError, match=r"^Invalid input for read_file: 'path' is required$"):
        await run("read_file", {})


async def test_wrong_type_names_field_and_type(run: RunTool) -> None:
    with pytest.raises(ToolError, match=r"Invalid input for read_file: 'offset' must be of type integer"):
        await run("read_file", {"path": "a.txt", "offset": "the top"})


async def test_line_numbers_a_model_gets_slightly_wrong_are_read_as_meant(
    run: RunTool, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\nthree\n")
    whole = await run("read_file", {"path": "a.txt"})
    assert await run("read_file", {"path": "a.txt", "offset": 0}) == whole  # counted from 0: the top
    assert await run("read_file", {"path": "a.txt", "offset": 1, "limit": 0}) == whole  # no limit given
    assert (await run("read_file", {"path": "./a.txt", "offset": "2", "limit": "1"})).startswith(
        "     2\ttwo"
    )
    assert await run("read_file", {"path": str(workspace / "a.txt")}) == whole
    many = await run("read_many_files", {"files": [{"path": "a.txt", "offset": 0}]})
    assert many.endswith(whole)
    with pytest.raises(ToolError, match=r"'offset' must be at least 0"):
        await run("read_file", {"path": "a.txt", "offset": -2})


async def test_out_of_range_values_are_refused(run: RunTool) -> None:
    with pytest.raises(ToolError, match=r"'timeout' must be at least 1000"):
        await run("bash", {"command": "true", "timeout": 5})
    with pytest.raises(ToolError, match=r"'files' must have at most 20 item"):
        await run("read_many_files", {"files": [{"path": "a"}] * 21})


async def test_nested_required_field_is_located(run: RunTool) -> None:
    with pytest.raises(ToolError, match=r"'edits.0.newString' is required"):
        await run("multi_edit", {"path": "a.txt", "edits": [{"oldString": "a"}]})


async def test_invalid_json_arguments(run: RunTool) -> None:
    with pytest.raises(ToolError, match=r"Invalid input for read_file: the arguments are not valid JSON"):
        await run("read_file", '{"path": ')


async def test_arguments_must_be_an_object(run: RunTool) -> None:
    with pytest.raises(ToolError, match=r"expected a JSON object, got list"):
        await run("read_file", "[1, 2]")


async def test_json_text_arguments_are_accepted(run: RunTool, workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    assert "hello" in await run("read_file", '{"path": "a.txt"}')


def test_unknown_tool_lists_what_exists() -> None:
    registry = builtin_registry()
    with pytest.raises(ToolError) as caught:
        registry.get("rm_everything")
    assert caught.value.message.startswith(
        'Unknown tool "rm_everything". Available: apply_patch, bash, delete_file, edit_file, '
    )


async def test_tools_registered_at_runtime_run_like_builtins(workspace: Path) -> None:
    async def echo(input: dict[str, object], ctx: ToolContext) -> str:
        return f"echo {input['text']} in {ctx.workspace.name}"

    spec = ToolSpec("mcp__demo__echo", "Echo", {"type": "object", "properties": {"text": {"type": "string"}}})
    registry = builtin_registry()
    registry.register(Tool(spec, echo))
    result = await registry.run("mcp__demo__echo", {"text": "hi"}, ToolContext(workspace=workspace))
    assert result == "echo hi in ws"
    assert registry.specs(["mcp__demo__echo", "nope"]) == [spec]
    with pytest.raises(ValueError, match=r"already registered"):
        registry.register(Tool(spec, echo))


async def test_results_are_capped_with_the_reference_marker(workspace: Path) -> None:
    async def loud(input: dict[str, object], ctx: ToolContext) -> str:
        return "x" * (MAX_OUTPUT + 123)

    registry = ToolRegistry([Tool(ToolSpec("loud", "", {"type": "object"}), loud)])
    result = await registry.run("loud", {}, ToolContext(workspace=workspace))
    assert result.endswith("\n... [truncated 123 chars]")
    assert len(result) == MAX_OUTPUT + len("\n... [truncated 123 chars]")
    assert cap("short") == "short"


def test_read_only_list_holds_no_mutating_builtin() -> None:
    registry = builtin_registry()
    read_only = registry.read_only()
    assert set(read_only) == {
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
        "web_fetch",
    }
    assert not any(registry.is_mutating(name) for name in read_only)
    assert {"write_file", "edit_file", "multi_edit", "bash"} <= {
        s.name for s in registry.specs() if s.mutating
    }
    assert {"todo_write", "remember", "recall"} <= READ_ONLY_TOOLS
    assert SESSION_TOOLS == ("todo_write", "remember", "recall", "forget")


def test_subjects_follow_the_tool() -> None:
    registry = builtin_registry()
    assert registry.subjects("bash", {"command": "ls -la"}) == ["ls -la"]
    assert registry.subjects("read_many_files", {"files": [{"path": "a"}, {"path": "b"}]}) == ["a", "b"]
    assert registry.subjects("glob", {"pattern": "**/*.py"}) == ["**/*.py"]
    assert registry.subjects("git_show", {"ref": "HEAD~1"}) == ["HEAD~1"]
    assert registry.subjects("git_status", {}) == []
    assert registry.subjects("not_registered", {}) is None


def test_specs_render_as_openai_function_tools() -> None:
    spec = builtin_registry().get("read_file").spec
    rendered = spec.to_openai()
    assert rendered["type"] == "function"
    assert rendered["function"]["name"] == "read_file"
    assert rendered["function"]["parameters"]["required"] == ["path"]
