"""Profiles: how Shiro works with one class of model (like Codex's model families and Cline's prompt
variants). A profile says which system prompt the model gets, which built-in tools it is offered and
how they are described, how it changes files, at what temperature it is sampled, how much of its
window the workspace view may fill, which reflections send it back and how often, and which hints a
call's result carries.

:func:`choose_profile` picks one per turn: the user's ``shiro.modelProfile`` first, else from what
is known of the model: a context window up to :data:`SMALL_CONTEXT_WINDOW` is the only fact
Shiro has about a model's class today, so it is the default, never a rule. How calls travel (native
``tools``, or written as text when the server refuses them or ``toolCallFormat`` says so) comes from
the endpoint, and the profile turns it into a reply format (:meth:`Profile.reply_format`).

``SHIRO_ADAPT_OFF`` (environment only; a developer's knob for ablation runs, never a user setting)
switches mechanisms off by name, comma-separated: a reflection's name or group
(``reflections/``), ``asked_for_change`` (every message may ask for a change), ``auto_imports``,
``hints`` or ``write_limit``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from shiro_lsp.adapt.formats.base import ReplyFormat
from shiro_lsp.adapt.formats.native import NativeCalls
from shiro_lsp.adapt.formats.text_calls import TextCalls
from shiro_lsp.adapt.formats.whole_file import WholeFile
from shiro_lsp.adapt.hints import CallHints, SmallModelHints
from shiro_lsp.adapt.prompts import (
    COMPACT_INSTEAD,
    COMPACT_TOOLS,
    PromptParts,
    build_compact_system_prompt,
    compact_spec,
)
from shiro_lsp.adapt.prose import asks_for_change
from shiro_lsp.adapt.reflections.base import Reflection, Reflector, TurnFacts
from shiro_lsp.adapt.reflections.checks import CheckReminder, RunChecks, RunFirst, find_checks
from shiro_lsp.adapt.reflections.commands import Checks
from shiro_lsp.adapt.reflections.copy_cut import CopyCut
from shiro_lsp.adapt.reflections.kept_cut import KeptCut
from shiro_lsp.adapt.reflections.lint import Lint, with_missing_imports
from shiro_lsp.adapt.reflections.loop_cut import LoopCut
from shiro_lsp.adapt.reflections.restart_cut import RestartCut
from shiro_lsp.adapt.reflections.unchanged import (
    IdleWrites,
    NothingWritten,
    SecretWrite,
    UnchangedListing,
    UnchangedQuote,
)
from shiro_lsp.adapt.reflections.unfinished import (
    AnnouncedStep,
    CallInProse,
    CodeInProse,
    InventedResult,
    LocalModule,
    NoAnswer,
    UnreadableCall,
)
from shiro_lsp.adapt.view import MAX_VIEW_FILES, ViewBudget
from shiro_lsp.config import ToolCallFormat
from shiro_lsp.tools import KNOWN_SPECS
from shiro_lsp.tools.base import ToolSpec

log = logging.getLogger(__name__)

SMALL_CONTEXT_WINDOW = 32_768
"""Up to this window (tokens) a model gets the compact profile when nothing else says which: the
8k-32k windows local models run with (a 16k window's first request stays under 1,500 tokens)."""
MIN_VIEW_CHARS = 1_000
OFF_VARIABLE = "SHIRO_ADAPT_OFF"
MECHANISMS = frozenset({"asked_for_change", "auto_imports", "hints", "kept_tests", "write_limit"})
"""What ``SHIRO_ADAPT_OFF`` may name besides the reflections."""

ProfileName = Literal["full", "compact"]
Edits = Literal["calls", "whole_file"]


@dataclass(frozen=True)
class Profile:
    name: ProfileName
    system_prompt: Callable[[PromptParts], str] | None = None
    """The system prompt's builder; None: the agent's full prompt (``agent/prompt.py``)."""
    tools: frozenset[str] | None = None
    """The built-in tools offered (None: all); tools from MCP servers or extensions always are."""
    short_descriptions: bool = False
    """Tools are described in one line with their schemas stripped to what a valid call needs."""
    instead: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """For a built-in tool not offered: the offered one that does its work (said when it is called)."""
    edits: Edits = "calls"
    """How the model changes files when it writes its calls as text: with calls, or written out whole."""
    temperature: float | None = None
    """The agent steps' sampling temperature unless ``temperature`` is set (None: the server's)."""
    retry_temperature: float | None = None
    """The temperature of the step after Shiro sent the model back, unless ``temperature`` is set
    (None: the same as the others). Greedy, a small model given a reminder or a failed check answers
    as it answered before, word for word: sampled, it tries something else."""
    view_share: float | None = None
    """Share of the context window (tokens, at about 4 characters each) the workspace view may fill
    with each message (None: no view)."""
    first_look_tokens: int = 0
    """Tokens of repository map shown with a session's first message where there is no view (0: none)."""
    fetches_pasted_urls: bool = False
    """The pages of URLs the user pastes are fetched for the model (its window cannot take web_fetch)."""
    reflections: frozenset[str] = frozenset()
    """The reflections that may send the model back (names or groups, ``reflections/``)."""
    max_reflections: int = 3
    """How often, at most, Shiro sends the model back in one turn (every reflection counts)."""
    hints: bool = False
    """Call results carry hints (``hints.SmallModelHints``)."""
    auto_imports: bool = False
    """A file written out that uses a name one other top-level module defines gets its import."""
    max_writes_per_file: int | None = None
    """Steps of a turn that may change one file before Shiro refuses more (None: any number)."""
    keeps_tests: bool = False
    """Once the turn's check failed, the test files already there are refused (``agent/kept_tests.py``)."""
    off: frozenset[str] = frozenset()
    """Mechanisms switched off (``SHIRO_ADAPT_OFF``)."""

    def offers(self, tool: str) -> bool:
        return self.tools is None or tool in self.tools or tool not in KNOWN_SPECS

    def describe(self, spec: ToolSpec) -> ToolSpec:
        """The tool as the model is told of it (the pipeline still checks input with the full spec)."""
        return compact_spec(spec) if self.short_descriptions else spec

    def reply_format(self, calls: ToolCallFormat, offered: Collection[str]) -> ReplyFormat:
        """How this model's reply is read, given how its calls travel (``calls``) and the tools offered."""
        native = NativeCalls()
        if calls == "native":
            return native
        text = TextCalls(tagged=calls == "text", native=native)
        if self.edits == "whole_file" and "write_file" in offered:
            mend = with_missing_imports if self.runs("auto_imports") and self.auto_imports else None
            return WholeFile(text, mend)
        return text

    def call_hints(self, reply_format: ReplyFormat) -> CallHints:
        if not self.hints or not self.runs("hints"):
            return CallHints()
        return SmallModelHints(self.instead, writes_out=reply_format.writes_out)

    def writes_per_file(self) -> int | None:
        """The turn's limit of steps that change one file (``agent/write_limit.py``), unless switched off."""
        return self.max_writes_per_file if self.runs("write_limit") else None

    def keeps_tests_after_failure(self) -> bool:
        """Whether a failed check keeps the tests as they are (``agent/kept_tests.py``), unless switched off."""
        return self.keeps_tests and self.runs("kept_tests")

    def view_budget(self, context_window: int | None) -> ViewBudget | None:
        """What the workspace view may show with a turn's message (None: no view)."""
        if self.view_share is None or context_window is None:
            return None
        chars = max(MIN_VIEW_CHARS, int(context_window * self.view_share * 4))
        return ViewBudget(files=MAX_VIEW_FILES, content_chars=chars)

    def runs(self, mechanism: str, group: str = "") -> bool:
        """Whether a mechanism is on: not switched off by its name or its group."""
        return mechanism not in self.off and (not group or group not in self.off)

    def reflector(self, facts: TurnFacts) -> Reflector:
        """The turn's reflections, in the order they are asked, with the profile's budget."""
        asked = not self.runs("asked_for_change") or asks_for_change(facts.words)
        return Reflector(self._reflections(), replace(facts, change_asked=asked), self.max_reflections)

    def checks(self, root: Path, configured: str | None, words: str, *, trusted: bool) -> Checks:
        """The turn's check command and the command to run first, where a reflection uses them. The
        workspace's files (AGENTS.md, the test runner) are read only where Shiro runs the check itself;
        AGENTS.md only in a ``trusted`` workspace; a model that runs commands is reminded only of one
        the user named or set. Blocking (:attr:`reads_workspace`)."""
        reflections = self._reflections()
        if not any(isinstance(r, RunFirst | RunChecks | CheckReminder) for r in reflections):
            return Checks()
        return find_checks(root if self._runs_checks() else None, configured, words, trusted=trusted)

    @property
    def reads_workspace(self) -> bool:
        """Setting a turn up reads the workspace's files (the view, the check): a thread's work."""
        return self.view_share is not None or self.first_look_tokens > 0 or self._runs_checks()

    def _runs_checks(self) -> bool:
        return any(isinstance(r, RunChecks) for r in self._reflections())

    def _reflections(self) -> list[Reflection]:
        return [
            r
            for r in all_reflections()
            if (r.name in self.reflections or r.group in self.reflections) and self.runs(r.name, r.group)
        ]


def all_reflections() -> list[Reflection]:
    """Every reflection, fresh for a turn, in the order the turn asks them."""
    return [
        Lint(),
        RunChecks(),
        KeptCut(),  # after the check: a cut reply that wrote a file has it checked first
        UnchangedQuote(),  # the exclusive ones: the first that matches a reply is the only one asked
        UnchangedListing(),
        CodeInProse(),
        LocalModule(),
        UnreadableCall(),
        CallInProse(),
        AnnouncedStep(),
        CheckReminder(),
        NothingWritten(),  # the last resort: only where nothing above sent the model back
        NoAnswer(),
        InventedResult(),
        SecretWrite(),  # after a step's calls: before the idle writes' count says anything
        IdleWrites(),
        RunFirst(),
        LoopCut(),
        RestartCut(),
        CopyCut(),
    ]


REFLECTION_NAMES = frozenset(name for r in all_reflections() for name in (r.name, r.group))

FULL = Profile(
    "full",
    first_look_tokens=0,  # a first look (the map alone) is off until the eval shows it helps
    reflections=frozenset({"unfinished", "unchanged_quote", "check_reminder", "loop_cut", "restart_cut"}),
)
"""A model with room to think: the full prompt, every tool, the server's temperature."""

COMPACT = Profile(
    "compact",
    system_prompt=build_compact_system_prompt,
    tools=COMPACT_TOOLS,
    short_descriptions=True,
    instead=MappingProxyType(COMPACT_INSTEAD),
    edits="whole_file",
    temperature=0.0,
    retry_temperature=0.7,  # Qwen2.5-Coder's own generation setting (llama.cpp's default: 0.8)
    view_share=0.5,
    fetches_pasted_urls=True,
    reflections=frozenset(
        {"unfinished", "unchanged", "lint", "checks", "loop_cut", "restart_cut", "copy_cut", "kept_cut"}
    ),
    hints=True,
    auto_imports=True,
    max_writes_per_file=3,
    keeps_tests=True,
)
"""A small model: few rules, seven tools, files written out whole when calls are text, greedy
sampling (it keeps to a format far more often at 0), up to half the window for the workspace with each
message (a 16k window: about 8,000 tokens), pasted pages fetched for it."""

PROFILES: Mapping[str, Profile] = MappingProxyType({p.name: p for p in (FULL, COMPACT)})


def choose_profile(
    setting: str, context_window: int | None, environ: Mapping[str, str] | None = None
) -> Profile:
    """The profile for a turn: ``setting`` (``shiro.modelProfile``) when it names one, else by the
    model's context window (``None``: not known), with ``SHIRO_ADAPT_OFF``'s mechanisms off."""
    if setting in PROFILES:
        profile = PROFILES[setting]
    elif context_window is not None and context_window <= SMALL_CONTEXT_WINDOW:
        profile = COMPACT
    else:
        profile = FULL
    off = switched_off(os.environ if environ is None else environ)
    return replace(profile, off=off) if off else profile


def switched_off(environ: Mapping[str, str]) -> frozenset[str]:
    names = frozenset(name.strip() for name in environ.get(OFF_VARIABLE, "").split(",") if name.strip())
    unknown = names - REFLECTION_NAMES - MECHANISMS
    if unknown:
        log.warning("%s: unknown names %s", OFF_VARIABLE, ", ".join(sorted(unknown)))
    return names
