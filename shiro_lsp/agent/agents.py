"""Agent variants (spec §7.2): how hard to think, which tools, how many steps, what to add to the prompt."""

from __future__ import annotations

from dataclasses import dataclass

from shiro_lsp.errors import BadParams
from shiro_lsp.providers.types import ReasoningEffort

THINKING_EFFORT: dict[str, ReasoningEffort] = {
    "off": "none",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "max": "xhigh",
}


# Models that take a reasoning effort; others (gpt-4o, most local models) reject or ignore it.
REASONING_MODEL_PREFIXES = ("gpt-5", "o1", "o3", "o4", "codex")


def takes_reasoning_effort(model: str) -> bool:
    name = model.lower().rsplit("/", 1)[-1]
    return name.startswith(REASONING_MODEL_PREFIXES)


@dataclass(frozen=True)
class AgentVariant:
    name: str
    thinking: str
    read_only: bool
    max_steps: int
    appendix: str

    @property
    def reasoning_effort(self) -> ReasoningEffort:
        return THINKING_EFFORT[self.thinking]


VARIANTS: dict[str, AgentVariant] = {
    v.name: v
    for v in (
        AgentVariant("default", "medium", False, 50, ""),
        AgentVariant(
            "quick",
            "off",
            False,
            12,
            "This is a small, well-scoped task. Do not deliberate: locate the code, make the change, verify it. "
            "Do not write a task list. Do not explore beyond what the change requires.",
        ),
        AgentVariant(
            "deep",
            "max",
            False,
            80,
            "This task is hard or its cause is unclear. Form more than one hypothesis before you act and say "
            "which one you are testing. Read enough of the code to be sure rather than guessing. Record "
            "findings with remember so they survive compaction. Report what you verified and what you could not.",
        ),
        AgentVariant(
            "plan",
            "high",
            True,
            50,
            "You are in planning mode and have no tools that change anything. Read the code, then write a plan "
            "the user can approve: the steps in order, the files each step touches, how each will be verified, "
            "and the risks. Record the plan with todo_write. Do not claim to have changed anything.",
        ),
        AgentVariant(
            "review",
            "high",
            True,
            50,
            "You are reviewing code, not writing it. Read the change and the code around it, then report "
            "concrete problems with file paths and lines, most serious first: bugs, missing tests, security, "
            "then style. Say what you checked and found fine. Do not rewrite the code.",
        ),
    )
}


def variant(name: str, thinking: str | None = None) -> AgentVariant:
    base = VARIANTS.get(name)
    if base is None:
        raise BadParams(f'Unknown agent "{name}". Available: {", ".join(VARIANTS)}')
    if thinking is None:
        return base
    if thinking not in THINKING_EFFORT:
        raise BadParams(f'Unknown thinking level "{thinking}". Available: {", ".join(THINKING_EFFORT)}')
    return AgentVariant(base.name, thinking, base.read_only, base.max_steps, base.appendix)
