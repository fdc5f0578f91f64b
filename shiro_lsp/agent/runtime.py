"""The agent of one workspace: builds each turn from the live state and runs chats in order.

The workspace's service implements ``TurnServices`` (settings, the live session, stores, notes,
the reservation, MCP tools); front doors (the language server, ACP, the headless CLI) implement
``Frontend`` to receive events and answer approvals. Everything else is the same for all of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol

from shiro_lsp.adapt import (
    NUDGE_MARK_KEY,
    VIEW_KEY,
    Checks,
    Profile,
    PromptParts,
    WorkspaceView,
    choose_profile,
    first_look_view,
    user_words,
    workspace_view,
)
from shiro_lsp.agent.agents import variant
from shiro_lsp.agent.attachments import REFUSED_NOTICE, gate_attachments, has_sources, split_attachments
from shiro_lsp.agent.call_screen import TurnCallScreen
from shiro_lsp.agent.chat_queue import ChatOutcome, ChatQueue, Ticket, chat_outcome
from shiro_lsp.agent.context_window import ContextWindow, Meter
from shiro_lsp.agent.events import Done, Emit, Event, Failed, Notice, ToolCall
from shiro_lsp.agent.instructions import ProjectInstructions, build_block, expand_command
from shiro_lsp.agent.loop import Turn
from shiro_lsp.agent.outcome import OutcomeWatch
from shiro_lsp.agent.pasted_pages import pages_budget, pasted_pages
from shiro_lsp.agent.permissions import Grants, PermissionPolicy
from shiro_lsp.agent.pricing import is_billed
from shiro_lsp.agent.prompt import build_system_prompt, is_git_workspace
from shiro_lsp.agent.setup import Answer, ApprovalRequest, Decision, History, TurnPlan, TurnSetup, plan_turn
from shiro_lsp.agent.tool_calls import ToolCallRunner
from shiro_lsp.agent.turn_log import LoggedSession, TurnLog
from shiro_lsp.checkpoints.recorder import TurnChanges
from shiro_lsp.checkpoints.review import Checkpoints
from shiro_lsp.checkpoints.rows import TurnChangesView
from shiro_lsp.commands import CommandCatalogue, CommandRun, ToolLimit, parse_invocation
from shiro_lsp.config import Settings, ToolCallFormat, secret_values
from shiro_lsp.context.estimate import estimate_text
from shiro_lsp.context.summary import compact_request, compact_retry_request, goal_index
from shiro_lsp.context.summary_check import digest_summary, last_answer, summary_problem
from shiro_lsp.errors import ShiroError
from shiro_lsp.fs.jail import Folders, Roots
from shiro_lsp.fs.secrets import Redactor
from shiro_lsp.hooks import HookSettings, SessionHookState, TurnHooks, untrusted_notice
from shiro_lsp.images.parts import ModelImages, has_images, image_part
from shiro_lsp.images.store import ImageStore
from shiro_lsp.messages import Message, Part
from shiro_lsp.providers.factory import is_local, is_official, make_client
from shiro_lsp.providers.models import list_endpoint_models
from shiro_lsp.providers.types import ModelClient, ModelRequest, ProviderError
from shiro_lsp.state.history import PromptHistory
from shiro_lsp.state.memory import ProjectMemory
from shiro_lsp.state.todos import TaskList
from shiro_lsp.tools import Tool, ToolRegistry, builtin_registry
from shiro_lsp.tools.edits import PLANNERS
from shiro_lsp.tools.git import GIT_TOOLS
from shiro_lsp.tools.session import memory_tools, todo_tool
from shiro_lsp.usage import Usage

NO_IMAGES_NOTICE = (
    "{model} does not take images (shiro.imageInput, or what its server said): it is told of them in "
    "words only."
)
IMAGE_GONE_NOTICE = "Not sent: the image {name} is no longer kept; attach it again."
PROMPT_REDACTED_NOTICE = (
    "Your message held a secret ({kinds}); it was replaced by a [redacted …] marker before it reached "
    "the model or the session file."
)

log = logging.getLogger(__name__)

BUSY_COMPACT = "A chat is running or waiting; /compact can run once it has finished."
CHANGED_WHILE_COMPACTING = (
    "The session changed while it was being compacted, so nothing was replaced. Run /compact again."
)
COMPACT_FAILED = "Could not compact the session; it is unchanged."
DIGEST_STANDS_IN = (
    "The model's summary was not usable ({reason}), so Shiro's own digest of the conversation (its goal, "
    "task list, files touched and one line per message) stands in for it."
)
AUTO_COMPACT_FAILED = (
    "The conversation no longer fits the compaction threshold and could not be compacted ({reason}); "
    "older tool output is pruned from what the model sees instead."
)
NOTHING_TO_UNDO = "This session has no compaction to undo."
UNDO_TOO_BIG = (
    "The earlier conversation no longer fits: it would carry about {tokens:,} tokens (instructions and "
    "tools included) against the {threshold:,}-token limit, so the model would only see it pruned "
    "again. The summary stays; nothing is lost from the transcript."
)
CompactionPhase = Literal["summarizing", "done", "failed"]
WINDOW_FILL = 0.75
"""Share of a known context window the history may fill before pruning (the rest: the answer)."""
WINDOW_LOOKUP_TIMEOUT_S = 3.0
WRITES_AFTER_S = 0.05
"""A turn's prompt history write and task registration start at its first event, or this long in."""


