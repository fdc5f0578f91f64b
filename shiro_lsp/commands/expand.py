"""A typed command (``/name args``) made into the prompt the model reads, and what it limits.

The body's placeholders, in one pass (a value put in is never read again as a placeholder):

- ``$ARGUMENTS``: everything after the name (Claude Code); ``$1`` … ``$9``: its words, quotes
  grouping words as a shell does;
- ``${input:name}`` / ``${input:name:placeholder}`` (Copilot): a value given as ``name=value``
  after the command or by the front door (the panel's form, ``--input name=value``); a missing one
  is an error that names it and says how to give it;
- ``${workspaceFolder}``, ``${workspaceFolderBasename}``;
- ``!`command``` (Claude Code runs it and pastes its output): never run here. The model gets the
  command as code, and may run it with bash, which asks like any other call.

Arguments the body has no place for follow it as ``ARGUMENTS: …``, as Claude Code sends them.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from shiro_lsp.commands.files import SHELL, CustomCommand, InputVar, ToolLimit, read_only_limit
from shiro_lsp.errors import BadParams

INVOCATION = re.compile(r"/([A-Za-z0-9][A-Za-z0-9_.:-]*)(?:\s+([\s\S]*))?")
PLACEHOLDER = re.compile(
    r"\$ARGUMENTS|\$([1-9])(?![0-9])|\$\{input:([A-Za-z_][A-Za-z0-9_-]*)(?::[^}]*)?\}"
    r"|\$\{(workspaceFolder|workspaceFolderBasename)\}|" + SHELL.pattern
)
ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)=([\s\S]*)")


@dataclass(frozen=True)
class Invocation:
    name: str
    args: str


@dataclass(frozen=True)
class CommandRun:
    """What running a command changes about the turn."""

    text: str
    agent: str | None = None
    limit: ToolLimit | None = None
    model: str | None = None


class MissingInputs(BadParams):
    """A ``${input:…}`` variable has no value: the front door asks for it, or says how to give it."""

    def __init__(self, command: CustomCommand, missing: list[InputVar]) -> None:
        names = ", ".join(f"{v.name} ({v.placeholder})" if v.placeholder else v.name for v in missing)
        example = " ".join(f"{v.name}=…" for v in missing)
        super().__init__(
            f"/{command.name} needs a value for {names}. Give it after the command: /{command.name} {example}",
            data={"command": command.name, "missing": [v.name for v in missing]},
        )
        self.missing = missing


def parse_invocation(text: str) -> Invocation | None:
    """``/name args`` at the very start of the text (its first line), else None."""
    match = INVOCATION.fullmatch(text.strip())
    return Invocation(match.group(1), (match.group(2) or "").strip()) if match else None


def _words(args: str) -> list[str]:
    try:
        return shlex.split(args)
    except ValueError:  # an unclosed quote: plain words
        return args.split()


def split_inputs(command: CustomCommand, args: str) -> tuple[dict[str, str], str]:
    """``name=value`` words naming the command's inputs, and the rest of the arguments."""
    names = {v.name for v in command.inputs}
    if not names or "=" not in args:
        return {}, args
    given: dict[str, str] = {}
    rest: list[str] = []
    for word in _words(args):
        match = ASSIGNMENT.fullmatch(word)
        if match and match.group(1) in names:
            given[match.group(1)] = match.group(2)
        else:
            rest.append(word)
    return given, shlex.join(rest) if given else args


def expand(
    command: CustomCommand, args: str, inputs: Mapping[str, str] | None, workspace: Path
) -> CommandRun:
    """The prompt and the limits of a run of ``command`` (raises :class:`MissingInputs`)."""
    from_args, rest = split_inputs(command, args)
    values = {**from_args, **(inputs or {})}
    missing = [v for v in command.inputs if v.name not in values]
    if missing:
        raise MissingInputs(command, missing)
    words = _words(rest)
    placed = False

    def fill(match: re.Match[str]) -> str:
        nonlocal placed
        whole = match.group(0)
        if whole == "$ARGUMENTS":
            placed = True
            return rest
        if match.group(1):
            placed = True
            index = int(match.group(1)) - 1
            return words[index] if index < len(words) else ""
        if match.group(2):
            return values[match.group(2)]
        if match.group(3) == "workspaceFolder":
            return str(workspace)
        if match.group(3):
            return workspace.name
        return f"`{match.group(4)}`"  # a shell line: the model may run it (bash asks)

    text = PLACEHOLDER.sub(fill, command.body)
    if rest and not placed:
        text += f"\n\nARGUMENTS: {rest}"
    limit = read_only_limit(command.limit) if command.read_only else command.limit
    return CommandRun(text, command.agent, limit, command.model)
