"""Shiro as an MCP client: the servers' configuration and trust (``config``) and the sessions that
offer their tools to a turn (``client``). Not to be confused with ``shiro_lsp.mcp_server`` (Shiro as
an MCP server, a front door) or ``server/mcp.py`` (the LSP methods that list and trust servers)."""
