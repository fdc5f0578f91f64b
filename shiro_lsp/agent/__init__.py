"""The turn: the step loop, the runtime that queues turns, permissions and approvals, prompts and
instructions, text tool calls, pricing.

Nothing here knows about the LSP. The areas a turn uses are siblings: ``tools/``, ``providers/``,
``mcp/`` (Shiro as an MCP client) and ``checkpoints/``; none of them imports this package.
"""
