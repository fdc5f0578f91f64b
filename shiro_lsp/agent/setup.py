"""What a turn is set up with: the plan (variant and tools), the setup (client, policy, window, prompt,
approvals, checkpoints) and the answers an approval gets.

The runtime builds a :class:`TurnSetup` per turn (``agent/runtime.py``); the loop (``agent/loop.py``)
runs it and hands each step's calls to the per-call pipeline (``agent/tool_calls.py``). Both read
these types from here, so neither imports the other for them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, Protocol

from shiro_lsp.adapt import FULL, CallHints, Checks, Profile, ReplyFormat, ToolCallFormat, tools_prompt
from shiro_lsp.agent.agents import AgentVariant
from shiro_lsp.agent.context_window import ContextWindow
from shiro_lsp.agent.permissions import Grants, Origin, PermissionPolicy
from shiro_lsp.checkpoints.rows import ChangedFile, FilePreview
from shiro_lsp.fs.secrets import Redactor
from shiro_lsp.hooks import PreToolVerdict
from shiro_lsp.images.parts import ModelImages
from shiro_lsp.messages import Message
from shiro_lsp.providers.types import ModelClient
from shiro_lsp.tools import ToolRegistry, ToolSpec, sandbox
from shiro_lsp.tools.base import WriteRecorder
from shiro_lsp.usage import Usage

DEFAULT_MAX_OUTPUT_TOKENS = 16_384

Decision = Literal["once", "always", "deny"]


SHIRO_ORIGIN_NOTE = (
    "Shiro runs this command itself, not the model: your message names it, and its output tells the "
    "model what happens. Deny it if you do not want it run."
)
"""Said on the card of a call Shiro makes itself (``ApprovalRequest.by_shiro``)."""


@dataclass(frozen=True)
class ApprovalRequest:
    tool_name: str
    input: Any
    matched_pattern: str | None
    suggested_pattern: str
    repeated: bool
    warning: str | None = None
    previews: list[FilePreview] | None = None
    """File tools: one per file the call would change."""
    call_id: str | None = None
    """The tool call asked about (the id its ``tool-start``/``tool-call`` events carry)."""
    origin: Origin = "native"
    """``text``: Shiro read the call from the model's text, or made it itself; the card says so."""
    by_shiro: bool = False
    """Shiro made the call itself (a command the user named), not the model."""


@dataclass(frozen=True)
class Answer:
    """The user's answer with the reason they gave for a deny (the model reads it)."""

    decision: Decision
    reason: str | None = None
    expired: bool = False
    """No answer came in time (the deny is the timeout's)."""


Approver = Callable[[ApprovalRequest], Awaitable[Decision | Answer]]


async def deny_all(request: ApprovalRequest) -> Decision | Answer:
    """The approver when no one can answer (headless without --yolo): fail closed."""
    return "deny"


class CallScreen(Protocol):
    """Checks around each call besides the permission rules: a custom command's tool limit and the
    hooks (``agent/call_screen.py``)."""

    async def before(self, call_id: str, tool_name: str, input: dict[str, Any]) -> PreToolVerdict: ...

    async def after(self, call_id: str, tool_name: str, input: dict[str, Any], output: str) -> str:
        """What to add to the result the model reads ('' for nothing)."""
        ...


class ToolChangesLike(Protocol):
    @property
    def diff(self) -> str: ...

    @property
    def files(self) -> list[ChangedFile]: ...


class ChangeTracker(Protocol):
    """Records what the turn's tool calls change (the checkpoint); see ``checkpoints.recorder``."""

    async def preview(self, tool_name: str, input: dict[str, Any]) -> list[FilePreview] | None: ...

    async def before(self, tool_name: str, input: dict[str, Any]) -> Any: ...

    def recorder(self, watch: Any) -> WriteRecorder | None:
        """What the tool itself tells about its writes (``ToolContext.recorder``), if anything."""
        ...

    async def after(self, watch: Any, prepare: str | None = None) -> ToolChangesLike | None:
        """What the call changed. ``prepare``: the next call's tool, whose :meth:`before` may then
        be made in the same thread hop (valid until :meth:`drop_prepared`)."""
        ...

    def drop_prepared(self) -> None:
        """The workspace reservation was given back: a prepared ``before`` may be out of date."""
        ...


class History(Protocol):
    """What the loop needs of a live session."""

    @property
    def messages(self) -> list[Message]: ...

    def append(self, *messages: Message) -> None: ...

    def replace(self, messages: list[Message]) -> None: ...

    def add_usage(self, usage: Usage) -> None: ...


PromptBuilder = Callable[[], Awaitable[str]]
"""The system prompt from the live state (task list, memory), rebuilt before every model step
(it reads files, so builders run it off the event loop)."""
Reservation = Callable[[], AbstractAsyncContextManager[Any]]


