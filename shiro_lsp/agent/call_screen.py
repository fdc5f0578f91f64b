"""What a turn checks around each tool call besides the permission rules (``tool_calls.CallScreen``):
first the tool limit of the custom command the turn runs (``commands``), then the hooks (``hooks``)."""

from __future__ import annotations

from typing import Any

from shiro_lsp.commands import ToolLimit
from shiro_lsp.hooks import ALLOWED, PreToolVerdict, TurnHooks


class TurnCallScreen:
    def __init__(self, hooks: TurnHooks | None, limit: ToolLimit | None = None, command: str = "") -> None:
        self.hooks = hooks
        self.limit = limit
        self.command = command

    async def before(self, call_id: str, tool_name: str, input: dict[str, Any]) -> PreToolVerdict:
        if self.limit is not None:
            refusal = self.limit.refusal(self.command, tool_name, input)
            if refusal is not None:
                return PreToolVerdict(refusal=refusal)
        if self.hooks is None:
            return ALLOWED
        return await self.hooks.pre_tool_use(call_id, tool_name, input)

    async def after(self, call_id: str, tool_name: str, input: dict[str, Any], output: str) -> str:
        if self.hooks is None:
            return ""
        return await self.hooks.post_tool_use(call_id, tool_name, input, output)
