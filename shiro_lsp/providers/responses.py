"""The OpenAI Responses API (``POST /v1/responses``) on the openai SDK.

History on the wire (what works against real OpenAI):

* ``store=False`` (the default here; nothing is kept on the provider, so nothing can go stale): an
  ``item_reference`` cannot work (the item was never stored → 404 ``Item with id … not found``), so every
  part goes inline. An assistant message whose reasoning items all carry ``encrypted_content`` (asked for
  with ``include=["reasoning.encrypted_content"]``) is replayed as OpenAI returned it: reasoning items, then
  message / function_call items with their ``msg_``/``fc_`` ids, which keeps reasoning attached to what
  it produced. Any other assistant message goes inline without ids and without its reasoning (a message
  or call id without its reasoning item is a 400 ``… was provided without its required 'reasoning' item``).
* ``store=True`` (OpenAI's own default): a part that carries an itemId is sent as
  ``{"type": "item_reference", "id": …}`` (spec §5.1; one reference per item), a part without one inline.
  Stored items can expire, hence the stale-item repair of spec §5.6 (``ProviderError.is_stale_item``).

Either way a tool result is a ``function_call_output`` keyed by the call's ``call_id`` (= ``toolCallId``),
so a session recorded on Chat Completions (no itemIds, no usable reasoning) continues here unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from shiro_lsp.messages import Message, Part, item_id_of
from shiro_lsp.providers.errors import cut_stream, provider_error, stream_error
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
    Usage,
)
from shiro_lsp.providers.wire import (
    arguments_of,
    as_is,
    content_text,
    image_url,
    loose_tool_input,
    openai_options,
    parts_of,
    tool_output_text,
    with_item_id,
)

if TYPE_CHECKING:
    import openai

InputItem = dict[str, Any]


class ResponsesClient:
    """A ``ModelClient`` on ``client.responses``."""

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        *,
        store: bool = False,
        reasoning_summary: str | None = "auto",
        max_retries: int = 0,
    ) -> None:
        self._client = client
        self.max_retries = max_retries
        self.store = store
        self.reasoning_summary = reasoning_summary

    @property
    def api_name(self) -> str:
        return "responses"

    @property
    def base_url(self) -> str:
        return str(self._client.base_url).rstrip("/")

    async def aclose(self) -> None:
        await self._client.close()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        retries = Retries(self.max_retries, self.base_url)
        while True:
            try:
                stream = await self._client.responses.create(
                    **as_is(self.params(request), "input"), stream=True
                )
                break
            except Exception as exc:
                wait = retries.after(exc)
            yield wait
            await asyncio.sleep(wait.delay_seconds)
        try:
            async with stream:
                parser = _StreamParser(self.base_url)
                async for event in stream:
                    for out in parser.feed(event):
                        yield out
                    if parser.finished:
                        return
        except Exception as exc:
            raise provider_error(exc, self.base_url) from exc
        raise cut_stream(self.base_url)

    async def generate(self, request: ModelRequest) -> GenerateResult:
        params = self.params(request)
        params.pop("tools", None)
        retries = Retries(self.max_retries, self.base_url)
        while True:
            try:
                response = await self._client.responses.create(**as_is(params, "input"), stream=False)
                break
            except Exception as exc:
                wait = retries.after(exc)
            await asyncio.sleep(wait.delay_seconds)
        if response.status == "failed" and response.error is not None:
            raise stream_error(response.error.message, response.error.code, self.base_url)
        return GenerateResult(response.output_text, _usage(response.usage))

    def params(self, request: ModelRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": request.model,
            "input": to_responses_input(request.messages, store=self.store),
            "store": self.store,
        }
        if request.instructions:
            params["instructions"] = request.instructions
        if request.tools:
            params["tools"] = [_tool(t) for t in request.tools]
        effort = request.reasoning_effort
        if effort is not None:
            reasoning: dict[str, Any] = {"effort": effort}
            if effort != "none" and self.reasoning_summary:
                reasoning["summary"] = self.reasoning_summary
            params["reasoning"] = reasoning
            if effort != "none" and not self.store:
                params["include"] = ["reasoning.encrypted_content"]
        if request.max_output_tokens is not None:
            params["max_output_tokens"] = request.max_output_tokens
        if request.temperature is not None:
            params["temperature"] = request.temperature
        return params


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.parameters,
        "strict": False,
    }


# ---------------------------------------------------------------------------- messages → input


def to_responses_input(messages: list[Message], *, store: bool) -> list[InputItem]:
    items: list[InputItem] = []
    for message in messages:
        role = message.get("role")
        if role == "system":
            items.append(
                {"type": "message", "role": "system", "content": content_text(message.get("content"))}
            )
        elif role == "user":
            items.append({"type": "message", "role": "user", "content": _user_content(message)})
        elif role == "assistant":
            items.extend(_assistant_items(message, store=store))
        elif role == "tool":
            items.extend(
                {"type": "function_call_output", "call_id": p["toolCallId"], "output": tool_output_text(p)}
                for p in parts_of(message)
                if p.get("type") in ("tool-result", "tool-error")
            )
    return items


def _user_content(message: Message) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    for part in parts_of(message):
        if part.get("type") == "text":
            content.append({"type": "input_text", "text": str(part.get("text", ""))})
        elif part.get("type") == "image":
            content.append({"type": "input_image", "image_url": image_url(part), "detail": "auto"})
    return content


def _assistant_items(message: Message, *, store: bool) -> list[InputItem]:
    parts = parts_of(message)
    if store:
        return _with_references(parts)
    if _replayable(parts):
        return _grouped(parts, keep_ids=True)
    return _grouped([p for p in parts if p.get("type") != "reasoning"], keep_ids=False)


def _replayable(parts: list[Part]) -> bool:
    """True when every reasoning part can go back inline (an id and its encrypted content)."""
    reasoning = [p for p in parts if p.get("type") == "reasoning"]
    return bool(reasoning) and all(
        item_id_of(p) and openai_options(p).get("reasoningEncryptedContent") for p in reasoning
    )


def _with_references(parts: list[Part]) -> list[InputItem]:
    items: list[InputItem] = []
    referenced: set[str] = set()
    for part in parts:
        item_id = item_id_of(part)
        if item_id is None:
            if part.get("type") != "reasoning":  # reasoning cannot go inline without its id
                items.extend(_grouped([part], keep_ids=False))
        elif item_id not in referenced:
            referenced.add(item_id)
            items.append({"type": "item_reference", "id": item_id})
    return items


def _grouped(parts: list[Part], *, keep_ids: bool) -> list[InputItem]:
    """Inline items; consecutive text or reasoning parts of one provider item become one item again."""
    items: list[InputItem] = []
    last_key: tuple[str, str | None] | None = None
    for part in parts:
        kind = part.get("type")
        item_id = item_id_of(part) if keep_ids else None
        key = (str(kind), item_id)
        if kind == "text":
            text = {"type": "output_text", "text": str(part.get("text", "")), "annotations": []}
            if key == last_key:
                items[-1]["content"].append(text)
            else:
                items.append(_id({"type": "message", "role": "assistant", "content": [text]}, item_id))
        elif kind == "reasoning":
            summary = [{"type": "summary_text", "text": str(part["text"])}] if part.get("text") else []
            if key == last_key:
                items[-1]["summary"].extend(summary)
            else:
                encrypted = openai_options(part).get("reasoningEncryptedContent")
                items.append(
                    {"type": "reasoning", "id": item_id, "summary": summary, "encrypted_content": encrypted}
                )
        elif kind == "tool-call":
            call = {
                "type": "function_call",
                "call_id": part["toolCallId"],
                "name": part["toolName"],
                "arguments": arguments_of(part),
            }
            items.append(_id(call, item_id))
        last_key = key
    return items


def _id(item: InputItem, item_id: str | None) -> InputItem:
    return {**item, "id": item_id} if item_id else item


# ---------------------------------------------------------------------------- stream → events


class _StreamParser:
    """Turns Responses stream events into ``ModelEvent``s; ``finished`` once the step is done."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.finished = False
        self._done_items: dict[int, Any] = {}
        self._announced: set[str] = set()

    def feed(self, event: Any) -> list[ModelEvent]:
        kind = getattr(event, "type", "")
        if kind == "response.output_text.delta":
            return [TextDelta(event.delta)] if event.delta else []
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return [ReasoningDelta(event.delta)] if event.delta else []
        if kind == "response.output_item.added" and event.item.type == "function_call":
            return [ToolInputStart(event.item.call_id, event.item.name)]
        if kind == "response.output_item.done":
            self._done_items[event.output_index] = event.item
            return self._announce(event.item)
        if kind in ("response.completed", "response.incomplete"):
            return self._finish(event.response)
        if kind == "response.failed":
            error = event.response.error
            raise stream_error(
                error.message if error else "the response failed", error and error.code, self.base_url
            )
        if kind == "error":
            raise stream_error(event.message, event.code, self.base_url)
        return []

    def _announce(self, item: Any) -> list[ModelEvent]:
        if item.type != "function_call" or item.call_id in self._announced:
            return []
        self._announced.add(item.call_id)
        return [ToolCallReady(item.call_id, item.name, item.arguments or "")]

    def _finish(self, response: Any) -> list[ModelEvent]:
        self.finished = True
        output = list(response.output or []) or [self._done_items[i] for i in sorted(self._done_items)]
        events: list[ModelEvent] = [e for item in output for e in self._announce(item)]
        parts = [part for item in output for part in _parts_of_item(item)]
        message: Message = {"role": "assistant", "content": parts}
        events.append(StepFinished(message, _usage(response.usage), _finish_reason(response, output)))
        return events


