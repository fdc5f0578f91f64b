"""The compact prompt for small context windows stays within its token budget with every tool."""

from __future__ import annotations

from pathlib import Path

from shiro_lsp.agent.agents import variant
from shiro_lsp.agent.context_window import tools_tokens
from shiro_lsp.agent.engine import plan_turn
from shiro_lsp.agent.prompt import PromptParts, build_compact_system_prompt, build_system_prompt
from shiro_lsp.agent.tools import ToolRegistry, builtin_registry
from shiro_lsp.agent.tools.session import memory_tools, todo_tool
from shiro_lsp.context.estimate import estimate_text
from shiro_lsp.state.memory import ProjectMemory
from shiro_lsp.state.todos import TaskList

COMPACT_BUDGET = 1_200
WORKSPACE = Path("/home/someone/projects/a-rather-long-project-name/services/api")


def every_tool(tmp_path: Path) -> ToolRegistry:
    registry = builtin_registry()
    registry.register(todo_tool(TaskList, lambda: None))
    for tool in memory_tools(ProjectMemory(tmp_path / "memory.json")):
        registry.register(tool)
    return registry


def prompt_tokens(tmp_path: Path, *, compact: bool, can_ask: bool = True) -> int:
    plan = plan_turn(variant("default", None), every_tool(tmp_path), compact=compact)
    build = build_compact_system_prompt if compact else build_system_prompt
    prompt = build(PromptParts(workspace=WORKSPACE, tools=plan.specs, can_ask=can_ask))
    return estimate_text(prompt) + tools_tokens(list(plan.specs))


def test_the_compact_prompt_fits_its_budget_with_every_tool(tmp_path: Path) -> None:
    for can_ask in (True, False):
        assert prompt_tokens(tmp_path, compact=True, can_ask=can_ask) <= COMPACT_BUDGET


def test_the_compact_prompt_is_far_smaller_than_the_full_one(tmp_path: Path) -> None:
    assert prompt_tokens(tmp_path, compact=True) * 2 < prompt_tokens(tmp_path, compact=False)


def test_compact_tools_keep_what_a_valid_call_needs(tmp_path: Path) -> None:
    registry = every_tool(tmp_path)
    plan = plan_turn(variant("default", None), registry, compact=True)
    assert {"read_file", "write_file", "edit_file", "bash", "todo_write", "grep"} <= set(plan.tools)
    for spec in plan.specs:
        full = registry.spec(spec.name)
        assert full is not None
        assert spec.parameters.get("required") == full.parameters.get("required")
        assert set(spec.parameters.get("properties", {})) == set(full.parameters.get("properties", {}))
        assert "description" not in str(spec.parameters)


def test_the_workspace_path_is_not_near_the_top(tmp_path: Path) -> None:
    plan = plan_turn(variant("default", None), every_tool(tmp_path))
    for build in (build_system_prompt, build_compact_system_prompt):
        prompt = build(PromptParts(workspace=WORKSPACE, tools=plan.specs))
        assert prompt.index(str(WORKSPACE)) > len(prompt) // 2
