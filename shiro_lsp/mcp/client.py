"""Shiro as an MCP client: the configured servers' tools offered to the model as ``mcp__<server>__<tool>``.

Servers start lazily (the first turn that could offer their tools), one asyncio task each holding
the SDK's ``Client`` open. Only trusted servers start (``mcp_config``), and none in restricted
mode. A server that dies is reported; its tools stay offered and the next call restarts it. A
call is bounded by the MCP timeout and cancelled with the turn (``$/cancelRequest``). Results are
flattened to text (structured content as JSON; audio, and images for a model that takes none, as a
note) and capped by the registry like every other tool's output; for a model that takes images, the
images a tool returns are kept and shown to it after the result, as ``read_file`` shows one. A stdio server's stderr goes to Shiro's log.

Calls go through the permission policy like any mutating tool: MCP tools ask by default.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO
from urllib.parse import urlsplit

from shiro_lsp.errors import ShiroError, ToolError
from shiro_lsp.fs.secrets import is_secret_path, refusal
from shiro_lsp.fs.watch import NamedFilesWatch
from shiro_lsp.images.store import ImageStore, StoredImage
from shiro_lsp.mcp.config import (
    TRUST_FILE,
    LoadedConfig,
    ServerConfig,
    TrustStore,
    config_files,
    has_links,
    load_config,
    tool_name,
    watch_config,
)
from shiro_lsp.state.jsonstore import Reporter, log_reporter
from shiro_lsp.tools.base import JsonObject, Tool, ToolContext, dynamic_tool

log = logging.getLogger(__name__)

Status = Literal["running", "stopped", "untrusted", "error"]

DEFAULT_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 5.0
END_TIMEOUT_S = 10.0
"""How long shutdown waits for a server given up at start: the SDK closes its stdin, waits 2 s, sends
SIGTERM, waits 2 s, then kills it."""
RESTRICTED = "The workspace is in restricted mode (not trusted), so no MCP server is started."


@dataclass(frozen=True)
class ServerStatus:
    config: ServerConfig
    status: Status
    trusted: bool
    tools: list[str]
    error: str | None = None


def _describe(error: BaseException) -> str:
    """One line for a failure that may be an ExceptionGroup from the SDK's task groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _schema(raw: Any) -> JsonObject:
    """The tool's input schema as a function-tool schema (an object); an unusable one becomes ``{}``-args."""
    schema = dict(raw) if isinstance(raw, dict) else {}
    if schema.get("type") != "object":
        return {"type": "object", "properties": {}}
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError:
        return {"type": "object", "properties": {}}
    schema.setdefault("properties", {})
    return schema


def result_text(result: Any, shown: Mapping[int, StoredImage] | None = None) -> str:
    """A ``CallToolResult`` as the text the model reads; ``shown``: the images (by their place in the
    content) the model is shown after the result."""
    parts: list[str] = []
    for index, item in enumerate(result.content or []):
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(item.text)
        elif kind == "image" and shown and index in shown:
            image = shown[index]
            parts.append(
                f"[image returned by the tool ({image.width}x{image.height}): shown to you after this result]"
            )
        elif kind in ("image", "audio"):
            size = len(base64.b64decode(item.data, validate=False)) if item.data else 0
            parts.append(f"[{kind} returned by the tool ({item.mime_type}, {size} bytes); not shown here]")
        elif kind == "resource_link":
            parts.append(f"[resource link: {item.uri}]")
        elif kind == "resource":
            resource = item.resource
            text = getattr(resource, "text", None)
            if is_secret_path(urlsplit(str(resource.uri)).path):  # the one secrets policy
                parts.append(f"[resource {resource.uri}: {refusal(str(resource.uri))}]")
            elif isinstance(text, str):
                parts.append(text)
            else:
                parts.append(
                    f"[binary resource {resource.uri} ({getattr(resource, 'mime_type', None)}); not shown]"
                )
    structured = getattr(result, "structured_content", None)
    if structured is not None and not any(getattr(i, "type", "") == "text" for i in result.content or []):
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2))
    return "\n".join(parts)


def _kept_images(result: Any, tool: str, images: ImageStore) -> dict[int, StoredImage]:
    """The result's images the store could keep, by their place in the content (blocking)."""
    kept: dict[int, StoredImage] = {}
    for index, item in enumerate(result.content or []):
        if getattr(item, "type", "") != "image" or not item.data:
            continue
        try:
            kept[index] = images.add(base64.b64decode(item.data), f"{tool} image {len(kept) + 1}")
        except (ShiroError, ValueError) as error:  # not an image Pillow reads: the note says so
            log.info("an image %s returned was not kept: %s", tool, error)
    return kept