def _parts_of_item(item: Any) -> list[Part]:
    if item.type == "reasoning":
        texts = [s.text for s in item.summary or []] or [c.text for c in item.content or []]
        part: Part = {"type": "reasoning", "text": "\n\n".join(texts)}
        return [with_item_id(part, item.id, reasoningEncryptedContent=item.encrypted_content)]
    if item.type == "message":
        texts = [c.text if c.type == "output_text" else c.refusal for c in item.content]
        return [with_item_id({"type": "text", "text": "".join(texts)}, item.id)]
    if item.type == "function_call":
        call: Part = {
            "type": "tool-call",
            "toolCallId": item.call_id,
            "toolName": item.name,
            "input": loose_tool_input(item.arguments or ""),
        }
        return [with_item_id(call, item.id)]
    return []


def _finish_reason(response: Any, output: list[Any]) -> FinishReason:
    details = getattr(response, "incomplete_details", None)
    if response.status == "incomplete" and details is not None:
        return "content-filter" if details.reason == "content_filter" else "length"
    if any(item.type == "function_call" for item in output):
        return "tool-calls"
    return "stop"


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    inputs = getattr(usage, "input_tokens_details", None)
    outputs = getattr(usage, "output_tokens_details", None)
    return Usage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cached_input_tokens=(getattr(inputs, "cached_tokens", 0) or 0) if inputs else 0,
        reasoning_tokens=(getattr(outputs, "reasoning_tokens", 0) or 0) if outputs else 0,
    )
