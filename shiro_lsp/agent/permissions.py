"""Which tool calls run, which ask the user, which are refused (spec §7.4).

Order for one call, first word wins:

1. **Guard**: irreversible shell commands (recursive or forced deletes, force pushes, hard
   resets, ``DROP TABLE``, raw-device writes, fork bombs, ``curl | sh``...) are refused. Nothing
   bypasses it: not ``yolo``, not an allow rule, not a grant.
2. **Restricted mode** (``trusted=False``): tools that change files or run commands are refused.
3. **Rules** (config over defaults, per tool): a decision, or ``{pattern: decision}`` matched
   against the call's subject (the bash command, the file path, the glob...). ``*`` spans any
   characters including newlines, ``?`` exactly one; the last matching pattern wins. A deny here
   is final.
4. Auto-approved tools (the session's tools) and session grants from ``always`` allow; ``yolo``
   folds ``ask`` into ``allow``. Grants are kept per origin: an ``always`` given to a call the
   model wrote as text (``origin="text"``, see ``adapt/formats/text_calls.py``) covers only text calls, and one
   given to a native call never covers a text call.

What a tool is (mutating or not, its default rule, auto-approved or not) is read from its
``ToolSpec``: the turn's registry, else Shiro's own tools (``KNOWN_SPECS``). A tool known to
neither (an MCP tool not registered, a typo) asks, and counts as mutating.
5. **Repeat guard**: the third identical allowed call in one turn asks anyway (``repeated``).

Pure: no I/O, no UI. The engine asks the user when the verdict is ``ask`` and fails closed.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeGuard

from shiro_lsp.fs.secrets import command_reads_secrets, is_secret_path, secrets_warning
from shiro_lsp.fs.secrets import refusal as secrets_refusal
from shiro_lsp.tools import KNOWN_SPECS, builtin_registry
from shiro_lsp.tools.base import JsonObject, RuleDecision, RuleEntry, ToolRegistry, ToolRules, ToolSpec

Rules = dict[str, RuleEntry]
Origin = Literal["native", "text"]
"""Where a call came from: the provider's native ``tool_calls``, or the model's text (adapt/formats/text_calls.py)."""

RULE_DECISIONS: tuple[RuleDecision, ...] = ("allow", "ask", "deny")
_STRICTNESS: dict[RuleDecision, int] = {"allow": 0, "ask": 1, "deny": 2}
REPEAT_LIMIT = 3

PATH_READERS: frozenset[str] = frozenset({"read_file", "read_many_files"})
"""Tools whose refusal of a secrets file is explained to the model as such."""


def is_rule_decision(value: object) -> TypeGuard[RuleDecision]:
    return isinstance(value, str) and value in RULE_DECISIONS


# --- guard -----------------------------------------------------------------------------------

_SEP = r"(?:^|[;&|(`]\s*|\bsudo\s+|\bexec\s+|\bxargs\s+)"
GUARD_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, flags), why)
    for pattern, flags, why in [
        (
            r"\brm\s[^;&|\n]*?(?<!\S)(?:-[a-zA-Z]*[rRf][a-zA-Z]*|--recursive|--force)(?!\S)",
            0,
            "recursive or forced delete",
        ),
        (r"\bgit\s+reset\s+[^;&|\n]*--hard\b", 0, "discards uncommitted work"),
        (r"\bgit\s+clean\s+[^;&|\n]*(?<!\S)-[a-zA-Z]*f", 0, "deletes untracked files"),
        (
            r"\bgit\s+push\b[^;&|\n]*(?:--force\b|--force-with-lease\b|(?<!\S)-[a-zA-Z]*f[a-zA-Z]*(?!\S)|(?<!\S)\+\S)",
            0,
            "rewrites remote history",
        ),
        (r"\bgit\s+branch\s+[^;&|\n]*(?<!\S)-D\b", 0, "deletes a branch without a merge check"),
        (r"\b(?:DROP|TRUNCATE)\s+(?:TABLE|DATABASE|SCHEMA)\b", re.IGNORECASE, "destroys database data"),
        (r"\bmkfs(?:\.\w+)?\b", 0, "writes to a raw device"),
        (r"\bdd\s+[^|;&\n]*\bof=/dev/", 0, "writes to a raw device"),
        (r">\s*/dev/(?:sd|nvme|disk|hd|vd|mmcblk)", 0, "writes to a raw device"),
        (r"\bchmod\s+(?:-[a-zA-Z]+\s+)*0?777\b", 0, "makes files world-writable"),
        (_SEP + r"(?:shutdown|reboot|halt|poweroff)\b", 0, "affects the whole machine"),
        (r":\(\)\s*\{.*\}\s*;\s*:", re.DOTALL, "fork bomb"),
        (
            r"\b(?:curl|wget)\b[^|\n]*\|\s*(?:sudo\s+)?(?:ba|z|k|da)?sh\b|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b",
            0,
            "pipes a download straight into a shell",
        ),
    ]
)


def guard(tool_name: str, input: JsonObject) -> str | None:
    """The refusal text for an irreversible shell command, or None."""
    if tool_name != "bash":
        return None
    command = input.get("command")
    if not isinstance(command, str) or not command:
        return None
    for regex, why in GUARD_RULES:
        if regex.search(command):
            return (
                f'refusing "{command[:120]}" ({why}). '
                "Ask the user to run it themselves if it is really needed."
            )
    return None


# --- patterns and rules ----------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)  # a rule's pattern is matched on every call of its tools
def _pattern_regex(pattern: str) -> re.Pattern[str]:
    body = "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern)
    return re.compile(f"{body}\\Z", re.DOTALL)


def match_pattern(pattern: str, subject: str) -> bool:
    """``*`` spans any characters (newlines too), ``?`` exactly one; the whole subject must match."""
    return pattern == "*" or _pattern_regex(pattern).match(subject) is not None


def parse_rules(raw: object) -> Rules:
    """A ``permission`` config block with anything malformed dropped (a typo never widens access)."""
    if not isinstance(raw, Mapping):
        return {}
    out: Rules = {}
    for tool, entry in raw.items():
        if not isinstance(tool, str):
            continue
        if is_rule_decision(entry):
            out[tool] = entry
        elif isinstance(entry, Mapping):
            rules: ToolRules = {p: d for p, d in entry.items() if isinstance(p, str) and is_rule_decision(d)}
            if rules:
                out[tool] = rules
    return out


@dataclass(frozen=True)
class _Resolved:
    decision: RuleDecision
    pattern: str | None


def _resolve_one(rules: ToolRules, subject: str | None) -> _Resolved:
    hit = _Resolved("ask", None)
    for pattern, decision in rules.items():
        if pattern == "*" or (subject is not None and match_pattern(pattern, subject)):
            hit = _Resolved(decision, pattern)
    return hit


def _resolve(entry: RuleEntry, subjects: list[str]) -> _Resolved:
    """Several subjects (a batch read) are judged one by one; the strictest outcome stands."""
    if isinstance(entry, str):
        return _Resolved(entry, None)
    outcomes = [_resolve_one(entry, s) for s in subjects] or [_resolve_one(entry, None)]
    return max(outcomes, key=lambda r: _STRICTNESS[r.decision])


# --- session state ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Grant:
    """One ``always`` answer: calls of ``tool_name`` from ``origin`` matching ``pattern`` run unasked."""

    tool_name: str
    pattern: str
    origin: Origin = "native"


class Grants:
    """Patterns approved with ``always`` for this session only; the session clears them on
    new / resume / clear. Never persisted. Kept per origin: a grant covers calls of its origin only.

    A grant for a call read from text (or run by Shiro from text) covers that one subject exactly,
    never a pattern: "Always" for ``python3 main.py`` never lets ``python3 other.py``, read from an
    attached file or a tool's output, run unasked."""

    def __init__(self) -> None:
        self._by_tool: dict[tuple[str, Origin], list[str]] = {}

    def grant(self, tool_name: str, pattern: str, origin: Origin = "native") -> None:
        patterns = self._by_tool.setdefault((tool_name, origin), [])
        if pattern not in patterns:
            patterns.append(pattern)

    def patterns(self, tool_name: str, origin: Origin = "native") -> list[str]:
        return list(self._by_tool.get((tool_name, origin), []))

    def allows(self, tool_name: str, subjects: list[str], origin: Origin = "native") -> str | None:
        """The pattern granted to calls of this origin covering every subject of the call, or None."""
        for pattern in self._by_tool.get((tool_name, origin), []):
            if origin == "text":
                if subjects and all(s == pattern for s in subjects):
                    return pattern
            elif pattern == "*" or (subjects and all(match_pattern(pattern, s) for s in subjects)):
                return pattern
        return None

    def listed(self) -> list[Grant]:
        """Every grant, in the order given."""
        return [
            Grant(tool, pattern, origin)
            for (tool, origin), patterns in self._by_tool.items()
            for pattern in patterns
        ]

    def revoke(self, grant: Grant) -> bool:
        """Take a grant back: the next matching call asks again. False when there was no such grant."""
        patterns = self._by_tool.get((grant.tool_name, grant.origin), [])
        if grant.pattern not in patterns:
            return False
        patterns.remove(grant.pattern)
        if not patterns:
            del self._by_tool[(grant.tool_name, grant.origin)]
        return True

    def clear(self) -> None:
        self._by_tool.clear()

    def __len__(self) -> int:
        return sum(len(p) for p in self._by_tool.values())


