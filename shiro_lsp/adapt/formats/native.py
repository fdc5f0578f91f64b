"""Native tool calls: the tools go as the request's ``tools``, calls come as the provider's
``tool_calls``, and a reply's text is always text."""

from __future__ import annotations

from shiro_lsp.adapt.formats.base import ParsedReply, ReplyContext, ReplyFormat
from shiro_lsp.adapt.formats.text_calls import TextHold, as_written
from shiro_lsp.config import ToolCallFormat
from shiro_lsp.messages import Message


class NativeCalls(ReplyFormat):
    name: ToolCallFormat = "native"

    def hold(self) -> TextHold:
        return TextHold(enabled=False)

    async def parse(self, text: str, context: ReplyContext) -> ParsedReply | None:
        return None

    def render(self, messages: list[Message]) -> list[Message]:
        return as_written(messages)  # replies written out earlier in the session still go back as written
