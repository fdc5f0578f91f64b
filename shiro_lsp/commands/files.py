"""Custom commands as files: where they are found and how one is read (front matter, body, limits).

A command is a Markdown file whose name (without ``.md``, or ``.prompt.md``) is the command's name:

- ``<state root>/commands/*.md`` (``StatePaths.commands_dir``): the user's own (scope ``user``);
- in each workspace folder ``.shiro/commands/*.md``, ``.claude/commands/*.md`` (Claude Code's
  format) and ``.github/prompts/*.prompt.md`` (Copilot's prompt files): the repository's (``project``).
  Subfolders are read too (Claude Code's namespaces); the name is still the file's.

The optional YAML front matter holds ``description``, ``argument-hint``, ``allowed-tools`` (Claude
Code: ``Read, Grep, Bash(git diff:*)``), ``tools`` (Copilot: ``['codebase', 'editFiles']``),
``agent``/``mode`` and ``model``. A file that cannot be used is still a :class:`CustomCommand`, with
its ``error``. Files are read through the one confined reader (``fs/reader.py``): a symbolic link, a hard-linked file or a
special file is refused, so a repository cannot make a command of a file outside it.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from shiro_lsp.errors import ShiroError, ToolError
from shiro_lsp.fs.reader import opening, read_confined
from shiro_lsp.tools import KNOWN_SPECS, READ_ONLY_TOOLS
from shiro_lsp.tools.peer_names import CLAUDE_TOOLS, COPILOT_TOOLS, WEB

Scope = Literal["user", "project"]

PROJECT_DIRS: tuple[tuple[str, str], ...] = (
    (".shiro/commands", ".md"),
    (".claude/commands", ".md"),
    (".github/prompts", ".prompt.md"),
)
FILE_CAP = 64 * 1024
FILES_PER_FOLDER = 200
DEPTH = 3
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")
INPUT = re.compile(r"\$\{input:([A-Za-z_][A-Za-z0-9_-]*)(?::([^}]*))?\}")
SHELL = re.compile(r"!`([^`\n]+)`")
BASH_PATTERN = re.compile(r"Bash\((.*)\)", re.DOTALL)

SHELL_NOTE = (
    "{count} shell line(s) (!`…`) are not run by Shiro: the model gets each as a command it may run "
    "(bash asks first)"
)
MODEL_NOTE = "model {model} is not used: a repository's command cannot choose the model"

AGENTS: dict[str, tuple[str, bool]] = {
    "default": ("default", False),
    "agent": ("default", False),
    "edit": ("default", False),
    "ask": ("default", True),
    "quick": ("quick", False),
    "deep": ("deep", False),
    "plan": ("plan", True),
    "review": ("review", True),
}
"""An ``agent``/``mode`` value: the Shiro agent variant it runs, and whether only read-only tools are offered."""


@dataclass(frozen=True)
class InputVar:
    """A Copilot ``${input:name}`` or ``${input:name:placeholder}`` variable of the body."""

    name: str
    placeholder: str = ""


@dataclass(frozen=True)
class ToolLimit:
    """The tools a command's front matter allows (None in a field: no limit from it)."""

    names: frozenset[str] = frozenset()
    patterns: tuple[str, ...] = ()
    """``mcp__server__*`` globs."""
    bash: tuple[str, ...] | None = None
    """Claude Code's ``Bash(git add:*)``: the commands bash may run (``*`` at the end: a prefix)."""

    def allows(self, tool: str) -> bool:
        return tool in self.names or any(fnmatch.fnmatchcase(tool, p) for p in self.patterns)

    def refusal(self, command: str, tool: str, input: Mapping[str, Any]) -> str | None:
        """Why ``/command`` does not let this call run (None: it may, subject to the usual approvals)."""
        if not self.allows(tool):
            shown = ", ".join(sorted(self.names) + list(self.patterns)) or "none"
            return f"Not run: /{command} allows only these tools: {shown}."
        if tool == "bash" and self.bash is not None:
            line = input.get("command")
            if not isinstance(line, str) or not bash_allowed(line, self.bash):
                return (
                    f"Not run: /{command} allows only these commands: {', '.join(self.bash)} "
                    "(each part of a command line must match one; no $(…) or backticks)."
                )
        return None


