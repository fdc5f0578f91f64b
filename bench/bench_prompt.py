"""Prompt size: what every request carries before the conversation (system prompt + tool schemas).

Estimated tokens (the meter's ``len / 4``) of the full and the compact prompt with every tool,
as a ratio to the reference's: the prompt recorded against a real llama.cpp server
(tests/fixtures/realmodel, ~3,260 prompt tokens for a one-word question).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from bench.common import Result
from shiro_lsp.adapt.profiles import COMPACT, FULL
from shiro_lsp.adapt.prompts import PromptParts, build_compact_system_prompt
from shiro_lsp.agent.agents import variant
from shiro_lsp.agent.context_window import tools_tokens
from shiro_lsp.agent.prompt import build_system_prompt
from shiro_lsp.agent.setup import plan_turn
from shiro_lsp.context.estimate import estimate_text
from shiro_lsp.state.memory import ProjectMemory
from shiro_lsp.state.todos import TaskList
from shiro_lsp.tools import builtin_registry
from shiro_lsp.tools.session import memory_tools, todo_tool

RECORDING = (
    Path(__file__).resolve().parent.parent
    / "tests/fixtures/realmodel/qwen2.5-coder-1.5b-instruct-q4_k_m.wire.jsonl"
)
WORKSPACE = Path("/home/user/project")
NEW_CAPABILITIES = {"web_fetch": 75}
"""Tools that brought what no tool before the recording could (reading the web), each with the most
its schema and prompt line may cost; the rest of the full prompt keeps within 5 % of the recorded one
(tests/unit/agent/test_prompt_budget.py holds the prompt to the same rule)."""


def reference_tokens() -> int:
    body = json.loads(RECORDING.read_text(encoding="utf-8").splitlines()[0])["body"]
    tools = [t["function"] for t in body["tools"]]
    return estimate_text(body["messages"][0]["content"]) + estimate_text(json.dumps(tools))


def prompt_tokens(compact: bool, leave_out: frozenset[str] = frozenset()) -> int:
    registry = builtin_registry()
    registry.register(todo_tool(TaskList, lambda: None))
    with tempfile.TemporaryDirectory() as folder:
        for tool in memory_tools(ProjectMemory(Path(folder) / "memory.json")):
            registry.register(tool)
    profile = COMPACT if compact else FULL  # every tool described: calls travel natively
    plan = plan_turn(variant("default", None), registry, profile=profile, calls="native")
    specs = [spec for spec in plan.specs if spec.name not in leave_out]
    build = build_compact_system_prompt if compact else build_system_prompt
    prompt = build(PromptParts(workspace=WORKSPACE, tools=specs, can_ask=False))
    return estimate_text(prompt) + tools_tokens(specs)


def run() -> list[Result]:
    reference = reference_tokens()
    full, compact = prompt_tokens(False), prompt_tokens(True)
    known = prompt_tokens(False, frozenset(NEW_CAPABILITIES))
    allowance = sum(NEW_CAPABILITIES.values())
    return [
        Result(f"full prompt without the {len(NEW_CAPABILITIES)} new tool(s), {known} est. tokens vs the reference's {reference}", known / reference, "x", "<= 1.05x", known <= reference * 1.05),
        Result(f"the new tools' share of the full prompt ({full} est. tokens) vs their allowance", (full - known) / allowance, "x", "<= 1.00x", full - known <= allowance),
        Result(f"compact prompt, {compact} est. tokens vs the reference's {reference}", compact / reference, "x", "<= 0.40x", compact <= reference * 0.40),
    ]  # fmt: skip