class _StderrToLog:
    """A pipe whose read end a thread forwards to the log, line by line (the server's stderr)."""

    def __init__(self, name: str) -> None:
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w")
        self._reader = os.fdopen(read_fd, "r", errors="replace")
        self._thread = threading.Thread(target=self._pump, args=(name,), daemon=True)
        self._thread.start()

    def _pump(self, name: str) -> None:
        with self._reader:
            for line in self._reader:
                log.info("MCP server %s: %s", name, line.rstrip())

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.writer.close()


class _Connection:
    """One running server: a task holds the SDK client open until ``stop``."""

    def __init__(self, config: ServerConfig, timeout: float) -> None:
        self.config = config
        self.timeout = timeout
        self.client: Any = None
        self.tools: list[Any] = []
        self.error: str | None = None
        self._ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._ready.add_done_callback(lambda f: f.cancelled() or f.exception())  # read even when no one waits
        self._stop = asyncio.Event()
        self._stderr: _StderrToLog | None = None
        self._task = asyncio.create_task(self._run(), name=f"mcp:{config.name}")

    @property
    def alive(self) -> bool:
        return self.client is not None and not self._task.done() and self.error is None

    def _target(self) -> Any:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        c = self.config
        if c.transport == "stdio":
            self._stderr = _StderrToLog(c.name)
            params = StdioServerParameters(
                command=c.command or "", args=list(c.args), env=c.env or None, cwd=c.cwd
            )
            return stdio_client(params, errlog=self._stderr.writer)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        return streamable_http_client(c.url or "", http_client=create_mcp_http_client(headers=c.headers))

    async def _run(self) -> None:
        from mcp import Client

        try:
            async with Client(self._target(), mode="legacy") as client:
                tools: list[Any] = []
                cursor: str | None = None
                for _ in range(100):
                    page = await client.list_tools(cursor=cursor)
                    tools.extend(page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        break
                self.tools = tools
                self.client = client
                self._ready.set_result(None)
                await self._stop.wait()
        except BaseException as error:
            if not self._stop.is_set():
                self.error = _describe(error)
                log.warning("MCP server %s stopped: %s", self.config.name, self.error)
            if not self._ready.done():
                self._ready.set_exception(ShiroError(self.error or "stopped"))
            if isinstance(error, asyncio.CancelledError):
                raise
        finally:
            self.client = None
            if self._stderr is not None:
                self._stderr.close()

    async def ready(self) -> None:
        """Started and its tools listed, within the MCP timeout (``mcpTimeoutMs``), or an error."""
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), self.timeout)
        except TimeoutError:
            self.error = f"did not answer within {self.timeout:g} s of starting"
            await self.stop(grace=min(STOP_TIMEOUT_S, self.timeout))
            raise ShiroError(self.error) from None

    def ended(self) -> asyncio.Task[None]:
        return self._task

    async def stop(self, grace: float = STOP_TIMEOUT_S) -> None:
        self._stop.set()
        if self._task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._task), grace)
        except BaseException:
            self._task.cancel()