class LiveSessionLike(History, LoggedSession, Protocol):
    @property
    def id(self) -> str: ...

    @property
    def tasks(self) -> TaskList: ...

    @property
    def compactions(self) -> Sequence[object]: ...

    def model_messages(self) -> list[Message]: ...

    def replace_model_view(self, messages: list[Message]) -> None: ...

    def compact(self, summary: str, *, auto: bool = False, digest_reason: str | None = None) -> object: ...

    def view_without_last_compaction(self) -> list[Message]: ...

    def undo_compaction(self) -> object | None: ...


class Frontend(Protocol):
    def emitter(self, session_id: str, task_id: str) -> Emit: ...

    async def approve(self, task_id: str, request: ApprovalRequest) -> Decision | Answer: ...

    def todos_changed(self) -> None: ...

    def context_changed(self, meter: Meter) -> None: ...

    def changes_changed(self, view: TurnChangesView) -> None:
        """After a turn that changed files (``shiro/changes/changed``)."""


class TurnServices(Protocol):
    """What a turn needs of the workspace it runs in (``service.Shiro`` implements it)."""

    @property
    def workspace_path(self) -> Path: ...

    @property
    def memory(self) -> ProjectMemory | None: ...

    @property
    def history(self) -> PromptHistory:
        """The prompts the user sent (the chat box's history)."""
        ...

    @property
    def checkpoints(self) -> Checkpoints: ...

    def current_settings(self) -> Settings: ...

    def live_session(self) -> LiveSessionLike: ...

    def roots(self) -> Roots:
        """What the tools see: the workspace, or every workspace folder with it first (``jail.Folders``)."""
        ...

    async def notes_blocks(self) -> str:
        """Project and task notes for the system prompt."""
        ...

    def reservation(self) -> AbstractAsyncContextManager[Any]:
        """Held while a mutating tool runs: one writer per workspace across servers."""
        ...

    def register_task(self, task_id: str, session_id: str, prompt: str) -> None:
        """The turn as a task of the notes store (blocking: a database write)."""
        ...

    async def extra_tools(self) -> list[Tool]:
        """The MCP servers' tools, as connected now."""
        ...

    @property
    def commands(self) -> CommandCatalogue:
        """The custom commands (``/name args``) of the workspace and the user."""
        ...

    @property
    def hooks(self) -> HookSettings:
        """The configured hooks and which of them run."""
        ...

    def transcript_path(self, session_id: str) -> Path:
        """The session's file (what a hook's ``transcript_path`` names)."""
        ...

    @property
    def images(self) -> ImageStore:
        """The images the user gave, kept by hash in the state root."""
        ...


