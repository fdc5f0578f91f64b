"""The server's lifecycle: the workspace made at initialize, initialized, folder and configuration
changes, shutdown and exit.

``app`` answers ``initialize`` itself and calls ``start`` right behind the reply, once this module
has registered the rest.
"""

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
from shiro_lsp.service import Shiro
from shiro_lsp.state.sessions import LiveSession

WARM_UP_DELAY_S = 0.3


def workspace_of(params: types.InitializeParams) -> str:
    for uri in [f.uri for f in params.workspace_folders or []] + [params.root_uri or ""]:
        path = to_fs_path(uri) if uri else None
        if path:
            return path
    return params.root_path or str(Path.cwd())


def folders_of(params: types.InitializeParams) -> list[tuple[str | None, str]]:
    """The window's workspace folders (name, path); without any, the one workspace of ``workspace_of``."""
    folders: list[tuple[str | None, str]] = []
    for folder in params.workspace_folders or []:
        path = to_fs_path(folder.uri)
        if path:
            folders.append((folder.name, path))
    return folders or [(None, workspace_of(params))]


def added_folders(event: types.WorkspaceFoldersChangeEvent) -> list[tuple[str | None, str]]:
    return [(f.name, path) for f in event.added if (path := to_fs_path(f.uri))]


def start(ls: ShiroServer, params: types.InitializeParams) -> None:
    """The window's workspace, from the ``initialize`` params (its settings' problems are shown)."""

    def started(shiro: Shiro) -> None:
        """A folder's service is made (at initialize, or when a session first goes to that folder)."""
        shiro.start_agent(LspFrontend(ls))
        ls.background(asyncio.to_thread(shiro.clean_stale_temp_files))
        if ls.initialized:
            listen(ls, shiro)

    options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
    settings, problems = load_settings(options)
    shiro = ls.start_workspace(folders_of(params), settings, started)
    # Not while the first requests are answered: the import would compete with them for the GIL.
    asyncio.get_running_loop().call_later(WARM_UP_DELAY_S, shiro.runtime.warm_up)
    for problem in problems:
        ls.report(problem)


def register(server: ShiroServer) -> None:
    @server.feature(types.INITIALIZED)
    def on_initialized(ls: ShiroServer, params: types.InitializedParams) -> None:
        ls.initialized = True
        if ls.started:
            for shiro in ls.folders.services():
                listen(ls, shiro)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def on_folders(ls: ShiroServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        if not ls.started:
            return
        removed = [path for f in params.event.removed if (path := to_fs_path(f.uri))]
        for shiro in ls.folders.change(added_folders(params.event), removed):
            ls.background(close(shiro))  # its sessions stay on disk; its MCP servers stop

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def on_configuration(ls: ShiroServer, params: types.DidChangeConfigurationParams) -> None:
        settings = (
            params.settings.get("shiro", params.settings) if isinstance(params.settings, dict) else None
        )
        if isinstance(settings, dict) and ls.started:
            for problem in ls.folders.configure(settings):
                ls.report(problem)

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: ShiroServer, params: Any) -> None:
        if ls.started:
            for shiro in ls.folders.services():
                await close(shiro)

    @server.feature(types.EXIT)
    def on_exit(ls: ShiroServer, params: Any) -> None:
        if ls.started:
            for shiro in ls.folders.services():
                shiro.sessions.on_changed = None
                shiro.sessions.flush_sync()
        ls.flush_outbox()  # pygls closes stdout next: the answers still queued go first


def listen(ls: ShiroServer, shiro: Shiro) -> None:
    """Autosaves finish outside any request; this is how the client hears about the live session's."""

    def changed(session: LiveSession) -> None:
        if ls.started and ls.folders.active is shiro:
            ls.notify("shiro/session/changed", session_wire(session.summary()))

    shiro.sessions.on_changed = changed
    atexit.register(shiro.sessions.flush_sync)


async def close(shiro: Shiro) -> None:
    await shiro.stop_agent()  # a running turn is cancelled (bounded wait) and keeps its partial answer
    await shiro.sessions.flush()
    await shiro.mcp.close()  # stdio MCP servers get EOF and exit; HTTP sessions end
