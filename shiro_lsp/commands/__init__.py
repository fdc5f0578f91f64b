"""Custom slash commands and prompt files: prompts kept in files, typed as ``/name args``.

``files.py`` finds and reads them (Claude Code's ``.claude/commands``, Copilot's ``.github/prompts``,
Shiro's ``.shiro/commands`` and the user's ``<state root>/commands``), ``expand.py`` makes a typed
command into the prompt the model reads. This module puts them in one list, in the order that
decides which file a name runs:

1. the built-ins (the panel's ``/compact``, ``/help``… and ``/init``): never replaced;
2. the user's own commands;
3. each workspace folder's (the session's folder first): ``.shiro/commands``, ``.claude/commands``,
   ``.github/prompts``.

A later file with a name already taken is listed as shadowed; a broken file is listed with its
error (it shadows nothing). They are prompts, not code: nothing in them is ever run by Shiro.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from shiro_lsp.commands.expand import CommandRun, Invocation, MissingInputs, expand, parse_invocation
from shiro_lsp.commands.files import (
    PROJECT_DIRS,
    CustomCommand,
    InputVar,
    ToolLimit,
    display_path,
    find_files,
    read_command,
)

BUILTIN_NAMES: frozenset[str] = frozenset(
    {
        "compact",
        "notes",
        "memory",
        "todos",
        "sessions",
        "resume",
        "new",
        "save",
        "clear",
        "cost",
        "init",
        "help",
    }
)
"""The panel's own commands (``vscode-client/src/shared/slashCommands.ts``) and the server's ``/init``:
a custom command with one of these names never runs (a unit test keeps the two lists equal)."""

SERVER_BUILTINS: dict[str, str] = {
    "init": "learn this repository and write an AGENTS.md for agents (asks before writing)"
}
"""The built-ins every front door runs (the others belong to the panel)."""

Folder = tuple[str | None, Path]
"""A workspace folder: its name in a multi-root window (None: the only one) and its path."""


@dataclass(frozen=True)
class Catalogue:
    commands: tuple[CustomCommand, ...]

    def find(self, name: str) -> CustomCommand | None:
        """The command ``/name`` runs: the first usable one, else a broken one (to say why)."""
        named = [c for c in self.commands if c.name == name and c.shadowed_by is None]
        return next((c for c in named if c.error is None), named[0] if named else None)

    @property
    def runnable(self) -> list[CustomCommand]:
        return [c for c in self.commands if c.runnable]


def load_catalogue(folders: Sequence[Folder], user_dir: Path) -> Catalogue:
    """Every command file, in the order of precedence, each marked with what shadows it. Blocking."""
    found = find_files(user_dir.parent, user_dir.name, ".md", "user", display_path(user_dir.parent) + "/")
    for name, folder in folders:
        prefix = f"{name}/" if name and len(folders) > 1 else ""
        for label, suffix in PROJECT_DIRS:
            found += find_files(folder, label, suffix, "project", prefix)
    taken: dict[str, str] = {}
    commands: list[CustomCommand] = []
    for item in found:
        command = read_command(item)
        if command.name.lower() in BUILTIN_NAMES:
            command = replace(command, shadowed_by=f"the built-in /{command.name.lower()}")
        elif command.name in taken and command.error is None:
            command = replace(command, shadowed_by=taken[command.name])
        elif command.error is None:
            taken[command.name] = command.source
        commands.append(command)
    return Catalogue(tuple(commands))


class CommandCatalogue:
    """One workspace's custom commands, read again each time they are asked for (the files are few
    and small, and a command edited a moment ago must run as it is now)."""

    def __init__(self, folders: Callable[[], Sequence[Folder]], user_dir: Path) -> None:
        """``user_dir``: the user's own commands (``<state root>/commands``)."""
        self.folders = folders
        self.user_dir = user_dir

    def load(self) -> Catalogue:
        return load_catalogue(self.folders(), self.user_dir)

    async def current(self) -> Catalogue:
        folders = self.folders()  # on the loop: the window's folders may change
        return await asyncio.to_thread(load_catalogue, folders, self.user_dir)

    async def run_of(self, text: str, inputs: dict[str, str] | None, workspace: Path) -> CommandRun | None:
        """The run of the custom command ``text`` types, None when it types none. A broken command
        or a missing input is a ``ShiroError`` saying so."""
        from shiro_lsp.errors import ShiroError

        invocation = parse_invocation(text)
        if invocation is None or invocation.name.lower() in BUILTIN_NAMES:
            return None
        command = (await self.current()).find(invocation.name)
        if command is None:
            return None
        if command.error is not None:
            raise ShiroError(f"/{command.name} cannot run: {command.source}: {command.error}.")
        return expand(command, invocation.args, inputs, workspace)


__all__ = [
    "BUILTIN_NAMES",
    "SERVER_BUILTINS",
    "Catalogue",
    "CommandCatalogue",
    "CommandRun",
    "CustomCommand",
    "Folder",
    "InputVar",
    "Invocation",
    "MissingInputs",
    "ToolLimit",
    "expand",
    "load_catalogue",
    "parse_invocation",
]
