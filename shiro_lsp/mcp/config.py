"""Which MCP servers the user configured (design.md "Ecosystem (v2)"), and which of them are trusted.

Three files, read in this order (the first entry with a name wins; a later one is reported):

- ``<workspace>/.mcp.json``: ``{"mcpServers": {NAME: ENTRY}}`` (project scope)
- ``<workspace>/.vscode/mcp.json``: ``{"servers": {NAME: ENTRY}}``, VS Code's shape (project scope)
- ``<state root>/mcp.json``: same shape as ``.mcp.json`` (user scope)

An ENTRY is ``{command, args?, env?, cwd?}`` (stdio; ``type: "stdio"`` optional) or
``{type: "http", url, headers?}`` (streamable HTTP). A file or entry that cannot be used is
reported in words and skipped; the other servers still work.

Project-scope servers run only after the user trusts them. Trust is pinned to the SHA-256 of
the entry as written, so an edited entry is untrusted again. User-scope servers are the user's
own file and count as trusted. Pure data and file reads: nothing here starts a process.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from shiro_lsp.bounded import MAX_JSON_DEPTH, json_depth
from shiro_lsp.errors import ToolError
from shiro_lsp.fs.jail import NoSuchFile
from shiro_lsp.fs.reader import read_text
from shiro_lsp.fs.watch import NamedFilesWatch
from shiro_lsp.state.jsonstore import JsonArrayFile, Reporter, log_reporter

Scope = Literal["project", "user"]
Transport = Literal["stdio", "http"]

PROJECT_FILES: tuple[tuple[str, str], ...] = ((".mcp.json", "mcpServers"), (".vscode/mcp.json", "servers"))
USER_FILE = "mcp.json"
MAX_CONFIG_BYTES = 1024 * 1024
"""What is read of a project's MCP config file."""
TRUST_FILE = "mcp-trust.json"
HTTP_TYPES = frozenset({"http", "streamable-http", "streamableHttp", "streamable_http"})
TOOL_NAME_LIMIT = 64
CLIENT_SOURCE = "the editor's MCP servers"


@dataclass(frozen=True)
class ServerConfig:
    name: str
    scope: Scope
    source: str
    """The file it came from, as the user would name it (``.mcp.json``, ``~/.shiro-neko/mcp.json``)."""
    transport: Transport
    fingerprint: str
    """SHA-256 of the entry as written (canonical JSON): what trust is pinned to."""
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def command_line(self) -> str:
        """Exactly what will run (or be connected to): shown when the user is asked to trust it."""
        if self.transport == "http":
            return f"{self.url}"
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(self.env.items()))
        line = shlex.join([self.command or "", *self.args])
        where = f"cd {shlex.quote(self.cwd)} && " if self.cwd else ""
        return f"{where}{env + ' ' if env else ''}{line}"


@dataclass
class LoadedConfig:
    servers: list[ServerConfig]
    problems: list[str]


def fingerprint(entry: Any) -> str:
    canonical = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def safe_name(name: str) -> str:
    """A server or tool name as it may appear in a model-facing tool name (``[A-Za-z0-9_-]``)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name) or "_"


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, cut to the 64 characters providers accept."""
    return f"mcp__{safe_name(server)}__{safe_name(tool)}"[:TOOL_NAME_LIMIT]


