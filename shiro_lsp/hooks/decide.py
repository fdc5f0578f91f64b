"""What a hook's run means, in Claude Code's terms.

- Exit 0: stdout may be a JSON object (below); otherwise, for ``UserPromptSubmit`` and
  ``SessionStart``, plain stdout is context the model reads.
- Exit 2: a block. stderr is the reason: the model reads it (``PreToolUse``: the call does not run;
  ``PostToolUse``: after the result; ``Stop``: the model goes on with it); for ``UserPromptSubmit``
  the prompt is not sent and the user reads it.
- Another exit, a timeout or a command that cannot start: a failure the user is told of; the turn
  goes on as if the hook were not there (Shiro's own approvals still stand).

The JSON object: ``decision: "block"`` with ``reason`` (and, for ``PreToolUse``, the older
``"approve"``); ``hookSpecificOutput.permissionDecision`` (``allow``/``deny``/``ask``) with
``permissionDecisionReason``; ``hookSpecificOutput.additionalContext``; ``continue: false`` with
``stopReason`` (the turn ends); ``systemMessage`` (shown to the user).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from shiro_lsp.hooks.config import Hook
from shiro_lsp.hooks.run import HookRun

Permission = Literal["allow", "deny", "ask"]
BLOCK_EXIT = 2
SHOWN = 600


@dataclass(frozen=True)
class HookOutcome:
    hook: Hook
    blocked: str | None = None
    """Why it blocked (exit 2, ``decision: block``, ``permissionDecision: deny``)."""
    permission: Permission | None = None
    context: str = ""
    stop: str | None = None
    """``continue: false``: the turn ends, for this reason."""
    message: str | None = None
    """What the user is told (``systemMessage``, a failure, a field Shiro does not apply)."""


def short(text: str, limit: int = SHOWN) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(hook: Hook) -> str:
    """A hook as a notice names it: its event, its file and its command."""
    return f'{hook.event} hook "{short(hook.command, 120)}" ({hook.source})'


def outcome_of(hook: Hook, run: HookRun) -> HookOutcome:
    if run.error is not None:
        return HookOutcome(hook, message=f"The {describe(hook)} failed: {run.error}. It was skipped.")
    if run.timed_out:
        return HookOutcome(
            hook,
            message=f"The {describe(hook)} did not finish within {hook.timeout_s:g} s; it was stopped and skipped.",
        )
    if run.exit_code == BLOCK_EXIT:
        reason = short(run.stderr, 4_000) or f"blocked by the {hook.event} hook (exit 2, nothing on stderr)"
        return HookOutcome(hook, blocked=reason)
    if run.exit_code != 0:
        first = short(run.stderr.strip().splitlines()[0] if run.stderr.strip() else "", 300)
        said = f": {first}" if first else ""
        return HookOutcome(hook, message=f"The {describe(hook)} failed with exit {run.exit_code}{said}.")
    data = _json_object(run.stdout)
    if data is None:
        plain = run.stdout.strip() if hook.event in ("UserPromptSubmit", "SessionStart") else ""
        return HookOutcome(hook, context=plain)
    return _from_json(hook, data)


def _json_object(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _from_json(hook: Hook, data: dict[str, Any]) -> HookOutcome:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    reason = _str(data.get("reason"))
    blocked: str | None = None
    permission: Permission | None = None
    decision = data.get("decision")
    if decision == "block":
        blocked = reason or f"blocked by the {hook.event} hook"
    elif decision == "approve" and hook.event == "PreToolUse":
        permission = "allow"
    asked = specific.get("permissionDecision")
    if hook.event == "PreToolUse" and asked in ("allow", "deny", "ask"):
        permission = asked
        if asked == "deny":
            blocked = (
                _str(specific.get("permissionDecisionReason")) or reason or "denied by the PreToolUse hook"
            )
    notes = [_str(data.get("systemMessage"))]
    if "updatedInput" in specific:
        notes.append(
            f"The {describe(hook)} gave an updatedInput; Shiro does not change a call's input, so it ran as the model wrote it."
        )
    stop = None
    if data.get("continue") is False:
        stop = _str(data.get("stopReason")) or f"the {hook.event} hook ended the turn"
    return HookOutcome(
        hook,
        blocked=blocked,
        permission=permission,
        context=_str(specific.get("additionalContext")),
        stop=stop,
        message=" ".join(n for n in notes if n) or None,
    )


def _str(value: Any) -> str:
    return short(value, 4_000) if isinstance(value, str) else ""
