"""Which hooks are configured, where each comes from, and which of them the user trusts.

Two files, in Claude Code's format (a ``hooks`` key: event → matcher groups → commands)::

    {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "...", "timeout": 30}]}]}}

- ``<state root>/settings.json`` (``~/.shiro-neko/settings.json``): the user's own; they run;
- ``<workspace>/.shiro/settings.json``: the repository's; each runs only once the user has trusted
  it (``hooks-trust.json`` in the state root, per workspace, pinned to the SHA-256 of the event,
  the matcher and the entry as written: an edited entry is untrusted again).

An event, group or entry that cannot be used is reported in words and skipped; the others still
load. Pure data and file reads: nothing here starts a process.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from shiro_lsp.bounded import MAX_JSON_DEPTH, json_depth
from shiro_lsp.fs.reader import read_confined
from shiro_lsp.state.jsonstore import JsonArrayFile, Reporter, log_reporter

Scope = Literal["user", "project"]

EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart")
PROJECT_FILE = ".shiro/settings.json"
MAX_SETTINGS_BYTES = 1024 * 1024
"""What is read of a settings file (hooks are a few lines each)."""
DEFAULT_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 600.0
COMMAND_LIMIT = 8_000


@dataclass(frozen=True)
class Hook:
    event: str
    matcher: str
    """A regular expression the whole tool name (SessionStart: the source) must match; '' or ``*``: any."""
    command: str
    timeout_s: float
    scope: Scope
    source: str
    """The file, as the user would name it (``.shiro/settings.json``, ``~/.shiro-neko/settings.json``)."""
    fingerprint: str
    """SHA-256 of the event, the matcher and the entry as written: what trust is pinned to (and the hook's id)."""

    def matches(self, subject: str, *aliases: str) -> bool:
        if self.matcher in ("", "*"):
            return True
        return any(re.fullmatch(self.matcher, name) for name in (subject, *aliases) if name)


@dataclass
class LoadedHooks:
    hooks: list[Hook] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def fingerprint(event: str, matcher: str, entry: Any) -> str:
    canonical = json.dumps([event, matcher, entry], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def parse_hooks(value: Any, scope: Scope, source: str, out: LoadedHooks) -> None:
    """The ``hooks`` object of one settings file into ``out``."""
    if not isinstance(value, dict):
        out.problems.append(f'{source}: "hooks" must be an object of events; no hooks were loaded from it.')
        return
    for event, groups in value.items():
        if event not in EVENTS:
            out.problems.append(
                f'{source}: the hook event "{event}" is not one Shiro runs ({", ".join(EVENTS)}); skipped.'
            )
            continue
        if not isinstance(groups, list):
            out.problems.append(f'{source}: "{event}" must be a list of matcher groups; skipped.')
            continue
        for group in groups:
            _parse_group(event, group, scope, source, out)


def _parse_group(event: str, group: Any, scope: Scope, source: str, out: LoadedHooks) -> None:
    where = f"{source}: a {event} group"
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        out.problems.append(f'{where} must be an object with a "hooks" list; skipped.')
        return
    matcher = group.get("matcher", "")
    if not isinstance(matcher, str):
        out.problems.append(f'{where} has a "matcher" that is not text; skipped.')
        return
    try:
        re.compile(matcher) if matcher not in ("", "*") else None
    except re.error as error:
        out.problems.append(f'{where} has a "matcher" that is not a valid pattern ({error}); skipped.')
        return
    for entry in group["hooks"]:
        parsed = _parse_entry(event, matcher, entry, scope, source)
        if isinstance(parsed, str):
            out.problems.append(parsed)
        else:
            out.hooks.append(parsed)


def _parse_entry(event: str, matcher: str, entry: Any, scope: Scope, source: str) -> Hook | str:
    where = f"{source}: a {event} hook"
    if not isinstance(entry, dict):
        return f"{where} is not an object; skipped."
    kind = entry.get("type", "command")
    if kind != "command":
        return f'{where} has type {json.dumps(kind)}; Shiro runs only "command" hooks. Skipped.'
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        return f'{where} has no "command"; skipped.'
    if len(command) > COMMAND_LIMIT:
        return f"{where} has a command over {COMMAND_LIMIT:,} characters; skipped."
    timeout = entry.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        return f'{where} ({command}): "timeout" must be a positive number of seconds; skipped.'
    return Hook(
        event,
        matcher,
        command,
        min(float(timeout), MAX_TIMEOUT_S),
        scope,
        source,
        fingerprint(event, matcher, entry),
    )


def read_settings(path: Path, label: str, scope: Scope, out: LoadedHooks) -> None:
    """The hooks of one settings file (a missing file, or one without ``hooks``, has none)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return
    except (OSError, UnicodeDecodeError) as error:
        out.problems.append(f"{label} could not be read ({error}); its hooks were not loaded.")
        return
    _read_hooks(text, label, scope, out)


def _read_project_settings(workspace: Path, out: LoadedHooks) -> None:
    """The repository's settings file through the confined reader: no link anywhere on the way, no
    FIFO or device, bounded in size."""
    found = read_confined(workspace, PROJECT_FILE.split("/"), MAX_SETTINGS_BYTES)
    if found.text is None:
        if found.problem is not None:
            out.problems.append(f"{found.problem} Its hooks were not loaded.")
        return
    _read_hooks(found.text, PROJECT_FILE, "project", out)


def _read_hooks(text: str, label: str, scope: Scope, out: LoadedHooks) -> None:
    if not text.strip():
        return
    if json_depth(text) > MAX_JSON_DEPTH:
        out.problems.append(f"{label} is nested too deep to read; its hooks were not loaded.")
        return
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        out.problems.append(
            f"{label} is not valid JSON ({error.msg} at line {error.lineno}); its hooks were not loaded."
        )
        return
    if not isinstance(value, dict):
        out.problems.append(f"{label} must hold a JSON object; its hooks were not loaded.")
        return
    if "hooks" in value:
        parse_hooks(value["hooks"], scope, label, out)


def load_hooks(workspace: Path, user_file: Path, user_label: str) -> LoadedHooks:
    """The user's hooks, then the workspace's."""
    out = LoadedHooks()
    read_settings(user_file, user_label, "user", out)
    project = workspace / PROJECT_FILE
    if project.is_symlink():
        out.problems.append(
            f"{PROJECT_FILE} is a symbolic link; Shiro does not follow it, so its hooks never run."
        )
    else:
        _read_project_settings(workspace, out)
    return out


def _valid_trust(item: Any) -> bool:
    return isinstance(item, dict) and all(isinstance(item.get(k), str) for k in ("workspace", "sha256"))


class HookTrust:
    """``<state root>/hooks-trust.json``: the repository hooks the user trusted, per workspace, pinned by hash."""

    def __init__(self, file: Path, workspace: Path, reporter: Reporter = log_reporter) -> None:
        self.file = JsonArrayFile(file, label="Hook trust", is_valid=_valid_trust, reporter=reporter)
        self.workspace = str(workspace)

    def trusted(self) -> set[str]:
        """The fingerprints trusted for this workspace."""
        return {item["sha256"] for item in self.file.view() if item["workspace"] == self.workspace}

    def set(self, hooks: list[Hook], trusted: bool) -> None:
        prints = {hook.fingerprint for hook in hooks}
        with self.file.locked_items() as items:
            kept = [i for i in items if not (i["workspace"] == self.workspace and i["sha256"] in prints)]
            if trusted:
                kept += [
                    {
                        "workspace": self.workspace,
                        "sha256": h.fingerprint,
                        "event": h.event,
                        "command": h.command,
                    }
                    for h in hooks
                ]
            if kept != items:
                self.file.save(kept)