@dataclass(frozen=True)
class TurnPlan:
    """Which variant runs, which tools it is offered and how its replies are read: decided once per
    turn (and per meter) from the variant and the model's profile."""

    variant: AgentVariant
    registry: ToolRegistry
    tools: tuple[str, ...]
    specs: tuple[ToolSpec, ...]
    reply_format: ReplyFormat
    profile: Profile = FULL
    """How Shiro works with this model (``adapt.profiles``)."""
    hints: CallHints = field(default_factory=CallHints)
    """What a call's result tells the model besides the tool's output (the profile's)."""
    hidden: frozenset[str] = frozenset()
    """Registered tools not offered (never approvable in this front door, or git outside a repository)."""
    withheld: tuple[ToolSpec, ...] = ()
    """Tools the model is not told of but whose calls still run (the reply format's ``withheld``)."""

    def offering_nothing(self) -> TurnPlan:
        """The plan with no tools described to the model (shown the whole workspace, a model that
        writes files out does without them); the calls it writes as text still run."""
        return replace(self, specs=(), withheld=(*self.withheld, *self.specs))

    @cached_property
    def readable_specs(self) -> dict[str, ToolSpec]:
        """The tools a call written as text may name and run: the offered and the withheld ones."""
        return {spec.name: spec for spec in (*self.specs, *self.withheld)}

    @cached_property
    def unoffered_specs(self) -> dict[str, ToolSpec]:
        """Registered tools not offered: a text call to one is read, and answered with an error."""
        return {spec.name: spec for spec in self.registry.specs() if spec.name not in self.tools}

    @cached_property
    def text_tools_prompt(self) -> str:
        """The system prompt's tool section when tool calls are written as text: built once per plan."""
        return tools_prompt(list(self.specs))


def plan_turn(
    variant: AgentVariant,
    registry: ToolRegistry,
    hidden: frozenset[str] = frozenset(),
    profile: Profile = FULL,
    calls: ToolCallFormat = "auto",
) -> TurnPlan:
    """The read-only variants are offered the plan-safe tools, the others every registered tool the
    profile offers; ``calls``: how the model's calls travel (``toolCallFormat``, as the endpoint allows)."""
    offered = registry.read_only() if variant.read_only else registry.names()
    tools = tuple(name for name in offered if name not in hidden and profile.offers(name))
    reply_format = profile.reply_format(calls, tools)
    withheld = reply_format.withheld(tools)
    specs = [profile.describe(spec) for spec in registry.specs(tools)]
    return TurnPlan(
        variant,
        registry,
        tools,
        tuple(s for s in specs if s.name not in withheld),
        reply_format,
        profile,
        profile.call_hints(reply_format),
        hidden,
        tuple(s for s in specs if s.name in withheld),
    )


@dataclass
class TurnSetup:
    client: ModelClient
    model: str
    plan: TurnPlan
    policy: PermissionPolicy
    grants: Grants
    window: ContextWindow
    system_prompt: PromptBuilder
    workspace: Path | Sequence[Path]
    """What the tools see: the session's root, or every workspace folder (``jail.Folders``)."""
    approver: Approver = deny_all
    reservation: Reservation | None = None
    changes: ChangeTracker | None = None
    redactor: Redactor = field(default_factory=Redactor)
    """Cuts secrets (known key formats, the configured keys) out of every tool result."""
    sandbox: str = "off"
    sandbox_network: bool = False
    web_allow_hosts: tuple[str, ...] = ()
    """Hosts web_fetch may reach at a non-public address (the user's ``webFetch.allowHosts``)."""
    images: ModelImages | None = None
    """What the model is sent of the history's images (``send`` False: words instead)."""
    reminder: Callable[[], str] | None = None
    """The task list, sent after the conversation (not in the system prompt: see ``with_reminder``)."""
    can_ask: bool = True
    yolo: bool = False
    context_window: int | None = None
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    workspace_view: str = ""
    """What the turn's user message carries of the workspace (``adapt.view``); '' for none."""
    workspace_note: str = ""
    """What it carries after the user's words (``WorkspaceView.note``); '' for none."""
    temperature: float | None = None
    """The agent steps' sampling temperature (None: the server's default)."""
    retry_temperature: float | None = None
    """The temperature of a step after Shiro sent the model back (None: ``temperature``)."""
    max_writes_per_file: int | None = None
    """Steps of the turn that may change one file (``write_limit``; None: any number)."""
    keeps_tests: bool = False
    """Once the check failed, the test files already there are not changed (``kept_tests``)."""
    checks: Checks = field(default_factory=Checks)
    """The command that checks the work, and the one to run first (``adapt`` finds them)."""
    screen: CallScreen | None = None
    """Checks before and after each tool call: a custom command's tool limit, the hooks."""
    stop_check: Callable[[str], Awaitable[str | None]] | None = None
    """When the model has answered (its text given): an instruction to go on instead (a Stop hook), or None."""
    billed: bool = True
    """The endpoint charges for tokens (``pricing.is_billed``); a local server's turns have no cost."""

    def bash_warning(self) -> str:
        """What a bash approval card says about where the command runs (sandboxed or not)."""
        return sandbox.warning(self.sandbox, self.sandbox_network)
