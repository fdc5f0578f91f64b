"""The compact prompt for small context windows stays within its token budget with every tool."""

from __future__ import annotations

import json
from pathlib import Path

from bench.bench_prompt import NEW_CAPABILITIES
from shiro_lsp.adapt.profiles import COMPACT, FULL
from shiro_lsp.adapt.prompts import COMPACT_DROPPED_PARAMETERS, PromptParts, build_compact_system_prompt
from shiro_lsp.agent.agents import variant
from shiro_lsp.agent.context_window import tools_tokens
from shiro_lsp.agent.prompt import build_system_prompt, tools_section
from shiro_lsp.agent.setup import plan_turn
from shiro_lsp.context.estimate import estimate_text
from shiro_lsp.state.memory import ProjectMemory
from shiro_lsp.state.todos import TaskList
from shiro_lsp.tools import ToolRegistry, ToolSpec, builtin_registry
from shiro_lsp.tools.session import memory_tools, todo_tool

COMPACT_BUDGET = 1_200
WORKSPACE = Path("/home/someone/projects/a-rather-long-project-name/services/api")


def every_tool(tmp_path: Path) -> ToolRegistry:
    registry = builtin_registry()
    registry.register(todo_tool(TaskList, lambda: None))
    for tool in memory_tools(ProjectMemory(tmp_path / "memory.json")):
        registry.register(tool)
    return registry


def prompt_tokens(tmp_path: Path, *, compact: bool, can_ask: bool = True) -> int:
    profile = COMPACT if compact else FULL  # every tool described: calls travel natively
    plan = plan_turn(variant("default", None), every_tool(tmp_path), profile=profile, calls="native")
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
    plan = plan_turn(variant("default", None), registry, profile=COMPACT, calls="native")
    assert {"read_file", "write_file", "edit_file", "bash", "todo_write", "grep"} <= set(plan.tools)
    for spec in plan.specs:
        full = registry.spec(spec.name)
        assert full is not None
        assert spec.parameters.get("required") == full.parameters.get("required")
        kept, every = set(spec.parameters.get("properties", {})), set(full.parameters.get("properties", {}))
        assert kept <= every and every - kept <= COMPACT_DROPPED_PARAMETERS  # only optional ones dropped
        assert "description" not in str(spec.parameters)


def test_the_workspace_path_is_not_near_the_top(tmp_path: Path) -> None:
    plan = plan_turn(variant("default", None), every_tool(tmp_path))
    for build in (build_system_prompt, build_compact_system_prompt):
        prompt = build(PromptParts(workspace=WORKSPACE, tools=plan.specs))
        assert prompt.index(str(WORKSPACE)) > len(prompt) // 2


RECORDING = (
    Path(__file__).resolve().parents[2] / "fixtures/realmodel/qwen2.5-coder-1.5b-instruct-q4_k_m.wire.jsonl"
)


def test_the_full_prompt_stays_within_five_percent_of_the_recorded_one(tmp_path: Path) -> None:
    """The prompt recorded against llama.cpp offered 18 tools; every tool since then must pay its way."""
    body = json.loads(RECORDING.read_text(encoding="utf-8").splitlines()[0])["body"]
    recorded_tools = [t["function"] for t in body["tools"]]
    recorded = estimate_text(body["messages"][0]["content"]) + estimate_text(json.dumps(recorded_tools))
    plan = plan_turn(variant("default", None), every_tool(tmp_path))
    assert len(plan.specs) > len(recorded_tools)

    def tokens(specs: list[ToolSpec]) -> int:
        parts = PromptParts(workspace=Path("/home/user/project"), tools=specs, can_ask=False)
        return estimate_text(build_system_prompt(parts)) + tools_tokens(specs)

    every = tokens(list(plan.specs))
    without_new = tokens([spec for spec in plan.specs if spec.name not in NEW_CAPABILITIES])
    assert without_new <= recorded * 1.05
    assert every - without_new <= sum(NEW_CAPABILITIES.values())


def test_a_family_of_tools_shares_one_line_where_its_first_tool_comes(tmp_path: Path) -> None:
    plan = plan_turn(variant("default", None), every_tool(tmp_path))
    lines = tools_section(plan.specs)
    changes = [line for line in lines if "write_file" in line]
    assert changes == [
        "- write_file, edit_file, multi_edit, apply_patch, move_file, delete_file: "
        "change files; read a file before you edit it."
    ]
    assert lines.index(changes[0]) < lines.index(
        "- bash: run a shell command in the workspace (tests, builds, scripts)."
    )
    named = ", ".join(lines)
    assert all(name in named for name in plan.tools)
    read_only = tools_section(plan_turn(variant("plan", None), every_tool(tmp_path)).specs)
    assert not any("write_file" in line or "change files" in line for line in read_only)
