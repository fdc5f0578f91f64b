"""`shiro/mcp/list` and `shiro/mcp/trust`: the MCP servers Shiro uses as a client."""

from __future__ import annotations

from shiro_lsp.mcp.client import ServerStatus
from shiro_lsp.server import protocol as p
from shiro_lsp.server.rpc import ShiroServer, request


def listing(servers: list[ServerStatus], problems: list[str]) -> p.McpListResult:
    return p.McpListResult(
        servers=[
            p.McpServerInfo(
                name=s.config.name,
                source=s.config.source,
                scope=s.config.scope,
                status=s.status,
                trusted=s.trusted,
                tools=s.tools,
                command=s.config.command_line(),
                error=s.error,
            )
            for s in servers
        ],
        problems=problems,
    )


def register(server: ShiroServer) -> None:
    @request(server, "shiro/mcp/list")
    async def mcp_list(ls: ShiroServer, params: p.Empty) -> p.McpListResult:
        return listing(*await ls.shiro.mcp.servers())

    @request(server, "shiro/mcp/trust")
    async def mcp_trust(ls: ShiroServer, params: p.McpTrustParams) -> p.McpListResult:
        return listing(*await ls.shiro.mcp.set_trust(params.name, params.trusted))
