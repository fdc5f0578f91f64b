"""Hooks: the user's commands run at fixed points of a turn, in Claude Code's format (``config.py``).

Events: ``PreToolUse`` and ``PostToolUse`` (around each tool call; ``matcher`` is a pattern for the
tool's name, Shiro's or Claude Code's: ``bash`` or ``Bash``, ``edit_file`` or ``Edit``),
``UserPromptSubmit`` (before a prompt reaches the model), ``Stop`` (when the model has answered)
and ``SessionStart`` (before a session's first turn here; ``matcher``: ``startup`` or ``resume``).
Each gets the event as JSON on stdin (``run.py``); what its exit code and output mean is in
``decide.py``.

Which run: the user's own (``<state root>/settings.json``) always; a repository's
(``.shiro/settings.json``) only once trusted, entry by entry; none at all in restricted mode. A
``permissionDecision: "allow"`` counts only from the user's own hooks (it skips the question, never
one of Shiro's refusals): a repository's hook can block a call, never approve one. What a hook
says that reaches the model passes the redactor.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from shiro_lsp.errors import NotFound, StateUnavailable
from shiro_lsp.hooks.config import EVENTS, PROJECT_FILE, Hook, HookTrust, LoadedHooks, load_hooks
from shiro_lsp.hooks.decide import HookOutcome, describe, outcome_of
from shiro_lsp.hooks.run import run_hook
from shiro_lsp.state.jsonstore import Reporter, log_reporter
from shiro_lsp.tools.peer_names import claude_name

UNTRUSTED_NOTICE = (
    "{file} has {count} hook(s) you have not trusted, so they do not run. Review them (each with its "
    "exact command) in Shiro: Show hooks, or with `shiro-lsp hooks`."
)
RESTRICTED_NOTICE = "No hook runs: this workspace is in restricted mode (not trusted)."
MAX_STOP_CONTINUES = 5


@dataclass(frozen=True)
class HookStatus:
    hook: Hook
    trusted: bool
    """The user's own, or a repository's the user trusted."""
    runs: bool
    """Trusted, and not in restricted mode."""


@dataclass(frozen=True)
class HookListing:
    hooks: list[HookStatus]
    problems: list[str]
    restricted: bool


@dataclass(frozen=True)
class PreToolVerdict:
    """What the checks before a tool call decided (the permission rules still ask their own)."""

    refusal: str | None = None
    """The call does not run; the model reads this."""
    permission: Literal["allow", "ask"] | None = None
    """``allow``: no question (the rules' refusals still stand); ``ask``: a question even if a rule allows it."""
    stop: str | None = None
    """The turn ends after this step, for this reason."""


ALLOWED = PreToolVerdict()


@dataclass(frozen=True)
class PromptVerdict:
    blocked: str | None = None
    context: str = ""


class HookSettings:
    """The hooks of one workspace: the files, the trust, and which run."""

    def __init__(
        self,
        workspace: Path,
        user_file: Path,
        trust_file: Path,
        *,
        trusted: Callable[[], bool],
        user_label: str,
        reporter: Reporter = log_reporter,
    ) -> None:
        self.workspace = workspace
        self.user_file = user_file
        self.user_label = user_label
        self.trust = HookTrust(trust_file, workspace, reporter)
        self.trusted = trusted
        self.reporter = reporter
        self._reported: set[str] = set()

    def listing(self) -> HookListing:
        """Every configured hook with its trust; blocking (file reads)."""
        loaded = load_hooks(self.workspace, self.user_file, self.user_label)
        trusted_prints: set[str] = set()
        if any(h.scope == "project" for h in loaded.hooks):
            try:
                trusted_prints = self.trust.trusted()
            except StateUnavailable as error:  # unreadable: no repository hook counts as trusted
                loaded.problems.append(f"{error.message} Until then no hook of {PROJECT_FILE} runs.")
        for problem in loaded.problems:
            if problem not in self._reported:
                self._reported.add(problem)
                self.reporter(problem)
        restricted = not self.trusted()
        statuses = []
        for hook in loaded.hooks:
            trusted = hook.scope == "user" or hook.fingerprint in trusted_prints
            statuses.append(HookStatus(hook, trusted, trusted and not restricted))
        return HookListing(statuses, loaded.problems, restricted)

    async def current(self) -> HookListing:
        return await asyncio.to_thread(self.listing)

    def set_trust(self, ids: Sequence[str], trusted: bool) -> HookListing:
        """Trust or untrust the repository's hooks with these ids (``all``: every one). Blocking."""
        loaded: LoadedHooks = load_hooks(self.workspace, self.user_file, self.user_label)
        project = [h for h in loaded.hooks if h.scope == "project"]
        if "all" in ids:
            chosen = project
        else:
            chosen = []
            for wanted in ids:  # an id, or its first 8 characters or more
                found = [h for h in project if len(wanted) >= 8 and h.fingerprint.startswith(wanted)]
                if len({h.fingerprint for h in found}) != 1:
                    raise NotFound(
                        f"No one hook of {PROJECT_FILE} has the id {wanted} (it may have been edited since it "
                        "was listed: list the hooks again)."
                    )
                chosen += found
        if chosen:
            self.trust.set(chosen, trusted)
        return self.listing()


class TurnHooks:
    """The hooks that run during one turn, and what each event's hooks decide."""

    def __init__(
        self,
        hooks: Sequence[Hook],
        *,
        cwd: Path,
        base: Mapping[str, Any],
        secrets: Sequence[str],
        redact: Callable[[str], str],
        notify: Callable[[str], None],
    ) -> None:
        self.hooks = list(hooks)
        self.cwd = cwd
        self.base = dict(base)
        self.secrets = list(secrets)
        self.redact = redact
        self.notify = notify
        self.stop_continues = 0

    def has(self, event: str) -> bool:
        return any(h.event == event for h in self.hooks)

    async def _run(
        self, event: str, payload: dict[str, Any], subject: str = "", *aliases: str
    ) -> list[HookOutcome]:
        chosen = [h for h in self.hooks if h.event == event and h.matches(subject, *aliases)]
        if not chosen:
            return []
        body = {**self.base, "hook_event_name": event, **payload}
        runs = await asyncio.gather(
            *(run_hook(h.command, body, self.cwd, h.timeout_s, self.secrets) for h in chosen)
        )
        outcomes = [outcome_of(h, r) for h, r in zip(chosen, runs, strict=True)]
        for outcome in outcomes:
            if outcome.message:
                self.notify(self.redact(outcome.message))
        return outcomes

    def _joined(self, texts: list[str]) -> str:
        return self.redact("\n".join(t for t in texts if t))

    async def pre_tool_use(self, call_id: str, tool: str, input: Mapping[str, Any]) -> PreToolVerdict:
        payload = {"tool_name": tool, "tool_input": self._tool_input(input), "tool_use_id": call_id}
        outcomes = await self._run("PreToolUse", payload, tool, claude_name(tool) or "")
        stop = self._stopped(outcomes)
        refusals = [o for o in outcomes if o.blocked]
        if refusals:
            for o in refusals:
                self.notify(self.redact(f"The {describe(o.hook)} blocked {tool}: {o.blocked}"))
            return PreToolVerdict(refusal=self._joined([o.blocked or "" for o in refusals]), stop=stop)
        if any(o.permission == "ask" for o in outcomes):
            return PreToolVerdict(permission="ask", stop=stop)
        if any(o.permission == "allow" and o.hook.scope == "user" for o in outcomes):
            return PreToolVerdict(permission="allow", stop=stop)
        return PreToolVerdict(stop=stop)

    async def post_tool_use(self, call_id: str, tool: str, input: Mapping[str, Any], output: str) -> str:
        """What the hooks add to the result the model reads ('' for nothing)."""
        payload = {
            "tool_name": tool,
            "tool_input": self._tool_input(input),
            "tool_response": {"output": output},
            "tool_use_id": call_id,
        }
        outcomes = await self._run("PostToolUse", payload, tool, claude_name(tool) or "")
        self._stopped(outcomes)
        for o in outcomes:
            if o.blocked:
                self.notify(self.redact(f"The {describe(o.hook)} says about {tool}: {o.blocked}"))
        said = self._joined([o.blocked or "" for o in outcomes] + [o.context for o in outcomes])
        return f"\n\n[PostToolUse hook]\n{said}" if said else ""

    async def user_prompt_submit(self, prompt: str) -> PromptVerdict:
        outcomes = await self._run("UserPromptSubmit", {"prompt": prompt})
        blocked = [o.blocked for o in outcomes if o.blocked] + [o.stop for o in outcomes if o.stop]
        if blocked:
            return PromptVerdict(blocked="\n".join(b for b in blocked if b))
        return PromptVerdict(context=self._joined([o.context for o in outcomes]))

    async def stop(self, last_message: str) -> str | None:
        """The reason a Stop hook gives for the model to go on (None: the turn ends), at most
        :data:`MAX_STOP_CONTINUES` times a turn."""
        if not self.has("Stop") or self.stop_continues >= MAX_STOP_CONTINUES:
            return None
        payload = {"stop_hook_active": self.stop_continues > 0, "last_assistant_message": last_message}
        outcomes = await self._run("Stop", payload)
        if self._stopped(outcomes) is not None:
            return None
        reasons = [o.blocked for o in outcomes if o.blocked]
        if not reasons:
            return None
        self.stop_continues += 1
        for o in outcomes:
            if o.blocked:
                self.notify(self.redact(f"The {describe(o.hook)} sent the model back: {o.blocked}"))
        return self._joined([r or "" for r in reasons])

    async def session_start(self, source: Literal["startup", "resume"]) -> str:
        outcomes = await self._run("SessionStart", {"source": source}, source)
        for o in outcomes:
            if o.blocked:
                self.notify(self.redact(f"The {describe(o.hook)} said: {o.blocked}"))
        return self._joined([o.context for o in outcomes])

    def _stopped(self, outcomes: list[HookOutcome]) -> str | None:
        for o in outcomes:
            if o.stop:
                self.notify(self.redact(f"The {describe(o.hook)} ended the turn: {o.stop}"))
                return o.stop
        return None

    def _tool_input(self, input: Mapping[str, Any]) -> dict[str, Any]:
        """The call's input, with ``file_path`` (absolute) beside a ``path``, as Claude Code's hooks read it."""
        out = dict(input)
        path = out.get("path")
        if isinstance(path, str) and path and "file_path" not in out:
            out["file_path"] = str(self.cwd / path)
        return out


@dataclass
class SessionHookState:
    """What the runtime remembers between turns: sessions whose SessionStart ran, notices given."""

    started: set[str] = field(default_factory=set)
    told: set[tuple[str, frozenset[str]]] = field(default_factory=set)


def untrusted_notice(listing: HookListing, session_id: str, state: SessionHookState) -> str | None:
    """Once a session (and again when the set changes): the repository's hooks that do not run, and why."""
    if listing.restricted and listing.hooks:
        key = (session_id, frozenset({"restricted"}))
        if key not in state.told:
            state.told.add(key)
            return RESTRICTED_NOTICE
        return None
    waiting = frozenset(s.hook.fingerprint for s in listing.hooks if not s.trusted)
    if not waiting or (session_id, waiting) in state.told:
        return None
    state.told.add((session_id, waiting))
    return UNTRUSTED_NOTICE.format(file=PROJECT_FILE, count=len(waiting))


__all__ = [
    "ALLOWED",
    "EVENTS",
    "Hook",
    "HookListing",
    "HookSettings",
    "HookStatus",
    "PreToolVerdict",
    "PromptVerdict",
    "SessionHookState",
    "TurnHooks",
    "untrusted_notice",
]