def _strings(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


def parse_entry(name: str, entry: Any, scope: Scope, source: str) -> ServerConfig | str:
    """One server entry, or the sentence saying why it was skipped."""
    where = f'MCP server "{name}" in {source}'
    if not isinstance(entry, dict):
        return f"{where} is not a JSON object; it was skipped."
    kind = entry.get("type")
    if kind is None:
        kind = "http" if "url" in entry and "command" not in entry else "stdio"
    if not isinstance(kind, str) or (kind != "stdio" and kind not in HTTP_TYPES):
        return (
            f'{where} has an unknown type {json.dumps(kind)} (Shiro supports "stdio" and "http"); '
            "it was skipped."
        )
    digest = fingerprint(entry)
    if kind == "stdio":
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            return f'{where} has no "command" to run; it was skipped.'
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            return f'{where}: "args" must be a list of strings; it was skipped.'
        env = entry.get("env", {})
        if not _strings(env):
            return f'{where}: "env" must map names to strings; it was skipped.'
        cwd = entry.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            return f'{where}: "cwd" must be a string; it was skipped.'
        return ServerConfig(name, scope, source, "stdio", digest, command, tuple(args), dict(env), cwd)
    url = entry.get("url")
    if not isinstance(url, str) or not re.match(r"https?://", url):
        return f'{where} has no http(s) "url"; it was skipped.'
    headers = entry.get("headers", {})
    if not _strings(headers):
        return f'{where}: "headers" must map names to strings; it was skipped.'
    return ServerConfig(name, scope, source, "http", digest, url=url, headers=dict(headers))


def _text(path: Path, workspace: Path | None) -> str:
    """A project file through the confined reader (no link out of the workspace, no FIFO, bounded);
    the user's own file, in the state root, as a plain read."""
    if workspace is None:
        return path.read_text(encoding="utf-8")
    try:
        return read_text(workspace, str(path), limit=MAX_CONFIG_BYTES)
    except NoSuchFile as missing:
        raise FileNotFoundError(str(path)) from missing
    except ToolError as error:
        raise OSError(error.message) from None


def _read(
    path: Path,
    label: str,
    key: str,
    scope: Scope,
    out: LoadedConfig,
    seen: set[str],
    workspace: Path | None = None,
) -> None:
    try:
        text = _text(path, workspace)
    except FileNotFoundError:
        return
    except (OSError, UnicodeDecodeError) as error:
        out.problems.append(f"{label} could not be read ({error}); its MCP servers were not loaded.")
        return
    if not text.strip():
        return
    if json_depth(text) > MAX_JSON_DEPTH:
        out.problems.append(
            f"{label} nests deeper than {MAX_JSON_DEPTH} levels; its MCP servers were not loaded."
        )
        return
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        out.problems.append(
            f"{label} is not valid JSON ({error.msg} at line {error.lineno}); its MCP servers were not loaded."
        )
        return
    if not isinstance(value, dict):
        out.problems.append(f"{label} must hold a JSON object; its MCP servers were not loaded.")
        return
    servers = value.get(key, value.get("mcpServers" if key == "servers" else "servers"))
    if servers is None:
        return
    if not isinstance(servers, dict):
        out.problems.append(f'{label}: "{key}" must be an object of servers; none were loaded.')
        return
    _add(servers, label, scope, out, seen)


def _add(servers: Mapping[str, Any], label: str, scope: Scope, out: LoadedConfig, seen: set[str]) -> None:
    """``seen``: the tool-name prefixes taken so far, so no two servers share one."""
    for name, entry in servers.items():
        parsed = parse_entry(name, entry, scope, label)
        prefix = safe_name(name)
        if isinstance(parsed, str):
            out.problems.append(parsed)
        elif "__" in prefix + "_":  # "a__b" or "a_": tools named mcp__a__..., as server "a"'s are
            out.problems.append(
                f'MCP server "{name}" in {label}: a server name cannot hold "__" or end in "_" (its tools '
                "would be named like another server's, and rules for that server would cover them); "
                "it was skipped."
            )
        elif prefix in seen:
            same = (
                "the same name as"
                if name in servers_named(out)
                else f'the tool-name prefix "mcp__{prefix}__" of'
            )
            out.problems.append(
                f'MCP server "{name}" in {label} has {same} one defined earlier; it was skipped.'
            )
        else:
            seen.add(prefix)
            out.servers.append(parsed)


def servers_named(config: LoadedConfig) -> set[str]:
    return {server.name for server in config.servers}


def load_config(
    workspace: Path, state_root: Path, client_servers: Mapping[str, Any] | None = None
) -> LoadedConfig:
    """The files' servers, then ``client_servers`` (entries in ``.mcp.json`` shape) that an editor
    passed in (ACP ``session/new``): configured by the user in that editor, so user scope."""
    out = LoadedConfig([], [])
    seen: set[str] = set()
    for relative, key in PROJECT_FILES:
        _read(workspace / relative, relative, key, "project", out, seen, workspace)
    user = state_root / USER_FILE
    _read(user, str(user), "mcpServers", "user", out, seen)
    if client_servers:
        _add(client_servers, CLIENT_SOURCE, "user", out, seen)
    return out


def config_files(workspace: Path, state_root: Path) -> tuple[Path, ...]:
    return (*(workspace / relative for relative, _ in PROJECT_FILES), state_root / USER_FILE)


def watch_config(workspace: Path, state_root: Path) -> NamedFilesWatch | None:
    """Watches on the folders that hold the config and trust files, so that a caller can tell,
    without touching the disk, that none of them changed since it last read them (``.vscode``
    appearing or going means watch anew).

    Blocking (it adds watches): call it in a thread. None: no inotify here, or a folder is missing.
    """
    folders = {
        workspace: frozenset({PROJECT_FILES[0][0], ".vscode"}),
        state_root: frozenset({USER_FILE, TRUST_FILE}),
    }
    if (workspace / ".vscode").is_dir():
        folders[workspace / ".vscode"] = frozenset({"mcp.json"})
    try:
        return NamedFilesWatch(folders, rewatch=frozenset({".vscode"}))
    except OSError:
        return None


def has_links(paths: tuple[Path, ...]) -> bool:
    """Whether any of the files is a symbolic link (its target's edits are not seen by a watch)."""
    return any(os.path.islink(p) for p in paths)


def _valid_trust(item: Any) -> bool:
    return isinstance(item, dict) and all(
        isinstance(item.get(k), str) for k in ("workspace", "name", "sha256")
    )


class TrustStore:
    """``<state root>/mcp-trust.json``: the project servers the user trusted, per workspace, pinned by hash."""

    def __init__(self, state_root: Path, workspace: Path, reporter: Reporter = log_reporter) -> None:
        self.file = JsonArrayFile(
            state_root / TRUST_FILE, label="MCP server trust", is_valid=_valid_trust, reporter=reporter
        )
        self.workspace = str(workspace)

    def is_trusted(self, server: ServerConfig) -> bool:
        if server.scope == "user":
            return True
        return any(
            item["workspace"] == self.workspace
            and item["name"] == server.name
            and item["sha256"] == server.fingerprint
            for item in self.file.load()
        )

    def set(self, server: ServerConfig, trusted: bool) -> None:
        with self.file.locked_items() as items:
            kept = [i for i in items if not (i["workspace"] == self.workspace and i["name"] == server.name)]
            if trusted:
                kept.append({"workspace": self.workspace, "name": server.name, "sha256": server.fingerprint})
            if kept != items:
                self.file.save(kept)
