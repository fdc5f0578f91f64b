"""`shiro/todos` and `shiro/todos/update`: the live session's task list."""

from __future__ import annotations

from shiro_lsp.server import protocol as p
from shiro_lsp.server.rpc import ShiroServer, request, todos_wire
from shiro_lsp.state.todos import Todo


def register(server: ShiroServer) -> None:
    @request(server, "shiro/todos")
    async def todos(ls: ShiroServer, params: p.Empty) -> p.TodosPayload:
        return todos_wire(ls.shiro.tasks)

    @request(server, "shiro/todos/update")
    async def update(ls: ShiroServer, params: p.TodosUpdateParams) -> p.TodosPayload:
        ls.shiro.update_todos([Todo(t.content, t.status, t.note) for t in params.todos])
        payload = todos_wire(ls.shiro.tasks)
        ls.notify("shiro/todos/changed", payload)
        return payload