SHELL_JOINS = re.compile(r"&&|\|\||;|\||\n|&")


def bash_allowed(line: str, rules: tuple[str, ...]) -> bool:
    """Whether every part of a command line (split at ``&&``, ``||``, ``;``, ``|``, ``&``, newlines)
    matches a rule (``git add*``: a prefix; other rules: the exact command). Command substitution
    could run anything, so a line with ``$(`` or a backtick never matches."""
    if "$(" in line or "`" in line or "<(" in line or ">(" in line:
        return False
    parts = [part.strip() for part in SHELL_JOINS.split(line)]
    return bool(parts) and all(part and any(_matches(part, rule) for rule in rules) for part in parts)


def _matches(part: str, rule: str) -> bool:
    """``git add *``: ``git add`` and ``git add …``; ``npm run test*``: any command starting so."""
    words = " ".join(part.split())
    if not rule.endswith("*"):
        return words == " ".join(rule.split())
    prefix = rule[:-1]
    if prefix.endswith(" "):
        stem = " ".join(prefix.split())
        return words == stem or words.startswith(stem + " ")
    return words.startswith(" ".join(prefix.split()))


@dataclass(frozen=True)
class CustomCommand:
    name: str
    scope: Scope
    source: str
    """The file, as the user would name it (``.claude/commands/review.md``, ``~/.shiro-neko/commands/x.md``)."""
    body: str = ""
    description: str = ""
    argument_hint: str = ""
    inputs: tuple[InputVar, ...] = ()
    agent: str | None = None
    read_only: bool = False
    limit: ToolLimit | None = None
    model: str | None = None
    notes: tuple[str, ...] = ()
    """What of the file Shiro does not do as written (unknown tools, a model it does not use, shell lines)."""
    error: str | None = None
    shadowed_by: str | None = None
    """A built-in or an earlier command with this name: this one never runs."""

    @property
    def runnable(self) -> bool:
        return self.error is None and self.shadowed_by is None


@dataclass
class Found:
    """One file to read: where it lies and what it would be called."""

    name: str
    scope: Scope
    source: str
    base: Path
    relative: str
    prompt_file: bool = False
    problem: str | None = None


@dataclass
class _FrontMatter:
    values: dict[str, Any] = field(default_factory=dict)
    body: str = ""


def display_path(path: Path) -> str:
    """A path under the user's home as ``~/...``."""
    home = Path.home()
    return f"~/{path.relative_to(home).as_posix()}" if path.is_relative_to(home) else str(path)


def find_files(folder: Path, label: str, suffix: str, scope: Scope, prefix: str = "") -> list[Found]:
    """The command files under ``folder / label`` (``prefix``: how its paths are shown)."""
    found: list[Found] = []
    top = folder / label

    def walk(directory: Path, depth: int) -> None:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if len(found) >= FILES_PER_FOLDER:
                return
            relative = Path(entry.path).relative_to(folder).as_posix()
            if entry.is_dir(follow_symlinks=False) and depth < DEPTH:
                walk(Path(entry.path), depth + 1)
                continue
            if not entry.name.endswith(suffix) or entry.name.startswith("."):
                continue
            name = entry.name[: -len(suffix)]
            item = Found(name, scope, prefix + relative, folder, relative, prompt_file=suffix == ".prompt.md")
            if entry.is_symlink():
                item.problem = "it is a symbolic link, and Shiro does not follow links here"
            found.append(item)

    if top.is_dir() and not top.is_symlink():
        walk(top, 1)
    elif top.is_symlink():
        found.append(Found("", scope, prefix + label, folder, label, problem="the folder is a symbolic link"))
    return found


