"""`shiro/commands/list`, `shiro/hooks/list` and `shiro/hooks/trust`: the user's custom commands and hooks."""

from __future__ import annotations

import asyncio

from shiro_lsp.commands import Catalogue
from shiro_lsp.hooks import HookListing
from shiro_lsp.server import protocol as p
from shiro_lsp.server.rpc import ShiroServer, request


def commands_wire(catalogue: Catalogue) -> p.CommandsListResult:
    return p.CommandsListResult(
        commands=[
            p.CommandInfo(
                name=c.name,
                description=c.description,
                argument_hint=c.argument_hint,
                source=c.source,
                scope=c.scope,
                inputs=[p.CommandInput(name=v.name, placeholder=v.placeholder) for v in c.inputs],
                agent=c.agent,
                tools=sorted(c.limit.names) + list(c.limit.patterns) if c.limit is not None else None,
                model=c.model,
                notes=list(c.notes),
                error=c.error,
                shadowed_by=c.shadowed_by,
            )
            for c in catalogue.commands
        ]
    )


def hooks_wire(listing: HookListing) -> p.HooksListResult:
    return p.HooksListResult(
        hooks=[
            p.HookInfo(
                id=s.hook.fingerprint,
                event=s.hook.event,  # type: ignore[arg-type]  # config.EVENTS: the same five names
                matcher=s.hook.matcher,
                command=s.hook.command,
                timeout_seconds=s.hook.timeout_s,
                source=s.hook.source,
                scope=s.hook.scope,
                trusted=s.trusted,
                runs=s.runs,
            )
            for s in listing.hooks
        ],
        problems=listing.problems,
        restricted=listing.restricted,
    )


def register(server: ShiroServer) -> None:
    @request(server, "shiro/commands/list")
    async def commands_list(ls: ShiroServer, params: p.Empty) -> p.CommandsListResult:
        return commands_wire(await ls.shiro.commands.current())

    @request(server, "shiro/hooks/list")
    async def hooks_list(ls: ShiroServer, params: p.Empty) -> p.HooksListResult:
        return hooks_wire(await ls.shiro.hooks.current())

    @request(server, "shiro/hooks/trust")
    async def hooks_trust(ls: ShiroServer, params: p.HooksTrustParams) -> p.HooksListResult:
        hooks = ls.shiro.hooks
        return hooks_wire(await asyncio.to_thread(hooks.set_trust, params.ids, params.trusted))
