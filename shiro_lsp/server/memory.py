"""`shiro/memory/*`: project memory (remember, recall, forget, list, compact)."""

from __future__ import annotations

import asyncio

from shiro_lsp.server import protocol as p
from shiro_lsp.server.rpc import ShiroServer, entry_wire, request


def register(server: ShiroServer) -> None:
    @request(server, "shiro/memory/remember")
    async def remember(ls: ShiroServer, params: p.RememberParams) -> p.RememberResult:
        result = await asyncio.to_thread(ls.shiro.remember, params.kind, params.text)
        return p.RememberResult(
            text=result.text,
            duplicate=result.duplicate,
            entry=entry_wire(result.entry) if result.entry else None,
        )

    @request(server, "shiro/memory/recall")
    async def recall(ls: ShiroServer, params: p.RecallParams) -> p.EntriesResult:
        memory = ls.shiro.require_memory()
        result = memory.recall_now(params.query)  # no thread hop when the file is known unchanged
        if result is None:
            result = await asyncio.to_thread(memory.recall, params.query)
        return p.EntriesResult(entries=[entry_wire(e) for e in result.entries], text=result.text)

    @request(server, "shiro/memory/forget")
    async def forget(ls: ShiroServer, params: p.ForgetParams) -> p.ForgetResult:
        ls.shiro.require_writable()
        memory = ls.shiro.require_memory()
        if params.id is not None:
            result = await asyncio.to_thread(memory.forget_id, params.id)
        else:
            assert params.text is not None  # ForgetParams requires one of them
            result = await asyncio.to_thread(memory.forget, params.text)
        return p.ForgetResult(removed=result.removed, text=result.text)

    @request(server, "shiro/memory/list")
    async def listing(ls: ShiroServer, params: p.Empty) -> p.EntriesResult:
        memory = ls.shiro.require_memory()
        entries, text = await asyncio.to_thread(memory.listing)
        return p.EntriesResult(entries=[entry_wire(e) for e in entries], text=text)

    @request(server, "shiro/memory/compact")
    async def compact(ls: ShiroServer, params: p.Empty) -> p.MemoryCompactResult:
        ls.shiro.require_writable()
        result = await ls.shiro.require_memory().compact(ls.shiro.summarizer())
        return p.MemoryCompactResult(before=result.before, after=result.after, text=result.text)
