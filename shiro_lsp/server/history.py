"""`shiro/history`: the prompts sent in this project, for the chat box's history."""

from __future__ import annotations

import asyncio

from shiro_lsp.server import protocol as p
from shiro_lsp.server.rpc import ShiroServer, request


def register(server: ShiroServer) -> None:
    @request(server, "shiro/history")
    async def history(ls: ShiroServer, params: p.Empty) -> p.HistoryResult:
        return p.HistoryResult(prompts=await asyncio.to_thread(ls.shiro.history.load))
