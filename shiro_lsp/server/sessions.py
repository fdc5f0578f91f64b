"""`shiro/session/*`: thin handlers over ``Shiro.sessions`` (a switch announces itself in the service)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from pydantic import ValidationError

from shiro_lsp.agent.turn_log import ResumedTurn, resumed_turns
from shiro_lsp.server import protocol as p
from shiro_lsp.server.rpc import (
    ShiroServer,
    changes_wire,
    compaction_wire,
    dump,
    fs_path,
    request,
    todos_wire,
)
from shiro_lsp.state.sessions import NewOutcome, SessionSummary
from shiro_lsp.state.sessions.record import EventMark

log = logging.getLogger(__name__)


def session_wire(summary: SessionSummary, snippet: str | None = None) -> p.SessionInfo:
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
        cached_tokens=summary.cached_input_tokens,
        snippet=snippet,
    )


def turn_wire(turn: ResumedTurn) -> p.TurnInfo:
    mark = turn.mark
    return p.TurnInfo(
        task_id=mark.task_id,
        at=mark.at,
        end=mark.end,
        stop_reason=mark.stop_reason,
        error=mark.error,
        checkpoint_id=turn.checkpoint_id,
        changes=changes_wire(turn.changes) if turn.changes is not None else None,
    )


def history_events(marks: list[EventMark]) -> list[p.HistoryEvent]:
    """The recorded events that are still valid wire events (an unknown one, from a newer Shiro or
    an edited file, is left out)."""
    out: list[p.HistoryEvent] = []
    for mark in marks:
        try:
            out.append(
                p.HistoryEvent.model_validate({"at": mark.at, "taskId": mark.task_id, "event": mark.event})
            )
        except ValidationError:
            log.debug("left out a recorded event of type %r", mark.event.get("type"))
    return out


MODEL_CHANGED = (
    "This session last ran on {last}; your settings now choose {now}, so its next turns use {now}."
)


def model_note(last: str, configured: str) -> str | None:
    return MODEL_CHANGED.format(last=last, now=configured) if last and last != configured else None


def new_wire(outcome: NewOutcome) -> p.SessionNewResult:
    previous = outcome.previous
    return p.SessionNewResult(
        session=session_wire(outcome.session),
        previous=p.PreviousSession(id=previous.id, title=previous.title, message_count=previous.message_count)
        if previous
        else None,
    )


def register(server: ShiroServer) -> None:
    @request(server, "shiro/session/current")
    async def current(ls: ShiroServer, params: p.Empty) -> p.SessionInfo:
        return session_wire(ls.shiro.sessions.info())

    @request(server, "shiro/session/list")
    async def listing(ls: ShiroServer, params: p.SessionListParams) -> p.SessionListResult:
        root = fs_path(params.root) if params.root else None
        if params.query and params.query.strip():
            hits = await ls.folders.search_sessions(root, params.query, params.limit, params.all_workspaces)
            return p.SessionListResult(sessions=[session_wire(h.summary, h.snippet) for h in hits])
        found = await ls.folders.list_sessions(root, params.limit, params.all_workspaces)
        return p.SessionListResult(sessions=[session_wire(s) for s in found])

    @request(server, "shiro/session/resume")
    async def resume(ls: ShiroServer, params: p.SessionResumeParams) -> dict[str, Any]:
        session = await ls.folders.resume(params.id, latest=bool(params.latest))
        record = session.to_record()
        turns = await asyncio.to_thread(resumed_turns, record, ls.shiro.checkpoints)
        result = p.SessionResumeResult.model_construct(
            session=session_wire(session.summary()),
            transcript=list(session.messages),
            todos=todos_wire(session.tasks),
            compactions=[compaction_wire(c) for c in session.compactions],
            undone_compactions=[compaction_wire(c) for c in session.undone_compactions],
            turns=[turn_wire(t) for t in turns],
            events=history_events(record.events),
            model_note=model_note(session.model, ls.shiro.settings.model),
            images=await asyncio.to_thread(ls.shiro.image_thumbnails, list(session.messages)),
        )
        return await asyncio.to_thread(dump, result)  # a long transcript takes a while to copy

    @request(server, "shiro/session/new")
    async def new(ls: ShiroServer, params: p.SessionNewParams) -> p.SessionNewResult:
        return new_wire(await ls.folders.new_session(fs_path(params.root) if params.root else None))

    @request(server, "shiro/session/clear")
    async def clear(ls: ShiroServer, params: p.SessionNewParams) -> p.SessionNewResult:
        return new_wire(await ls.folders.new_session(fs_path(params.root) if params.root else None))

    @request(server, "shiro/session/compact")
    async def compact(ls: ShiroServer, params: p.Empty) -> p.SessionCompactResult:
        before, after = await ls.shiro.runtime.compact()
        marks = ls.shiro.sessions.current.compactions
        added = compaction_wire(marks[-1]) if before and marks else None
        return p.SessionCompactResult(before=before, after=after, compaction=added)

    @request(server, "shiro/session/uncompact")
    async def uncompact(ls: ShiroServer, params: p.Empty) -> p.SessionUncompactResult:
        before, after = await ls.shiro.runtime.undo_compaction()
        marks = ls.shiro.sessions.current.compactions
        return p.SessionUncompactResult(
            before=before, after=after, compactions=[compaction_wire(c) for c in marks]
        )

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

    @request(server, "shiro/session/rename")
    async def rename(ls: ShiroServer, params: p.SessionRenameParams) -> p.SessionInfo:
        return session_wire(await ls.shiro.sessions.rename(params.id, params.title))

    @request(server, "shiro/session/delete")
    async def delete(ls: ShiroServer, params: p.SessionDeleteParams) -> p.SessionDeleteResult:
        return p.SessionDeleteResult(deleted=await ls.shiro.delete_session(params.id))
