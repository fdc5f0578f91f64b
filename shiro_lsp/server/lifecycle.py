"""The server's lifecycle: initialize, initialized, configuration changes, shutdown and exit."""

from __future__ import annotations

import asyncio
import atexit
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from shiro_lsp.config import load_settings
from shiro_lsp.server.chat import LspFrontend
from shiro_lsp.server.rpc import ShiroServer
from shiro_lsp.server.sessions import session_wire

WARM_UP_DELAY_S = 0.3


def workspace_of(params: types.InitializeParams) -> str:
    for uri in [f.uri for f in params.workspace_folders or []] + [params.root_uri or ""]:
        path = to_fs_path(uri) if uri else None
        if path:
            return path
    return params.root_path or str(Path.cwd())


def register(server: ShiroServer) -> None:
    @server.feature(types.INITIALIZE)
    def on_initialize(ls: ShiroServer, params: types.InitializeParams) -> None:
        options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        settings, problems = load_settings(options)
        ls.start_workspace(workspace_of(params), settings)
        runtime = ls.shiro.start_agent(LspFrontend(ls))
        ls.background(asyncio.to_thread(ls.shiro.clean_stale_temp_files))
        # After the initialize reply is out: the import would otherwise compete with it for the GIL.
        asyncio.get_running_loop().call_later(WARM_UP_DELAY_S, runtime.warm_up)
        for problem in problems:
            ls.report(problem)

    @server.feature(types.INITIALIZED)
    def on_initialized(ls: ShiroServer, params: types.InitializedParams) -> None:
        # Autosaves finish outside any request; this is how the client hears about them.
        ls.shiro.sessions.on_changed = lambda session: ls.notify(
            "shiro/session/changed", session_wire(session.summary())
        )
        atexit.register(ls.shiro.sessions.flush_sync)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def on_configuration(ls: ShiroServer, params: types.DidChangeConfigurationParams) -> None:
        settings = (
            params.settings.get("shiro", params.settings) if isinstance(params.settings, dict) else None
        )
        if isinstance(settings, dict) and ls.started:
            for problem in ls.shiro.configure(settings):
                ls.report(problem)

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: ShiroServer, params: Any) -> None:
        if ls.started:
            await ls.shiro.stop_agent()  # the running turn is cancelled and keeps its partial answer
            await ls.shiro.sessions.flush()
            await ls.shiro.mcp.close()  # stdio MCP servers get EOF and exit; HTTP sessions end

    @server.feature(types.EXIT)
    def on_exit(ls: ShiroServer, params: Any) -> None:
        if ls.started:
            ls.shiro.sessions.on_changed = None
            ls.shiro.sessions.flush_sync()
        ls.flush_outbox()  # pygls closes stdout next: the answers still queued go first
