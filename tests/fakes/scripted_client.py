"""An in-process scripted ``ModelClient``: the fast seam for unit tests of the engine and the runtime.

No HTTP, no SDK: each ``stream()`` takes the next ``Reply`` and yields the events a provider adapter
yields (``TextDelta``, ``ReasoningDelta``, ``ToolInputStart``, ``ToolCallReady``, one
``StepFinished`` with the assistant message in the message model), or raises the reply's
``ProviderError``. Every request is recorded. The adapters themselves (the real SDK against the
scripted HTTP server in ``fake_openai.py``) are tested in tests/unit/providers and tests/e2e.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from shiro_lsp.messages import Part
from shiro_lsp.providers.types import (
    FinishReason,
    GenerateResult,
    ModelEvent,
    ModelRequest,
    ProviderError,
    ReasoningDelta,
    StepFinished,
    TextDelta,
    ToolCallReady,
    ToolInputStart,
)
from shiro_lsp.usage import Usage


@dataclass(frozen=True)
class Call:
    name: str
    input: dict[str, Any]
    call_id: str = ""


@dataclass
class Reply:
    """One model call: text (streamed in ``chunks``), tool calls, or an error raised instead."""

    text: str = ""
    calls: list[Call] = field(default_factory=list)
    reasoning: str = ""
    usage: Usage = field(default_factory=lambda: Usage(input_tokens=100, output_tokens=10))
    error: ProviderError | None = None
    chunks: int = 1
    hold: asyncio.Event | None = None  # the stream waits here after its text until it is set


class ScriptedClient:
    api_name = "chat"

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.requests: list[ModelRequest] = []
        self.closed = False

    def _next(self, request: ModelRequest) -> Reply:
        self.requests.append(request)
        if not self.replies:
            raise ProviderError("scripted client: nothing scripted for this request", kind="unknown")
        reply = self.replies.pop(0)
        if reply.error is not None:
            raise reply.error
        return reply

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        reply = self._next(request)
        if reply.reasoning:
            yield ReasoningDelta(reply.reasoning)
        size = max(1, -(-len(reply.text) // max(1, reply.chunks)))
        for start in range(0, len(reply.text), size):
            await asyncio.sleep(0)
            yield TextDelta(reply.text[start : start + size])
        if reply.hold is not None:
            await reply.hold.wait()
        parts: list[Part] = []
        if reply.reasoning:
            parts.append({"type": "reasoning", "text": reply.reasoning})
        if reply.text:
            parts.append({"type": "text", "text": reply.text})
        for n, call in enumerate(reply.calls):
            call_id = call.call_id or f"call_{len(self.requests)}_{n}"
            yield ToolInputStart(call_id, call.name)
            yield ToolCallReady(call_id, call.name, json.dumps(call.input))
            parts.append(
                {"type": "tool-call", "toolCallId": call_id, "toolName": call.name, "input": call.input}
            )
        reason: FinishReason = "tool-calls" if reply.calls else "stop"
        yield StepFinished({"role": "assistant", "content": parts}, reply.usage, reason)

    async def generate(self, request: ModelRequest) -> GenerateResult:
        reply = self._next(request)
        return GenerateResult(reply.text, reply.usage)

    async def aclose(self) -> None:
        self.closed = True
