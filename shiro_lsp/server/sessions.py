"""`shiro/session/*`: thin handlers over ``Shiro.sessions`` plus the final save on shutdown and exit."""

from __future__ import annotations

import atexit
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from shiro_lsp.server import protocol as p
from shiro_lsp.state.sessions import LiveSession, NewOutcome, SessionSummary

if TYPE_CHECKING:
    from shiro_lsp.server.app import ShiroServer

log = logging.getLogger(__name__)


def session_wire(summary: SessionSummary) -> p.SessionInfo:
    return p.SessionInfo(
        id=summary.id,
        title=summary.title,
        cwd=summary.cwd,
        created_at=summary.created_at,
        updated_at=summary.updated_at,
        message_count=summary.message_count,
        model=summary.model,
        input_tokens=summary.input_tokens,
        output_tokens=summary.output_tokens,
        cost_usd=summary.cost_usd,
    )


def new_wire(outcome: NewOutcome) -> p.SessionNewResult:
    previous = outcome.previous
    return p.SessionNewResult(
        session=session_wire(outcome.session),
        previous=p.PreviousSession(id=previous.id, title=previous.title, message_count=previous.message_count)
        if previous
        else None,
    )


def register_sessions(server: ShiroServer) -> None:
    from shiro_lsp.server.app import request, todos_wire

    def announce(ls: ShiroServer, session: LiveSession) -> None:
        ls.notify("shiro/session/changed", session_wire(session.summary()))

    def announce_todos(ls: ShiroServer) -> None:
        ls.notify("shiro/todos/changed", todos_wire(ls.shiro.tasks))

    @server.feature(types.INITIALIZED)
    def on_initialized(ls: ShiroServer, params: types.InitializedParams) -> None:
        # Autosaves finish outside any request; this is how the client hears about them.
        ls.shiro.sessions.on_changed = lambda session: announce(ls, session)
        atexit.register(ls.shiro.sessions.flush_sync)

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: ShiroServer, params: Any) -> None:
        if ls._shiro is not None:
            await ls.shiro.sessions.flush()
            await ls.shiro.mcp.close()  # stdio MCP servers get EOF and exit; HTTP sessions end

    @server.feature(types.EXIT)
    def on_exit(ls: ShiroServer, params: Any) -> None:
        if ls._shiro is not None:
            ls.shiro.sessions.on_changed = None
            ls.shiro.sessions.flush_sync()

    @request(server, "shiro/session/current")
    async def current(ls: ShiroServer, params: p.Empty) -> p.SessionInfo:
        return session_wire(ls.shiro.sessions.info())

    @request(server, "shiro/session/list")
    async def listing(ls: ShiroServer, params: p.SessionListParams) -> p.SessionListResult:
        found = await ls.shiro.sessions.list(params.limit, params.all_workspaces)
        return p.SessionListResult(sessions=[session_wire(s) for s in found])

    @request(server, "shiro/session/resume")
    async def resume(ls: ShiroServer, params: p.SessionResumeParams) -> p.SessionResumeResult:
        session = await ls.shiro.sessions.resume(params.id, latest=bool(params.latest))
        announce_todos(ls)
        await ls.shiro.runtime.announce_context()
        return p.SessionResumeResult(
            session=session_wire(session.summary()),
            transcript=list(session.messages),
            todos=todos_wire(session.tasks),
        )

    @request(server, "shiro/session/new")
    async def new(ls: ShiroServer, params: p.Empty) -> p.SessionNewResult:
        outcome = await ls.shiro.sessions.new()
        announce_todos(ls)
        await ls.shiro.runtime.announce_context()
        return new_wire(outcome)

    @request(server, "shiro/session/clear")
    async def clear(ls: ShiroServer, params: p.Empty) -> p.SessionNewResult:
        outcome = await ls.shiro.sessions.clear()
        announce_todos(ls)
        await ls.shiro.runtime.announce_context()
        return new_wire(outcome)

    @request(server, "shiro/session/compact")
    async def compact(ls: ShiroServer, params: p.Empty) -> p.SessionCompactResult:
        before, after = await ls.shiro.runtime.compact()
        return p.SessionCompactResult(before=before, after=after)

    @request(server, "shiro/session/save")
    async def save(ls: ShiroServer, params: p.Empty) -> p.SessionSaveResult:
        outcome = await ls.shiro.sessions.save()
        return p.SessionSaveResult(id=outcome.id, saved=outcome.saved, reason=outcome.reason)

    @request(server, "shiro/session/export")
    async def export(ls: ShiroServer, params: p.SessionExportParams) -> p.SessionExportResult:
        return p.SessionExportResult(content=await ls.shiro.export_session(params.id, params.format))

    @request(server, "shiro/session/branch")
    async def branch(ls: ShiroServer, params: p.SessionBranchParams) -> p.SessionInfo:
        return session_wire(await ls.shiro.branch_session(params.id, params.at_message))

    @request(server, "shiro/session/delete")
    async def delete(ls: ShiroServer, params: p.SessionDeleteParams) -> p.SessionDeleteResult:
        return p.SessionDeleteResult(deleted=await ls.shiro.delete_session(params.id))