class AgentRuntime:
    def __init__(
        self, services: TurnServices, frontend: Frontend, *, yolo: bool = False, can_ask: bool = True
    ) -> None:
        self.services = services
        self.workspace = services.workspace_path
        self.frontend = frontend
        self.yolo = yolo
        self.can_ask = can_ask
        self._extra: list[Tool] = []  # the last turn's extra (MCP) tools, for the meter between turns
        self.window = ContextWindow(self.settings().compact_threshold, summarize=self._summarize_span)
        self.queue = ChatQueue(self._run_ticket, lambda: self.session().id)
        self._tasks: set[asyncio.Task[None]] = set()
        self._compaction_lock = asyncio.Lock()
        self._meter_lock = asyncio.Lock()  # meters are sent in the order they are measured
        self._meter_queued = False
        self._grants: tuple[LiveSessionLike, Grants] | None = None
        self._client: ModelClient | None = None
        # How a model client is made from the settings (tests put an in-process scripted one here).
        self.client_factory: Callable[[Settings], ModelClient] = _client_for
        self._client_key: tuple[str | None, str | None, str, int] | None = None
        self._windows: dict[tuple[str, str], int | None] = {}  # (base URL, model) -> reported window
        self._refused_windows: list[str] = []  # reported windows not used, for the next turn's notices
        # (base URL, model) whose server refused native tools: the text format from then on (auto only)
        self._text_only: set[tuple[str, str]] = set()
        # (base URL, model) that takes no images: its listing says so, or it refused them (auto only)
        self._no_images: set[tuple[str, str]] = set()
        # (base URL, model) that made a native tool call: its text is never a call from then on (auto only)
        self._native: set[tuple[str, str]] = set()
        self._hook_state = SessionHookState()

    def settings(self) -> Settings:
        return self.services.current_settings()

    def session(self) -> LiveSessionLike:
        return self.services.live_session()

    # --- model ---------------------------------------------------------------------------------

    def client(self) -> ModelClient:
        """The model client for the current settings (rebuilt when they change)."""
        s = self.settings()
        key = (s.base_url, s.api_key, s.api, s.max_retries)
        if self._client is None or key != self._client_key:
            self._client = self.client_factory(s)
            self._client_key = key
        return self._client

    async def client_off_loop(self) -> ModelClient:
        """``client()`` in a thread: the first one imports the SDK (seconds on a busy machine), and a
        warm-up import still running holds the import lock that a call on the loop would wait for."""
        return await asyncio.to_thread(self.client)

    def warm_up(self) -> None:
        """Import the SDK and build the client in a thread now, so the first chat does not wait ~1 s for it."""

        def build() -> None:
            with contextlib.suppress(ProviderError):  # no key yet: the first chat says how to set one
                self.client()

        self._background(asyncio.to_thread(build))

    async def generate(self, system: str, messages: list[Message]) -> str:
        """A plain model call with no tools offered (summaries, memory compaction); the history's
        images are named in words (a summary needs no pixels)."""
        if has_images(messages):
            words = ModelImages(self.services.images, send=False)
            messages = await asyncio.to_thread(words.for_the_model, messages)
        request = ModelRequest(model=self.settings().model, instructions=system, messages=messages)
        return (await (await self.client_off_loop()).generate(request)).text

    async def summarize_memory(self, system: str, prompt: str) -> str:
        return await self.generate(system, [{"role": "user", "content": prompt}])

    async def _summarize_span(self, system: str, messages: list[Message]) -> str | None:
        return await self.generate(system, messages)

    # --- the model's context window ------------------------------------------------------------

    def context_window(self) -> int | None:
        """The window in tokens: the setting, else what the server reported (once looked up)."""
        s = self.settings()
        if s.context_window is not None:
            return s.context_window
        return self._windows.get((s.base_url or "", s.model))

    async def discover_context_window(self) -> int | None:
        """Ask the endpoint once per model (``/v1/models``, llama.cpp ``/props``); never fails a turn."""
        s = self.settings()
        key = (s.base_url or "", s.model)
        if s.context_window is not None or not s.base_url or is_official(s.base_url):
            return self.context_window()
        if key not in self._windows:
            listing = await list_endpoint_models(s.base_url, s.api_key, timeout=WINDOW_LOOKUP_TIMEOUT_S)
            info = listing.info_of(s.model)
            if info is None and len(listing.models) == 1:
                info = listing.models[0]  # llama.cpp answers for any model name
            self._windows[key] = info.context_window if info is not None else None
            self._refused_windows += listing.refused
            if info is not None and info.native_tools is False:
                self._text_only.add(key)
            if info is not None and info.images is False:
                self._no_images.add(key)
        return self._windows[key]

    def compact_threshold(self) -> int:
        """The configured threshold, lowered to fit a context window the model is known to have."""
        configured = self.settings().compact_threshold
        window = self.context_window()
        return configured if window is None else min(configured, int(window * WINDOW_FILL))

    def profile(self) -> Profile:
        """How Shiro works with the model: ``modelProfile``, else from what is known of the model."""
        return choose_profile(self.settings().model_profile, self.context_window())

    def hidden_tools(self, registry: ToolRegistry, policy: PermissionPolicy) -> frozenset[str]:
        """Tools not to offer: git outside a repository; headless without --yolo, those only a person could allow."""
        hidden: set[str] = set()
        if not is_git_workspace(self.workspace):
            hidden.update(tool.spec.name for tool in GIT_TOOLS if tool.spec.name in registry)
        if not self.can_ask and not self.yolo:
            hidden.update(name for name in registry.names() if policy.never_runs_unasked(name))
        return frozenset(hidden)

    # --- tools and prompt ----------------------------------------------------------------------

    def registry(self) -> ToolRegistry:
        """Built-ins plus the session's tools (cheap to build; rebuilt per turn so nothing leaks between turns)."""
        registry = builtin_registry()
        registry.register(todo_tool(lambda: self.session().tasks, self.frontend.todos_changed))
        if self.services.memory is not None:
            for tool in memory_tools(self.services.memory):
                registry.register(tool)
        for tool in self._extra:
            if tool.name not in registry:
                registry.register(tool)
        return registry

    def policy(self, registry: ToolRegistry) -> PermissionPolicy:
        s = self.settings()
        return PermissionPolicy(s.permissions, yolo=self.yolo, trusted=s.trusted, registry=registry)

    def plan(self, agent: str | None = None, limit: ToolLimit | None = None) -> TurnPlan:
        """The variant (``agent`` or the configured one) and the tools it is offered, from the settings
        now; ``limit``: a custom command's tools (the others are not shown, and their calls are refused)."""
        s = self.settings()
        registry = self.registry()
        hidden = self.hidden_tools(registry, self.policy(registry))
        variant_ = variant(agent or s.agent, s.thinking)
        plan = plan_turn(variant_, registry, hidden, self.profile(), self._tool_call_format(s))
        if limit is None:
            return plan
        return replace(
            plan,
            specs=tuple(spec for spec in plan.specs if limit.allows(spec.name)),
            withheld=tuple(spec for spec in plan.withheld if limit.allows(spec.name)),
        )

    def system_prompt(
        self,
        plan: TurnPlan,
        notes_block: str = "",
        instructions: str | None = None,
        memory_block: str | None = None,
    ) -> str:
        """``instructions`` is the turn's project-instructions block, ``memory_block`` the memory it
        started with; None reads them here (blocking)."""
        if memory_block is None:
            memory_block = self.memory_block()
        if instructions is None:
            instructions = build_block(self.workspace)
        build = plan.profile.system_prompt or build_system_prompt
        folders = self.services.roots()
        return build(
            PromptParts(
                folders=folders.entries if isinstance(folders, Folders) else (),
                workspace=self.workspace,
                tools=plan.specs,
                writes_out=plan.reply_format.writes_out,
                can_ask=self.can_ask,
                project_instructions=instructions,
                memory_block=memory_block,
                notes_block=notes_block,
                appendix=plan.variant.appendix,
            )
        )

    def memory_block(self) -> str:
        memory = self.services.memory
        return memory.boot_block() if memory is not None else ""

    def task_reminder(self) -> str:
        """The live task list as the model reads it after the conversation ('' when empty)."""
        return self.session().tasks.prompt_block()

    # --- chats ---------------------------------------------------------------------------------

    def submit(
        self,
        text: str,
        agent: str | None = None,
        inputs: dict[str, str] | None = None,
        images: Sequence[tuple[str, str]] = (),
    ) -> Ticket:
        """Queue a chat; ``inputs``: values for a custom command's ``${input:name}`` variables;
        ``images``: (id, name) of images the image store keeps, sent with it."""
        return self.queue.submit(expand_command(text), agent, inputs, tuple(images))

    def takes_images(self) -> bool:
        """Whether the model is sent images: the setting, else unless it is known to take none."""
        s = self.settings()
        configured = s.image_input_for(s.model)
        if configured != "auto":
            return configured == "on"
        return (s.base_url or "", s.model) not in self._no_images

    async def _run_ticket(self, ticket: Ticket) -> ChatOutcome:
        async with self._compaction():  # a chat sent during /compact waits for it
            session = self.session()
        send = self.frontend.emitter(session.id, ticket.task_id)
        turn_log = TurnLog(session, ticket.task_id)  # what a resume shows of this turn
        turn_log.start(self.settings().model)
        instructions = ProjectInstructions(self.workspace)
        writes = FirstEventWrites(WRITES_AFTER_S)
        watch = OutcomeWatch()
        said = TurnSaid()  # set once the turn is set up: what its end says

        def deliver(event: Event) -> None:
            send(event)
            turn_log.record(event)
            writes.start()

        def emit(event: Event) -> None:
            if isinstance(event, ToolCall):  # nested AGENTS.md of the folders the turn works in
                instructions.touch(event.input)
            if isinstance(event, Done) and said.end is not None:
                event = said.end(event, deliver)
            watch.see(event)
            deliver(event)

        typed = ticket.text  # what the prompt history keeps: the command as typed, not its prompt
        try:
            run = await self._custom_command(ticket)
            setup = await self._setup(ticket, session, instructions, run)
        except ShiroError as error:
            emit(Failed(error.message, needs_setup=isinstance(error, EndpointNotSetUp) or None))
            turn_log.end("error", error.message)
            return ChatOutcome(session.id, ticket.task_id, "error", error=error.message)
        await self._screen_prompt(ticket, setup, emit)
        typed = ticket.text if run is None else await self._screened(typed, setup)
        hooks = await self._turn_hooks(session, setup, emit)
        if hooks is not None or (run is not None and run.limit is not None):
            command = parse_invocation(typed)
            setup.screen = TurnCallScreen(hooks, run.limit if run else None, command.name if command else "")
        hooked = await self._prompt_hooks(hooks, session, ticket.text)
        if hooked.blocked is not None:
            emit(Notice(f"A UserPromptSubmit hook blocked this prompt; it was not sent. {hooked.blocked}"))
            emit(Done(0, 0, 0.0))
            turn_log.end("done", None)
            return ChatOutcome(session.id, ticket.task_id, "done")
        registered: list[asyncio.Task[None]] = []
        writes.add(lambda: self._background(asyncio.to_thread(self.services.history.append, typed)))
        register = self.services.register_task
        writes.add(
            lambda: registered.append(
                self._background(asyncio.to_thread(register, ticket.task_id, session.id, ticket.text))
            )
        )
        changes = self._turn_changes(session, ticket)
        setup.changes = changes
        await self._compact_when_full(session, ticket.text, emit)
        undone = self.services.checkpoints.undone_note(session.id) if changes else ""
        view, setup.checks = await self._adapted(setup, session, ticket.text)
        if not setup.plan.reply_format.describes_tools(view.whole):
            setup.plan = setup.plan.offering_nothing()
        pages = await self._pasted_pages(setup, ticket.text, emit)
        # carried by the user's message, not the instructions (their prefix stays cached)
        setup.workspace_view = "\n\n".join(
            part for part in (undone, view.text, pages, hooked.session) if part
        )
        setup.workspace_note = "\n\n".join(part for part in (view.note, hooked.prompt) if part)
        images = await self._prompt_images(ticket, setup, emit)
        turn = Turn(setup, _MeteredHistory(session, self), emit)
        said.end = self._turn_end(setup, watch, session, len(session.messages))
        try:
            outcome = await turn.run(ticket.text, images)
        finally:
            writes.start()  # a turn with no event at all
        turn_log.end(outcome.stop_reason, outcome.error)
        if registered:  # a notes read right after the reply must find this task
            await asyncio.wait(registered)
        endpoint = (self.settings().base_url or "", setup.model)
        if turn.tool_call_format == "text" != setup.plan.reply_format.name:  # the server refused native tools
            self._text_only.add(endpoint)
        if turn.native_calls_seen:
            self._native.add(endpoint)
        if setup.images is not None and not setup.images.send and self.takes_images():
            self._no_images.add(endpoint)  # it refused them: from now on it is told of them in words
        await self.refresh_meter()
        if changes is not None:
            await self._announce_changes(changes)
        return chat_outcome(session.id, ticket.task_id, outcome)

    async def _custom_command(self, ticket: Ticket) -> CommandRun | None:
        """A custom command the ticket types (``/name args``) becomes its prompt, with its agent."""
        typed, attached = split_attachments(ticket.text)  # chips stay attachments, not arguments
        run = await self.services.commands.run_of(typed, ticket.inputs, self.workspace)
        if run is not None:
            ticket.text = run.text + attached
            ticket.agent = run.agent or ticket.agent
        return run

    async def _turn_hooks(self, session: LiveSessionLike, setup: TurnSetup, emit: Emit) -> TurnHooks | None:
        """The hooks this turn runs (None: none), after a notice of the repository's untrusted ones."""
        listing = await self.services.hooks.current()
        notice = untrusted_notice(listing, session.id, self._hook_state)
        if notice is not None:
            emit(Notice(notice))
        running = [status.hook for status in listing.hooks if status.runs]
        if not running:
            return None
        mode = "bypassPermissions" if self.yolo else "plan" if setup.plan.variant.read_only else "default"
        base = {
            "session_id": session.id,
            "transcript_path": str(self.services.transcript_path(session.id)),
            "cwd": str(self.workspace),
            "permission_mode": mode,
        }
        hooks = TurnHooks(
            running,
            cwd=self.workspace,
            base=base,
            secrets=secret_values(self.settings()),
            redact=setup.redactor.redact,
            notify=lambda text: emit(Notice(text)),
        )
        setup.stop_check = hooks.stop
        return hooks

    async def _prompt_hooks(
        self, hooks: TurnHooks | None, session: LiveSessionLike, prompt: str
    ) -> HookedPrompt:
        """SessionStart (a session's first turn here) and UserPromptSubmit: the context they add, or a block."""
        if hooks is None:
            return HookedPrompt()
        context = ""
        if session.id not in self._hook_state.started:
            self._hook_state.started.add(session.id)
            context = await hooks.session_start("resume" if session.messages else "startup")
        verdict = await hooks.user_prompt_submit(prompt)
        return HookedPrompt(verdict.blocked, context, verdict.context)

    def _turn_end(
        self, setup: TurnSetup, watch: OutcomeWatch, session: LiveSessionLike, start: int
    ) -> Callable[[Done, Emit], Done]:
        """What the turn's ``done`` says (``agent/outcome.py``): the files it changed and what came of
        it; a turn asked to change files that changed none (or not the ones its answer names) is told
        so in a notice first (``say``), unless the user stopped it."""

        def end(done: Done, say: Emit) -> Done:
            sent_back = sum(1 for m in session.messages[start:] if m.get(NUDGE_MARK_KEY))
            result = watch.outcome(
                can_write=any(name in PLANNERS for name in setup.plan.tools),
                sent_back=sent_back,
                recorded=setup.changes is not None,
            )
            task = asyncio.current_task()
            if result.notice and not (task is not None and task.cancelling()):
                say(Notice(result.notice))
            return replace(done, changed_files=result.changed_files, outcome=result.outcome)

        return end

    async def _screen_prompt(self, ticket: Ticket, setup: TurnSetup, emit: Emit) -> None:
        """Attached documents a secrets rule refuses leave the prompt (their text is never kept nor
        sent), and secret values in it are cut out, each said in a notice."""
        if has_sources(ticket.text):
            gated = await asyncio.to_thread(gate_attachments, ticket.text, setup.workspace)
            ticket.text = gated.text
            for reason in gated.refusals:
                emit(Notice(REFUSED_NOTICE.format(reason=reason)))
        for refused in self._refused_windows:
            emit(Notice(refused))
        self._refused_windows.clear()
        found = setup.redactor.scan(ticket.text)  # e.g. a terminal's output attached with @terminal
        if found.count:
            ticket.text = found.text  # nothing on disk or on the wire keeps the secret
            emit(Notice(PROMPT_REDACTED_NOTICE.format(kinds=", ".join(found.kinds))))

    async def _screened(self, text: str, setup: TurnSetup) -> str:
        """``text`` screened as the prompt was (refused attachments out, secret values cut), without
        a notice: the prompt's screening said it."""
        if has_sources(text):
            text = (await asyncio.to_thread(gate_attachments, text, setup.workspace)).text
        return setup.redactor.redact(text)

    def _turn_changes(self, session: LiveSessionLike, ticket: Ticket) -> TurnChanges | None:
        """The turn's checkpoint recorder (a trusted workspace only)."""
        if not self.settings().trusted:
            return None
        return self.services.checkpoints.turn(session.id, ticket.task_id, ticket.text, len(session.messages))

    async def _announce_changes(self, changes: TurnChanges) -> None:
        try:
            view = await asyncio.to_thread(changes.finish)
        except (OSError, ShiroError) as error:
            log.warning("could not summarise the turn's changes: %s", error)
            return
        if view is not None:
            self.frontend.changes_changed(view)

    async def _setup(
        self,
        ticket: Ticket,
        session: LiveSessionLike,
        instructions: ProjectInstructions,
        run: CommandRun | None = None,
    ) -> TurnSetup:
        s = self.settings()
        # Independent lookups (thread hops, an endpoint call): together, not one after another.
        window, self._extra, notes_block, client, _ = await asyncio.gather(
            self.discover_context_window(),
            self.services.extra_tools(),
            self.services.notes_blocks(),
            self._turn_client(),
            instructions.refresh(),  # the first step's prompt finds it built
        )
        plan = self.plan(ticket.agent, run.limit if run is not None else None)
        self._sync_window()

        memory_block: str | None = None  # read at the first step: a `remember` later in the turn
        # must not change the system prompt (the provider's prompt cache serves an identical prefix)

        setup: TurnSetup | None = None  # its plan may narrow once the workspace view is known

        def build(block: str) -> str:
            nonlocal memory_block
            if memory_block is None:
                memory_block = self.memory_block()
            return self.system_prompt(setup.plan if setup else plan, notes_block, block, memory_block)

        async def prompt() -> str:
            block = await instructions.refresh()  # nested AGENTS.md of the folders touched so far
            return await asyncio.to_thread(build, block)

        async def approve(request: ApprovalRequest) -> Decision | Answer:
            if not self.can_ask:
                return "deny"
            return await self.frontend.approve(ticket.task_id, request)

        setup = TurnSetup(
            client=client,
            model=run.model if run is not None and run.model else s.model,
            plan=plan,
            policy=self.policy(plan.registry),
            grants=self.grants(session),
            window=self.window,
            system_prompt=prompt,
            reminder=self.task_reminder,
            workspace=self.services.roots(),
            approver=approve,
            reservation=self.services.reservation,
            can_ask=self.can_ask,
            yolo=self.yolo,
            context_window=window,
            max_output_tokens=s.max_output_tokens,
            temperature=s.temperature if s.temperature is not None else plan.profile.temperature,
            retry_temperature=s.temperature if s.temperature is not None else plan.profile.retry_temperature,
            max_writes_per_file=plan.profile.writes_per_file(),
            keeps_tests=plan.profile.keeps_tests_after_failure(),
            redactor=Redactor.of(secret_values(s)),
            sandbox=s.bash_sandbox,
            sandbox_network=s.bash_sandbox_network,
            web_allow_hosts=tuple(s.web_fetch_allow_hosts),
            billed=is_billed(s.base_url),
            images=ModelImages(self.services.images, self.takes_images()),
        )
        return setup

    async def _turn_client(self) -> ModelClient:
        try:
            return await self.client_off_loop()
        except ProviderError as error:
            if error.kind == "auth":
                raise EndpointNotSetUp(error.message) from None
            raise ShiroError(error.message) from None

    def _tool_call_format(self, s: Settings) -> ToolCallFormat:
        configured, endpoint = s.tool_call_format_for(s.model), (s.base_url or "", s.model)
        if configured != "auto":
            return configured
        if endpoint in self._text_only:
            return "text"
        return "native" if endpoint in self._native else "auto"

    async def _adapted(
        self, setup: TurnSetup, session: LiveSessionLike, text: str
    ) -> tuple[WorkspaceView, Checks]:
        """What the profile shows the model of the workspace with this message (for a small model the
        files the message points at and the map of the rest, a later turn only those files; for a
        large one, where the profile says so, the map with a session's first message), and the
        turn's check commands (in a thread where that reads files)."""
        profile, words = setup.plan.profile, user_words(text)
        shown_before = any(message.get(VIEW_KEY) for message in session.messages)
        budget = profile.view_budget(setup.context_window)
        if budget is not None and shown_before:
            budget = replace(budget, overview=False)
        first_look = profile.first_look_tokens if not session.messages else 0
        settings, redact = self.settings(), setup.redactor.redact
        configured, trusted = settings.check_command, settings.trusted

        def look() -> tuple[WorkspaceView, Checks]:
            view = WorkspaceView("")
            if budget is not None:
                view = workspace_view(self.workspace, words, budget, redact)
            elif first_look:
                view = first_look_view(self.workspace, words, first_look, redact)
            return view, profile.checks(self.workspace, configured, words, trusted=trusted)

        return await asyncio.to_thread(look) if profile.reads_workspace else look()

    async def _prompt_images(self, ticket: Ticket, setup: TurnSetup, emit: Emit) -> list[Part]:
        """The images sent with the prompt, as the parts its message keeps; one the store lost is said."""
        if not ticket.images:
            return []
        store = self.services.images
        described = await asyncio.to_thread(lambda: [(n, store.describe(i, n)) for i, n in ticket.images])
        for name, image in described:
            if image is None:
                emit(Notice(IMAGE_GONE_NOTICE.format(name=name)))
        if setup.images is not None and not setup.images.send:
            emit(Notice(NO_IMAGES_NOTICE.format(model=setup.model)))
        return [image_part(image) for _, image in described if image is not None]

    async def _pasted_pages(self, setup: TurnSetup, text: str, emit: Emit) -> str:
        """Where the profile says so (a window web_fetch's results would fill), the pages of the URLs
        the user pasted."""
        window, plan = setup.context_window, setup.plan
        if not plan.profile.fetches_pasted_urls or window is None or "web_fetch" not in plan.registry:
            return ""
        runner = ToolCallRunner(setup, emit, lambda _results: None)
        return await pasted_pages(runner, user_words(text), pages_budget(window))

    def grants(self, session: LiveSessionLike) -> Grants:
        """`always` grants last until the session changes (new, resume, clear); they are never saved."""
        if self._grants is None or self._grants[0] is not session:
            self._grants = (session, Grants())
            self.window.reset()
        return self._grants[1]

    def _background(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("background work failed: %s", task.exception())

    async def meter(self) -> Meter:
        """What the next request carries, against the threshold configured now (measured in a thread)."""
        self._sync_window()
        base_url = self.settings().base_url
        meter = await self.window.meter_off_loop(self.session().model_messages())
        return replace(meter, local=bool(base_url) and is_local(base_url or ""))

    def _sync_window(self) -> None:
        self.window.threshold = self.compact_threshold()
        self.grants(self.session())  # a different session starts with a fresh window (and grants)

    async def current_meter(self) -> Meter:
        """``meter()`` with the instructions and tools the next turn would send measured now, against
        the endpoint's window (asked for once per model: after a reload or resume, before any turn)."""
        await self.discover_context_window()
        plan = self.plan()
        self._sync_window()

        notes_block = await self.services.notes_blocks()

        text_format = self._tool_call_format(self.settings()) == "text"

        def overhead() -> int:
            instructions = self.system_prompt(plan, notes_block) + self.task_reminder()
            if text_format:  # measured as the turn sends it (loop.Turn._model_step)
                return self.window.locked(self.window.overhead, instructions + plan.text_tools_prompt, [])
            return self.window.locked(self.window.overhead, instructions, list(plan.specs))

        await asyncio.to_thread(overhead)
        return await self.meter()

    async def refresh_meter(self) -> Meter:
        """Measure the meter and send ``shiro/context/changed``."""
        async with self._meter_lock:
            meter = await self.meter()
            self.frontend.context_changed(meter)
        return meter

    def refresh_meter_soon(self) -> None:
        """``refresh_meter`` without waiting for it (from synchronous code); requests made while one
        waits to start are served by it."""
        if self._meter_queued:
            return
        self._meter_queued = True

        async def refresh() -> None:
            async with self._meter_lock:
                self._meter_queued = False
                meter = await self.meter()
                self.frontend.context_changed(meter)

        self._background(refresh())

    async def announce_context(self) -> Meter:
        """Send ``shiro/context/changed`` (after resume, new, clear, compact) and return the meter."""
        async with self._meter_lock:
            meter = await self.current_meter()
            self.frontend.context_changed(meter)
        return meter

    # --- /compact ------------------------------------------------------------------------------

    def _compaction(self) -> asyncio.Lock:
        """Held while ``/compact`` runs; a turn takes it briefly before it starts."""
        return self._compaction_lock

    async def compact(self) -> tuple[int, int]:
        """Manual ``/compact`` (spec §4.3): from now on the model sees one summary in place of its view.

        The history itself is kept (the session records a compaction marker; ``undo_compaction``
        brings the earlier view back). A plain model call with no tools over the model's view
        (pruned to fit the threshold when it is too big for one request, with the notes of what
        pruning dropped). Returns ``(before, after)``, the view's length; an empty history is a
        ``(0, 0)`` no-op. Refused while a chat runs or waits; chats sent meanwhile wait for it. A
        failed call changes nothing. The front end hears of its progress (``compaction_progress``).
        """
        if self.queue.busy or self._compaction().locked():
            raise ShiroError(BUSY_COMPACT)
        async with self._compaction():
            session = self.session()
            before = await self._compact_view(session)
        await self.announce_context()
        return before, len(session.model_messages()) if before else 0

    async def _compact_view(self, session: LiveSessionLike, *, auto: bool = False) -> int:
        """Summarise the model's view and mark the session there (hold the compaction lock).
        Returns the view's length before (0: nothing to compact); a failure raises ``ShiroError``."""
        view, count = list(session.model_messages()), len(session.messages)
        if not view:
            return 0
        self._progress("summarizing", len(view))
        await self.discover_context_window()  # after a reload or resume: the threshold fits the window
        try:
            text, digest_reason = await self._summary_of(session, view)
            if self.session() is not session or len(session.messages) != count:
                raise ShiroError(CHANGED_WHILE_COMPACTING)
        except BaseException:
            self._progress("failed", len(view))
            raise
        marker = session.compact(text, auto=auto, digest_reason=digest_reason)
        self.window.reset()
        self._progress("done", len(view), marker)
        return len(view)

    async def _summary_of(self, session: LiveSessionLike, view: list[Message]) -> tuple[str, str | None]:
        """The model's summary of ``view``, checked (``summary_check``) and asked for once more over the
        digest lines when it is not one; else Shiro's digest, with why the model's was refused."""
        goal_at = goal_index(session.messages)
        goal = str(session.messages[goal_at]["content"]) if goal_at is not None else ""
        tasks = "\n".join(todo.line for todo in session.tasks.todos)
        answer = last_answer(view)
        system, messages = compact_request(view, tasks)
        text = await self._compact_summary(system, await self._fitted(system, messages))
        problem = summary_problem(text, answer, goal)
        if problem is None:
            return text, None
        log.info("compaction: the model's summary was refused (%s); asking once more", problem)
        system, messages = compact_retry_request(view, tasks)
        retried = await self._compact_summary(system, messages)
        if summary_problem(retried, answer, goal) is None:
            return retried, None
        return await asyncio.to_thread(digest_summary, view, goal, tasks), problem

    async def _compact_when_full(self, session: LiveSessionLike, prompt: str, emit: Emit) -> None:
        """Automatic compaction: when the history with this prompt no longer fits the threshold, the
        model gets a summary in its place as after /compact (marked, undoable). A failed summary
        leaves pruning to fit the requests, and says so."""
        if not self.settings().auto_compact or not session.messages:
            return
        carried = [*session.model_messages(), {"role": "user", "content": prompt}]
        if await self.window.off_loop(self.window.carried, carried) <= self.window.threshold:
            return
        async with self._compaction():
            try:
                compacted = await self._compact_view(session, auto=True)
            except ShiroError as error:
                emit(Notice(AUTO_COMPACT_FAILED.format(reason=error.message)))
                return
        reason = getattr(session.compactions[-1], "digest_reason", None) if compacted else None
        if reason:
            emit(Notice(DIGEST_STANDS_IN.format(reason=reason)))

    async def undo_compaction(self) -> tuple[int, int]:
        """Undo the last compaction: the model's earlier view comes back, if it still fits the limit.

        Returns ``(before, after)``, the view's length; raises ``ShiroError`` saying why not.
        """
        if self.queue.busy or self._compaction().locked():
            raise ShiroError(BUSY_COMPACT.replace("/compact", "Undo compaction"))
        await self.current_meter()  # measures what instructions and tools cost now
        async with self._compaction():
            session = self.session()
            if not session.compactions:
                raise ShiroError(NOTHING_TO_UNDO)
            before = len(session.model_messages())
            tokens = await self.window.off_loop(self.window.carried, session.view_without_last_compaction())
            if tokens > self.window.threshold:
                raise ShiroError(UNDO_TOO_BIG.format(tokens=tokens, threshold=self.window.threshold))
            session.undo_compaction()
            self.window.reset()
        await self.announce_context()
        return before, len(session.model_messages())

    def _progress(self, phase: CompactionPhase, messages: int, marker: object | None = None) -> None:
        """Tell a front door that has ``compaction_progress(phase, messages, marker)`` how a
        compaction goes (``marker``: the one added, when done)."""
        listener = getattr(self.frontend, "compaction_progress", None)  # a front door may not listen
        if listener is not None:
            listener(phase, messages, marker)

    async def _fitted(self, system: str, messages: list[Message]) -> list[Message]:
        """The history as one request can carry it: pruned like the wire (with its notes) when too big."""
        self._sync_window()
        return (await self.window.view_off_loop(messages, estimate_text(system))).messages

    async def _compact_summary(self, system: str, messages: list[Message]) -> str:
        """The model's answer ('' when empty: the check refuses it); a failed call raises."""
        try:
            text = await self.generate(system, messages)
        except ProviderError as error:
            raise ShiroError(f"{COMPACT_FAILED} {error.message}") from None
        return text.strip()


@dataclass(frozen=True)
class HookedPrompt:
    """What the prompt hooks said: a block (the prompt is not sent), or context for the model."""

    blocked: str | None = None
    session: str = ""
    """SessionStart's context: before the user's words."""
    prompt: str = ""
    """UserPromptSubmit's context: after them."""


@dataclass
class TurnSaid:
    """What a turn's end says, once the turn is set up (``AgentRuntime._turn_end``)."""

    end: Callable[[Done, Emit], Done] | None = None


class FirstEventWrites:
    """A turn's own writes (the prompt history may wait on a lock and a disk sync, the task's
    registration on the database), kept off the path to the first token: run while the request is
    being sent, they would compete with it (and with the first delta) for the CPU and the GIL. They
    start once the turn's first event is out, or ``after_s`` in (a model slow to answer)."""

    def __init__(self, after_s: float) -> None:
        self._after_s = after_s
        self._work: list[Callable[[], object]] = []
        self._timer: asyncio.TimerHandle | None = None

    def add(self, work: Callable[[], object]) -> None:
        self._work.append(work)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._after_s, self.start)

    def start(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._work:
            self._work.pop(0)()


class EndpointNotSetUp(ShiroError):
    """No model endpoint is usable yet: a remote one without an API key."""


def _client_for(s: Settings) -> ModelClient:
    return make_client(s.base_url, s.api_key, s.api, max_retries=s.max_retries)


class _MeteredHistory:
    """The live session as the loop sees it: every model step also updates the context meter."""

    def __init__(self, session: LiveSessionLike, runtime: AgentRuntime) -> None:
        self._session = session
        self._runtime = runtime

    @property
    def messages(self) -> list[Message]:
        return self._session.model_messages()

    def append(self, *messages: Message) -> None:
        self._session.append(*messages)
        if any(m.get("role") == "assistant" for m in messages):
            self._runtime.refresh_meter_soon()

    def replace(self, messages: list[Message]) -> None:
        self._session.replace_model_view(messages)

    def add_usage(self, usage: Usage) -> None:
        self._session.add_usage(usage)
