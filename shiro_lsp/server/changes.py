"""`shiro/changes*` and `shiro/checkpoint/*`: thin handlers over ``Shiro.checkpoints``."""

from __future__ import annotations

import asyncio

from shiro_lsp.errors import ShiroError
from shiro_lsp.server import protocol as p
from shiro_lsp.server.rpc import ShiroServer, changes_wire, request

BUSY = "A chat is running or waiting; {what} once it has finished (or stop it first)."


def _idle(ls: ShiroServer, what: str) -> None:
    if ls.shiro.runtime.queue.busy:
        raise ShiroError(BUSY.format(what=what))


def register(server: ShiroServer) -> None:
    def session_id(ls: ShiroServer) -> str:
        return ls.shiro.sessions.current.id

    @request(server, "shiro/changes")
    async def changes(ls: ShiroServer, params: p.ChangesParams) -> p.ChangesResult:
        view = await asyncio.to_thread(ls.shiro.checkpoints.changes, session_id(ls), params.task_id)
        return changes_wire(view)

    @request(server, "shiro/changes/diff")
    async def diff(ls: ShiroServer, params: p.ChangesDiffParams) -> p.ChangesDiffResult:
        found = await asyncio.to_thread(
            ls.shiro.checkpoints.diff, session_id(ls), params.path, params.task_id
        )
        return p.ChangesDiffResult(
            path=found.path,
            before=found.before,
            after=found.after,
            binary=found.binary,
            hunks=[
                p.DiffHunk(
                    index=h.index,
                    old_start=h.wire_old_start(),
                    old_lines=h.old_lines,
                    new_start=h.wire_new_start(),
                    new_lines=h.new_lines,
                    header=h.header(),
                )
                for h in found.hunks
            ],
        )

    @request(server, "shiro/changes/undo")
    async def undo(ls: ShiroServer, params: p.ChangesUndoParams) -> p.ChangesUndoResult:
        ls.shiro.require_writable()
        _idle(ls, "undo")
        outcome = await asyncio.to_thread(
            ls.shiro.checkpoints.undo, session_id(ls), params.path, params.task_id, params.hunks
        )
        return p.ChangesUndoResult(path=outcome.path, undone=outcome.undone, conflict=outcome.conflict)

    @request(server, "shiro/changes/keep")
    async def keep(ls: ShiroServer, params: p.ChangesKeepParams) -> p.ChangesKeepResult:
        kept = await asyncio.to_thread(ls.shiro.checkpoints.keep, session_id(ls), params.path, params.task_id)
        return p.ChangesKeepResult(kept=kept)

    @request(server, "shiro/checkpoint/list")
    async def listing(ls: ShiroServer, params: p.Empty) -> p.CheckpointListResult:
        found = await asyncio.to_thread(ls.shiro.checkpoints.listing, session_id(ls))
        return p.CheckpointListResult(
            checkpoints=[
                p.CheckpointInfo(
                    id=c.id,
                    task_id=c.task_id,
                    created_at=c.created_at,
                    prompt=c.prompt,
                    files=c.files,
                    kind=c.kind,
                    not_covered=c.not_covered,
                )
                for c in found
            ]
        )

    @request(server, "shiro/checkpoint/restore")
    async def restore(ls: ShiroServer, params: p.CheckpointRestoreParams) -> p.CheckpointRestoreResult:
        ls.shiro.require_writable()
        _idle(ls, "restore a checkpoint")
        outcome = await asyncio.to_thread(
            ls.shiro.checkpoints.restore, session_id(ls), params.id, params.mode, ls.shiro.live_chat()
        )
        if params.mode != "code":
            ls.shiro.runtime.window.reset()
            await ls.shiro.runtime.announce_context()
        return p.CheckpointRestoreResult(
            restored=outcome.restored,
            conflicts=outcome.conflicts,
            redo_id=outcome.redo_id,
            messages_removed=outcome.messages_removed,
            not_covered=outcome.not_covered,
            deleted=outcome.deleted,
            created=outcome.created,
        )