def read_command(item: Found) -> CustomCommand:
    """One file as a command (with its ``error`` when it cannot be used). Blocking file I/O."""
    if item.problem is not None:
        return CustomCommand(item.name or item.relative, item.scope, item.source, error=item.problem)
    if item.scope == "user":  # the state root, which the jail keeps every tool out of
        found = read_confined(item.base, Path(item.relative).parts, FILE_CAP)
        if found.text is None:
            return CustomCommand(item.name, item.scope, item.source, error=found.problem or "it is gone")
        return parse_command(item.name, item.scope, item.source, found.text)
    try:
        with opening(item.base, item.relative, limit=FILE_CAP + 1) as (opened, handle):
            if opened.size > FILE_CAP:
                raise ToolError(f"it is {opened.size:,} bytes, over the {FILE_CAP:,}-byte limit")
            data = handle.read(FILE_CAP + 1)
        text = data.decode("utf-8")
    except (ToolError, ShiroError) as error:
        return CustomCommand(item.name, item.scope, item.source, error=error.message)
    except UnicodeDecodeError as error:
        return CustomCommand(
            item.name, item.scope, item.source, error=f"it is not UTF-8 (byte {error.start})"
        )
    except OSError as error:
        return CustomCommand(
            item.name, item.scope, item.source, error=f"it could not be read: {error.strerror}"
        )
    return parse_command(item.name, item.scope, item.source, text, prompt_file=item.prompt_file)


def parse_command(
    name: str, scope: Scope, source: str, text: str, *, prompt_file: bool = False
) -> CustomCommand:
    """A command from its file's text."""
    try:
        front = _split_front_matter(text)
    except ValueError as error:
        return CustomCommand(name, scope, source, error=str(error))
    values = front.values
    if prompt_file and isinstance(values.get("name"), str) and values["name"].strip():
        name = values["name"].strip()  # Copilot: the front matter's name, else the file's
    if not NAME.fullmatch(name):
        return CustomCommand(
            name, scope, source, error=f'"{name}" cannot be typed as a command (letters, digits, - _ . :)'
        )
    try:
        description = _text(values, "description")
        hint = _text(values, "argument-hint")
        model = _text(values, "model") or None
        agent_name = _text(values, "agent") or _text(values, "mode")
        tools = _names(values.get("allowed-tools"), "allowed-tools") + _names(values.get("tools"), "tools")
    except ValueError as error:
        return CustomCommand(name, scope, source, error=str(error))
    notes: list[str] = []
    agent, read_only = None, False
    if agent_name:
        known = AGENTS.get(agent_name.lower())
        if known is None:
            notes.append(f'agent "{agent_name}" is not one of Shiro\'s; your chosen agent runs')
        else:
            agent, read_only = known
    limit = _limit(tools, notes) if ("allowed-tools" in values or "tools" in values) else None
    if model and scope == "project":
        notes.append(MODEL_NOTE.format(model=model))
        model = None
    body = front.body.strip("\n")
    shell = SHELL.findall(body)
    if shell:
        notes.append(SHELL_NOTE.format(count=len(shell)))
    unfilled = sorted(set(re.findall(r"\$\{((?!input:|workspaceFolder)[A-Za-z][\w:]*)\}", body)))
    if unfilled:
        notes.append("not filled in by Shiro: " + ", ".join(f"${{{v}}}" for v in unfilled))
    if not body.strip():
        return CustomCommand(name, scope, source, description=description, error="its body is empty")
    return CustomCommand(
        name,
        scope,
        source,
        body=body,
        description=description or _first_line(body),
        argument_hint=hint,
        inputs=_inputs(body),
        agent=agent,
        read_only=read_only,
        limit=limit,
        model=model,
        notes=tuple(notes),
    )


def _split_front_matter(text: str) -> _FrontMatter:
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return _FrontMatter({}, text)
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in ("---", "...")), None)
    if end is None:
        raise ValueError("its front matter has no closing --- line")
    header = "".join(lines[1:end])
    try:
        values = yaml.safe_load(header)
    except yaml.YAMLError as error:
        values = _plain_lines(
            header
        )  # `argument-hint: [pr] [priority]`, `description: Fix: it` (peers read these)
        if values is None:
            mark = getattr(error, "problem_mark", None)
            where = f" at line {mark.line + 2}" if mark is not None else ""
            problem = getattr(error, "problem", None) or "invalid"
            raise ValueError(f"its front matter is not valid YAML ({problem}{where})") from None
    if values is None:
        values = {}
    if not isinstance(values, dict):
        raise ValueError("its front matter must be a YAML mapping (key: value lines)")
    return _FrontMatter({str(k): v for k, v in values.items()}, "".join(lines[end + 1 :]))