class McpManager:
    """The MCP servers of one workspace: their config, trust, connections and tools."""

    def __init__(
        self,
        workspace: Path,
        state_root: Path,
        *,
        trusted: Callable[[], bool],
        timeout: Callable[[], float] = lambda: DEFAULT_TIMEOUT_S,
        reporter: Reporter = log_reporter,
    ) -> None:
        self.workspace = workspace
        self.state_root = state_root
        self.trusted = trusted
        self.timeout = timeout
        self.reporter = reporter
        self.trust_store = TrustStore(state_root, workspace, reporter)
        self._config = LoadedConfig([], [])
        self._signature: tuple[object, ...] | None = None
        self._trust: dict[str, bool] | None = None
        """What the last read found trusted; None: read the files again before using them."""
        self._watch: NamedFilesWatch | None = None
        self._watched = False
        """The last read was made under a watch that covers every file (none is a symbolic link)."""
        self._reads = 0
        self._reported: set[str] = set()
        self._connections: dict[str, _Connection] = {}
        self._failed: dict[str, tuple[str, str]] = {}  # name -> (fingerprint, error) of a start that failed
        self._ending: set[_Connection] = set()  # given up at start, their processes still stopping
        self._known_tools: dict[str, tuple[str, list[Any]]] = {}  # name -> (fingerprint, last tool list)
        self._lock = asyncio.Lock()
        self.client_servers: dict[str, Any] = {}  # entries an editor passed in (ACP), .mcp.json shape

    def use_client_servers(self, entries: Mapping[str, Any]) -> None:
        """The MCP servers the editor configured (ACP ``session/new``); read with the files."""
        self.client_servers = dict(entries)
        self._signature = None
        self._forget()

    def _forget(self) -> None:
        """The next use reads the files again (what the last read found is out of date)."""
        self._trust = None
        self._reads += 1

    # --- configuration -------------------------------------------------------------------------

    def _read_config(self) -> tuple[LoadedConfig, dict[str, bool]]:
        """Blocking: the files as they are now. The watch is made first, so that a change made
        while they are read is seen by the next look."""
        if self._watch is None or self._watch.broken:
            if self._watch is not None:
                self._watch.close()
            self._watch = watch_config(self.workspace, self.state_root)
        files = config_files(self.workspace, self.state_root)
        self._watched = self._watch is not None and not has_links((*files, self.state_root / TRUST_FILE))
        signature = tuple(_stat(p) for p in files)
        if signature != self._signature:
            self._config = load_config(self.workspace, self.state_root, self.client_servers)
            self._signature = signature
        trust = {s.name: self.trust_store.is_trusted(s) for s in self._config.servers}
        return self._config, trust

    def _unchanged(self) -> bool:
        """Whether the last read still holds: the watch saw no change to any of the files since.
        A non-blocking read of the watch's descriptor, so it is asked on the loop."""
        return (
            self._trust is not None
            and self._watched
            and self._watch is not None
            and not self._watch.changed()
        )

    async def _refresh(self) -> tuple[LoadedConfig, dict[str, bool]]:
        """Re-read the files (off the loop) unless the watch says none changed, report new problems
        once, stop servers whose entry changed."""
        if self._unchanged():
            assert self._trust is not None
            config, trust = self._config, self._trust
        else:
            self._forget()
            reads = self._reads
            config, trust = await asyncio.to_thread(self._read_config)
            if reads == self._reads:  # nothing made it out of date while it was read
                self._trust = trust
        for problem in config.problems:
            if problem not in self._reported:
                self._reported.add(problem)
                self.reporter(problem)
        by_name = {s.name: s for s in config.servers}
        for name, connection in list(self._connections.items()):
            current = by_name.get(name)
            if current is None or current != connection.config or not trust[name] or not self.trusted():
                del self._connections[name]
                await connection.stop()
        return config, trust

    def _status(self, server: ServerConfig, trusted: bool) -> ServerStatus:
        known = self._known_tools.get(server.name)
        tools = [t.name for t in known[1]] if known and known[0] == server.fingerprint else []
        if not self.trusted():
            return ServerStatus(server, "stopped", trusted, tools, RESTRICTED)
        if not trusted:
            return ServerStatus(server, "untrusted", False, tools, None)
        connection = self._connections.get(server.name)
        if connection is not None and connection.error:
            return ServerStatus(server, "error", True, tools, connection.error)
        if connection is not None and connection.alive:
            return ServerStatus(server, "running", True, tools)
        failed = self._failed.get(server.name)
        if failed and failed[0] == server.fingerprint:
            return ServerStatus(server, "error", True, tools, failed[1])
        return ServerStatus(server, "stopped", True, tools)

    async def servers(self) -> tuple[list[ServerStatus], list[str]]:
        async with self._lock:
            config, trust = await self._refresh()
            return [self._status(s, trust[s.name]) for s in config.servers], list(config.problems)

    async def set_trust(self, name: str, trusted: bool) -> tuple[list[ServerStatus], list[str]]:
        async with self._lock:
            config, _ = await self._refresh()
            server = next((s for s in config.servers if s.name == name), None)
            if server is None:
                known = ", ".join(s.name for s in config.servers) or "none are configured"
                raise ShiroError(f'There is no MCP server named "{name}" (configured: {known}).')
            if server.scope == "user":
                if not trusted:
                    raise ShiroError(
                        f'"{name}" is configured in your user-scope {server.source}; remove it there to stop using it.'
                    )
            else:
                await asyncio.to_thread(self.trust_store.set, server, trusted)
                self._forget()
            self._failed.pop(name, None)  # trusting again retries a server that failed to start
        return await self.servers()

    # --- connections and tools -----------------------------------------------------------------

    async def tools(self) -> list[Tool]:
        """The tools of every trusted server, starting the ones not started yet (concurrently)."""
        async with self._lock:
            config, trust = await self._refresh()
            if not self.trusted():
                return []
            wanted = [s for s in config.servers if trust[s.name]]
            starting = [
                s
                for s in wanted
                if s.name not in self._connections
                and self._known_tools.get(s.name, ("", []))[0] != s.fingerprint
                and self._failed.get(s.name, ("",))[0] != s.fingerprint
            ]
            await asyncio.gather(*(self._start(s) for s in starting), return_exceptions=True)
            tools: list[Tool] = []
            for server in wanted:
                known = self._known_tools.get(server.name)
                if known and known[0] == server.fingerprint:
                    tools.extend(self._tool(server, t) for t in known[1])
            return tools

    async def _start(self, server: ServerConfig) -> _Connection:
        connection = _Connection(server, self.timeout())
        self._connections[server.name] = connection
        try:
            await connection.ready()
        except ShiroError as error:
            self._connections.pop(server.name, None)
            self._ending.add(connection)  # its process is still being stopped: close() waits for it
            connection.ended().add_done_callback(lambda _: self._ending.discard(connection))
            self._failed[server.name] = (server.fingerprint, error.message)
            self.reporter(f'MCP server "{server.name}" could not start: {error.message}')
            raise
        self._failed.pop(server.name, None)
        self._known_tools[server.name] = (server.fingerprint, connection.tools)
        log.info("MCP server %s started with %d tools", server.name, len(connection.tools))
        return connection

    async def _connection(self, name: str) -> _Connection:
        """The live connection to ``name``, (re)starting it when it is not running."""
        async with self._lock:
            config, trust = await self._refresh()
            server = next((s for s in config.servers if s.name == name), None)
            if server is None:
                raise ToolError(f'The MCP server "{name}" is no longer configured.')
            if not self.trusted():
                raise ToolError(RESTRICTED)
            if not trust[name]:
                raise ToolError(f'The MCP server "{name}" is not trusted (its entry may have changed).')
            connection = self._connections.get(name)
            if connection is not None and connection.alive:
                return connection
            if connection is not None:
                self._connections.pop(name, None)
                await connection.stop()
            try:
                return await self._start(server)
            except ShiroError as error:
                raise ToolError(f'The MCP server "{name}" could not start: {error.message}') from None

    def _tool(self, server: ServerConfig, listed: Any) -> Tool:
        name = tool_name(server.name, listed.name)
        description = (listed.description or "").strip() or listed.name
        original = listed.name

        async def handler(input: JsonObject, ctx: ToolContext) -> str:
            return await self.call(server.name, original, input, ctx.images, ctx.shown_images)

        # unknown effects: mutating, not plan-safe, asks by default
        return dynamic_tool(
            name,
            f"[MCP server {server.name}] {description}",
            _schema(listed.input_schema),
            handler,
            prompt_hint=f"tools of the MCP server {server.name}; see their descriptions.",
        )

    async def call(
        self,
        server: str,
        tool: str,
        arguments: JsonObject,
        images: ImageStore | None = None,
        shown: list[StoredImage] | None = None,
    ) -> str:
        """One tool call; with ``images`` (the model takes them) the images it returns are kept and
        added to ``shown``, so the model sees them after the result."""
        from mcp.shared.exceptions import MCPError

        connection = await self._connection(server)
        timeout = self.timeout()
        try:
            async with asyncio.timeout(timeout):  # in this task: no task per call, as wait_for makes
                result = await connection.client.call_tool(tool, arguments)
        except TimeoutError:
            raise ToolError(
                f'The MCP server "{server}" did not answer {tool} within {timeout:g} s; the call was cancelled.'
            ) from None
        except MCPError as error:
            if connection.alive and "Connection closed" not in str(error):
                raise ToolError(f"{tool} failed on the MCP server {server}: {error}") from None
            connection.error = connection.error or f"the server stopped during a call ({error})"
            self.reporter(f'MCP server "{server}" stopped during {tool}; it is restarted on the next call.')
            raise ToolError(
                f'The MCP server "{server}" stopped while running {tool} ({error}); '
                "its effects are unknown. It is restarted on the next call."
            ) from None
        kept = await asyncio.to_thread(_kept_images, result, tool, images) if images is not None else {}
        if shown is not None:
            shown.extend(kept.values())
        text = result_text(result, kept)
        if result.is_error:
            raise ToolError(text or f"{tool} failed on the MCP server {server}.")
        return text

    async def close(self) -> None:
        connections, self._connections = list(self._connections.values()), {}
        await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)
        if self._ending:  # given up at start: their processes are closed, then killed (the SDK's steps)
            await asyncio.wait([c.ended() for c in self._ending], timeout=END_TIMEOUT_S)
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        self._forget()


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_ino, stat.st_mtime_ns, stat.st_size)
