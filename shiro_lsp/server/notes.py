"""`shiro/notes/read|append|replace`: project and task notes with hash-guarded edits.

Without ``taskId`` the task is the current conversation's latest task (none before the first
turn: reads show no task notes, task writes ask for a ``taskId``). Writes are refused in a
restricted (untrusted) workspace; reads always work.
"""

from __future__ import annotations

import asyncio

from shiro_lsp.server import protocol as p
from shiro_lsp.server.rpc import ShiroServer, request
from shiro_lsp.state.notes import NotesView


def notes_wire(view: NotesView) -> p.NotesResult:
    return p.NotesResult(
        project=view.project,
        task=view.task,
        project_hash=view.project_hash,
        task_hash=view.task_hash,
        task_id=view.task_id,
        problems=view.problems,
    )


def register(server: ShiroServer) -> None:
    @request(server, "shiro/notes/read")
    async def read(ls: ShiroServer, params: p.NotesReadParams) -> p.NotesResult:
        return notes_wire(await asyncio.to_thread(ls.shiro.notes.read, params.task_id))

    @request(server, "shiro/notes/append")
    async def append(ls: ShiroServer, params: p.NotesAppendParams) -> p.NotesResult:
        ls.shiro.require_writable()
        view = await asyncio.to_thread(ls.shiro.notes.append, params.scope, params.note, params.task_id)
        return notes_wire(view)

    @request(server, "shiro/notes/replace")
    async def replace(ls: ShiroServer, params: p.NotesReplaceParams) -> p.NotesResult:
        ls.shiro.require_writable()
        view = await asyncio.to_thread(
            ls.shiro.notes.replace, params.scope, params.note, params.expected_hash, params.task_id
        )
        return notes_wire(view)