class RepeatGuard:
    """Counts identical calls (``tool:json(input)``) within one turn; reset at each new turn."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    @staticmethod
    def key(tool_name: str, input: object) -> str:
        return f"{tool_name}:{json.dumps(input, separators=(',', ':'), ensure_ascii=False)}"

    def count(self, tool_name: str, input: object) -> int:
        """Record one more call and return how many identical calls this turn has seen."""
        key = self.key(tool_name, input)
        self._counts[key] = self._counts.get(key, 0) + 1
        return self._counts[key]

    def reset(self) -> None:
        self._counts.clear()


# --- the policy ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    decision: RuleDecision
    reason: str | None = None
    """Why a call is refused, fit for a ``notice`` (set on deny only)."""
    matched_pattern: str | None = None
    suggested_pattern: str = "*"
    """What ``always`` would grant: ``<first word> *`` for bash, the spec's ``grant`` (web_fetch: the
    host), else ``*``; for a call read from text, its one subject."""
    repeated: bool = False
    warning: str | None = None
    """What the approval card must say besides the call (a command that reads a secrets file)."""


def _default_subjects(input: JsonObject) -> list[str]:
    for key in ("command", "path", "pattern", "ref", "url", "description", "name"):
        value = input.get(key)
        if isinstance(value, str):
            return [value]
    return []


class PermissionPolicy:
    def __init__(
        self,
        rules: Mapping[str, object] | None = None,
        *,
        yolo: bool = False,
        trusted: bool = True,
        registry: ToolRegistry | None = None,
    ) -> None:
        self.rules = parse_rules(rules) if rules is not None else {}
        self.yolo = yolo
        self.trusted = trusted
        self.registry = registry if registry is not None else builtin_registry()

    def spec(self, tool_name: str) -> ToolSpec | None:
        """The tool's spec: the turn's registry first, then Shiro's own tools; None when unknown."""
        return self.registry.spec(tool_name) or KNOWN_SPECS.get(tool_name)

    def subjects(self, tool_name: str, input: JsonObject) -> list[str]:
        found = self.registry.subjects(tool_name, input)
        return found if found is not None else _default_subjects(input)

    def suggest(self, tool_name: str, input: JsonObject, origin: Origin = "native") -> str:
        """What ``always`` grants: for a call read from text, its one subject (see :class:`Grants`)."""
        if origin == "text":
            subjects = self.subjects(tool_name, input)
            return subjects[0] if len(subjects) == 1 else json.dumps(input, sort_keys=True)
        spec = self.spec(tool_name)
        if spec is not None and spec.grant is not None:
            return spec.grant(input)
        command = input.get("command")
        if tool_name != "bash" or not isinstance(command, str) or not command.split():
            return "*"
        return f"{command.split()[0]} *"

    def is_mutating(self, tool_name: str) -> bool:
        spec = self.spec(tool_name)
        return True if spec is None else spec.mutating

    def entry_for(self, tool_name: str) -> RuleEntry:
        """Config replaces the default for a tool; wildcard keys like ``mcp__*`` cover many tools."""
        if tool_name in self.rules:
            return self.rules[tool_name]
        for key, entry in self.rules.items():
            if ("*" in key or "?" in key) and match_pattern(key, tool_name):
                return entry
        spec = self.spec(tool_name)
        return spec.default_rule if spec is not None else "ask"

    def never_runs_unasked(self, tool_name: str) -> bool:
        """True when no call of the tool can run without a person's answer (its rule is a plain ask)."""
        spec = self.spec(tool_name)
        if self.yolo or (spec is not None and spec.auto_approved):
            return False
        return self.entry_for(tool_name) == "ask"

    def check(
        self,
        tool_name: str,
        input: JsonObject,
        grants: Grants | None = None,
        repeat_guard: RepeatGuard | None = None,
        origin: Origin = "native",
    ) -> Verdict:
        suggested = self.suggest(tool_name, input, origin)
        refusal = guard(tool_name, input)
        if refusal:
            return Verdict("deny", refusal, None, suggested)
        if not self.trusted and self.is_mutating(tool_name):
            reason = (
                f"Refused: {tool_name} can change files or run commands, and this workspace is in "
                "restricted mode (not trusted). Trust the workspace to allow it."
            )
            return Verdict("deny", reason, None, suggested)

        entry = self.entry_for(tool_name)
        subjects = self.subjects(tool_name, input)
        resolved = _resolve(entry, subjects)
        if resolved.decision == "deny":
            if isinstance(entry, dict) and resolved.pattern is not None:
                reason = f'Refused by the permission rule {tool_name}: "{resolved.pattern}" = deny.'
            else:
                reason = f"Refused by the permission rules: {tool_name} is denied."
            secret = next((s for s in subjects if tool_name in PATH_READERS and is_secret_path(s)), None)
            if secret is not None:
                reason = f"{secrets_refusal(secret)} ({reason})"
            return Verdict("deny", reason, resolved.pattern, suggested)

        decision, pattern = resolved.decision, resolved.pattern
        granted = grants.allows(tool_name, subjects, origin) if grants is not None else None
        spec = self.spec(tool_name)
        if spec is not None and spec.auto_approved:
            decision = "allow"
        elif granted is not None:
            decision, pattern = "allow", granted
        elif decision == "ask" and self.yolo:
            decision = "allow"

        if repeat_guard is not None:
            seen = repeat_guard.count(tool_name, input)
            if decision == "allow" and seen >= REPEAT_LIMIT:
                return Verdict("ask", None, pattern, suggested, repeated=True)
        warning = secrets_reading_warning(tool_name, input)
        if warning is not None:
            # Whatever a rule, a grant or yolo said: a command that names a secrets file asks.
            return Verdict("ask", None, pattern, suggested, warning=warning)
        return Verdict(decision, None, pattern, suggested)


def secrets_reading_warning(tool_name: str, input: JsonObject) -> str | None:
    """For bash: the warning for a command that visibly reads a secrets file, else None."""
    command = input.get("command")
    if tool_name != "bash" or not isinstance(command, str):
        return None
    files = command_reads_secrets(command)
    return secrets_warning(files) if files else None