def _plain_lines(header: str) -> dict[str, Any] | None:
    """Front matter that is not YAML but plain ``key: value`` lines (values taken as written, lists
    as ``- item`` lines under an empty value), as Claude Code reads it; None when it is neither."""
    values: dict[str, Any] = {}
    key: str | None = None
    for line in header.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = re.fullmatch(r"\s+-\s+(.*)", line)
        pair = re.fullmatch(r"([A-Za-z][\w-]*):(?:\s+(.*))?", line.rstrip())
        if item and key is not None and isinstance(values[key], list):
            values[key].append(item.group(1).strip().strip("'\""))
        elif pair:
            key, value = pair.group(1), (pair.group(2) or "").strip()
            values[key] = value.strip("'\"") if value else []
        else:
            return None
    return values


def _text(values: dict[str, Any], key: str) -> str:
    value = values.get(key)
    if value is None:
        return ""
    if isinstance(value, str | int | float):
        return str(value).strip()
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return "[" + ", ".join(str(v) for v in value) + "]"  # `argument-hint: [message]` is a YAML list
    raise ValueError(f'"{key}" in its front matter must be text')


def _names(value: Any, key: str) -> list[str]:
    """A tool list: YAML list, or text separated by commas (not those inside parentheses)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in re.split(r",(?![^()]*\))", value) if part.strip()]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value if item.strip()]
    raise ValueError(f'"{key}" in its front matter must be a list of tool names')


def _limit(names: list[str], notes: list[str]) -> ToolLimit:
    """The Shiro tools a front matter's tool names mean; unknown names are noted and allow nothing."""
    allowed: set[str] = set()
    patterns: list[str] = []
    bash_rules: list[str] = []
    every_command = False
    for name in names:
        pattern = BASH_PATTERN.fullmatch(name)
        if pattern:
            allowed.add("bash")
            bash_rules.append(_bash_rule(pattern.group(1)))
            continue
        bare = name.split("(", 1)[0].strip()
        if bare in ("Bash", "bash") or (bare in COPILOT_TOOLS and "bash" in COPILOT_TOOLS[bare]):
            every_command = True
        if bare in KNOWN_SPECS or bare in WEB:
            allowed.add(bare)
        elif bare in CLAUDE_TOOLS:
            allowed.update(CLAUDE_TOOLS[bare])
        elif bare in COPILOT_TOOLS:
            allowed.update(COPILOT_TOOLS[bare])
        elif bare.startswith("mcp__"):
            patterns.append(bare)
        elif bare.endswith("/*"):  # Copilot: every tool of an MCP server
            patterns.append(f"mcp__{bare[:-2]}__*")
        else:
            notes.append(f'tool "{name}" is not one Shiro knows; it is not offered')
    bash = tuple(bash_rules) if bash_rules and not every_command else None
    return ToolLimit(frozenset(allowed), tuple(patterns), bash)


def _bash_rule(pattern: str) -> str:
    """Claude Code's ``git add:*`` (the command and any arguments) as ``git add *``; other text as it is."""
    pattern = pattern.strip()
    return pattern[:-2].rstrip() + " *" if pattern.endswith(":*") else pattern


def _inputs(body: str) -> tuple[InputVar, ...]:
    seen: dict[str, InputVar] = {}
    for match in INPUT.finditer(body):
        name, placeholder = match.group(1), (match.group(2) or "").strip()
        if name not in seen or (placeholder and not seen[name].placeholder):
            seen[name] = InputVar(name, placeholder)
    return tuple(seen.values())


def _first_line(body: str) -> str:
    line = next((line.strip().lstrip("#").strip() for line in body.splitlines() if line.strip()), "")
    return line if len(line) <= 80 else line[:79] + "…"


def read_only_limit(limit: ToolLimit | None) -> ToolLimit:
    """``limit`` narrowed to the tools that change nothing (an ``ask`` or ``plan`` agent)."""
    if limit is None:
        return ToolLimit(READ_ONLY_TOOLS)
    return ToolLimit(limit.names & READ_ONLY_TOOLS, (), None)
