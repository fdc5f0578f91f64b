"""The Chat Completions API (``POST /v1/chat/completions``) on the openai SDK.

Works with OpenAI and with OpenAI-compatible servers (Ollama, LM Studio, vLLM, llama.cpp, OpenRouter…).
Reasoning parts and provider itemIds are dropped on the wire (Chat has no way to send them back), so a
session recorded on the Responses API continues here. Streamed reasoning that local servers send as
``delta.reasoning_content`` / ``delta.reasoning`` is surfaced as ``ReasoningDelta``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from shiro_lsp.messages import Message, Part
from shiro_lsp.providers.errors import cut_stream, provider_error
from shiro_lsp.providers.factory import is_local
from shiro_lsp.providers.models import server_root
from shiro_lsp.providers.retry import Retries
from shiro_lsp.providers.types import (
    FinishReason,
    GenerateResult,
    ModelEvent,
    ModelRequest,
    ReasoningDelta,
    StepFinished,
    TextDelta,
    ToolCallReady,
    ToolInputStart,
    ToolSpec,
)
from shiro_lsp.providers.wire import (
    arguments_of,
    as_is,
    content_text,
    image_url,
    loose_tool_input,
    parts_of,
    tool_output_text,
)
from shiro_lsp.usage import Usage

if TYPE_CHECKING:
    import openai

ChatMessage = dict[str, Any]

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "content_filter": "content-filter",
}


# How long a request waits, at most, for the server to let go of a stream this client closed.
SETTLE_LIMIT_SECONDS = 5.0
_SETTLE_POLL_SECONDS = 0.25


class ChatClient:
    """A ``ModelClient`` on ``client.chat.completions``."""

    def __init__(self, client: openai.AsyncOpenAI, *, official: bool = False, max_retries: int = 0) -> None:
        self._client = client
        self._official = official
        self.max_retries = max_retries
        # llama.cpp's slot monitor, where the server may be one (a local one); None once it did not answer.
        self._slots_url: str | None = (
            server_root(self.base_url) + "/slots" if is_local(self.base_url) else None
        )
        self._closed_early = False

    @property
    def api_name(self) -> str:
        return "chat"

    @property
    def base_url(self) -> str:
        return str(self._client.base_url).rstrip("/")

    async def aclose(self) -> None:
        await self._client.close()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        await self._settle()
        state = _StreamState()
        retries = Retries(self.max_retries, self.base_url)
        while True:
            try:
                stream = await self._client.chat.completions.create(
                    **as_is(self.params(request), "messages"),
                    stream=True,
                    stream_options={"include_usage": True},
                )
                break
            except Exception as exc:
                wait = retries.after(exc)
            yield wait
            await asyncio.sleep(wait.delay_seconds)
        ended = False
        try:
            async with stream:
                async for chunk in stream:
                    for event in state.feed(chunk):
                        yield event
            ended = True
        except Exception as exc:
            ended = True
            raise provider_error(exc, self.base_url) from exc
        finally:
            # closed by the caller (a cut reply, a cancelled turn) while the server was still sending
            self._closed_early = self._closed_early or not ended
        if state.finish is None:
            raise cut_stream(self.base_url)
        for event in state.finished():
            yield event

    async def generate(self, request: ModelRequest) -> GenerateResult:
        await self._settle()
        params = self.params(request)
        params.pop("tools", None)
        retries = Retries(self.max_retries, self.base_url)
        while True:
            try:
                completion = await self._client.chat.completions.create(
                    **as_is(params, "messages"), stream=False
                )
                break
            except Exception as exc:
                wait = retries.after(exc)
            await asyncio.sleep(wait.delay_seconds)
        text = completion.choices[0].message.content or "" if completion.choices else ""
        return GenerateResult(text, _usage(completion.usage))

    async def _settle(self) -> None:
        """After this client closed a stream early, wait (briefly) until the server has let go of it.

        llama.cpp notices a closed stream only at its next write and keeps the prompt it had processed in
        that request's slot: a request sent at once finds the slot busy, goes to another one and has its
        whole prompt processed again (minutes for a long prompt on a CPU). Its ``/slots`` monitor says
        when no slot is busy; a server without it (anything else, or llama.cpp with ``--no-slots``) is not
        asked again and nothing is waited for.
        """
        if not self._closed_early:
            return
        self._closed_early = False
        deadline = time.monotonic() + SETTLE_LIMIT_SECONDS
        while self._slots_url is not None and await self._a_slot_is_busy() and time.monotonic() < deadline:
            await asyncio.sleep(_SETTLE_POLL_SECONDS)

    async def _a_slot_is_busy(self) -> bool:
        import httpx2

        assert self._slots_url is not None
        try:
            answer = await self._client.get(self._slots_url, cast_to=httpx2.Response)
            slots = answer.json()
        except Exception:
            slots = None
        if not isinstance(slots, list):
            self._slots_url = None
            return False
        return any(isinstance(slot, dict) and slot.get("is_processing") is True for slot in slots)

    def params(self, request: ModelRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": request.model,
            "messages": to_chat_messages(request.instructions, request.messages),
        }
        if request.tools:
            params["tools"] = [_tool(t) for t in request.tools]
        if request.reasoning_effort is not None:
            params["reasoning_effort"] = request.reasoning_effort
        if request.max_output_tokens is not None:
            # OpenAI's reasoning models refuse max_tokens; most local servers only know max_tokens.
            key = "max_completion_tokens" if self._official else "max_tokens"
            params[key] = request.max_output_tokens
        if request.temperature is not None:
            params["temperature"] = request.temperature
        return params


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": spec.name, "description": spec.description, "parameters": spec.parameters},
    }


# ---------------------------------------------------------------------------- messages → wire


def to_chat_messages(instructions: str, messages: list[Message]) -> list[ChatMessage]:
    out: list[ChatMessage] = [{"role": "system", "content": instructions}] if instructions else []
    for message in messages:
        role = message.get("role")
        if role == "system":
            out.append({"role": "system", "content": content_text(message.get("content"))})
        elif role == "user":
            out.append({"role": "user", "content": _user_content(message)})
        elif role == "assistant":
            out.extend(_assistant(message))
        elif role == "tool":
            out.extend(
                {"role": "tool", "tool_call_id": p["toolCallId"], "content": tool_output_text(p)}
                for p in parts_of(message)
                if p.get("type") in ("tool-result", "tool-error")
            )
    return out


def _user_content(message: Message) -> str | list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = parts_of(message)
    if all(p.get("type") == "text" for p in parts):
        return content_text(parts)
    wire: list[dict[str, Any]] = []
    for part in parts:
        if part.get("type") == "text":
            wire.append({"type": "text", "text": str(part.get("text", ""))})
        elif part.get("type") == "image":
            wire.append({"type": "image_url", "image_url": {"url": image_url(part)}})
    return wire


def _assistant(message: Message) -> list[ChatMessage]:
    parts = parts_of(message)
    text = "".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")
    calls = [
        {
            "id": p["toolCallId"],
            "type": "function",
            "function": {"name": p["toolName"], "arguments": arguments_of(p)},
        }
        for p in parts
        if p.get("type") == "tool-call"
    ]
    if not text and not calls:
        return []  # e.g. reasoning only: nothing Chat can carry
    wire: ChatMessage = {"role": "assistant", "content": text or None}
    if calls:
        wire["tool_calls"] = calls
    return [wire]


# ---------------------------------------------------------------------------- stream → events


@dataclass
class _Call:
    call_id: str
    name: str
    arguments: str = ""
    started: bool = False


class _StreamState:
    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, _Call] = {}
        self.finish: str | None = None
        self.usage = Usage()

    def feed(self, chunk: Any) -> list[ModelEvent]:
        if chunk.usage is not None:
            self.usage = _usage(chunk.usage)
        events: list[ModelEvent] = []
        for choice in chunk.choices or []:
            delta = choice.delta
            reasoning = _reasoning_of(delta)
            if reasoning:
                self.reasoning.append(reasoning)
                events.append(ReasoningDelta(reasoning))
            if delta.content:
                self.text.append(delta.content)
                events.append(TextDelta(delta.content))
            for fragment in delta.tool_calls or []:
                events.extend(self._fragment(fragment))
            if choice.finish_reason:
                self.finish = choice.finish_reason
        return events

    def _fragment(self, fragment: Any) -> list[ModelEvent]:
        call = self.calls.setdefault(self._index_of(fragment), _Call(call_id="", name=""))
        call.call_id = fragment.id or call.call_id
        function = fragment.function
        if function is not None:
            call.name = function.name or call.name
            call.arguments += function.arguments or ""
        if not call.started and call.name:
            call.started = True
            call.call_id = call.call_id or f"call_{uuid.uuid4().hex[:24]}"
            return [ToolInputStart(call.call_id, call.name)]
        return []

    def _index_of(self, fragment: Any) -> int:
        """The call a fragment belongs to; some servers (older Ollama) leave ``index`` out."""
        if isinstance(fragment.index, int):
            return int(fragment.index)
        for index, call in self.calls.items():
            if fragment.id and call.call_id == fragment.id:
                return index
        if fragment.id or not self.calls:
            return len(self.calls)
        return max(self.calls)

    def finished(self) -> list[ModelEvent]:
        calls = [self.calls[i] for i in sorted(self.calls)]
        events: list[ModelEvent] = [ToolCallReady(c.call_id, c.name, c.arguments) for c in calls]
        parts: list[Part] = []
        if self.reasoning:
            parts.append({"type": "reasoning", "text": "".join(self.reasoning)})
        if self.text:
            parts.append({"type": "text", "text": "".join(self.text)})
        parts.extend(
            {
                "type": "tool-call",
                "toolCallId": c.call_id,
                "toolName": c.name,
                "input": loose_tool_input(c.arguments),
            }
            for c in calls
        )
        reason = _FINISH.get(self.finish or "", "other")
        if calls and reason == "stop":  # some local servers say "stop" after tool calls
            reason = "tool-calls"
        events.append(StepFinished({"role": "assistant", "content": parts}, self.usage, reason))
        return events


def _reasoning_of(delta: Any) -> str | None:
    extra = getattr(delta, "model_extra", None) or {}
    for key in ("reasoning_content", "reasoning"):
        value = extra.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    prompt = getattr(usage, "prompt_tokens_details", None)
    completion = getattr(usage, "completion_tokens_details", None)
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
        cached_input_tokens=(getattr(prompt, "cached_tokens", 0) or 0) if prompt else 0,
        reasoning_tokens=(getattr(completion, "reasoning_tokens", 0) or 0) if completion else 0,
    )
