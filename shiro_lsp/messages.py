"""The message model (spec §5.1): Vercel AI SDK ``ModelMessage`` shapes as plain JSON dicts.

Messages stay plain dicts on purpose: sessions are JSON on disk, the token estimate is the
length of their JSON, and the prune pipeline ports 1:1 from the reference when it works on the
same shapes. The TypedDicts document the shapes; code treats them as ``dict[str, Any]``.

Roles and parts::

    {"role": "system", "content": str}
    {"role": "user", "content": str | [TextPart | ImagePart | FilePart]}

An image the user gave is kept in the image store, and its part names it there:
``{"type": "image", "imageId", "mediaType", "name", "width", "height"}`` (``images/parts.py``); a tool
result that showed the model images carries such parts under ``images``.
    {"role": "assistant", "content": str | [TextPart | ReasoningPart | ToolCallPart | ApprovalRequestPart]}
    {"role": "tool", "content": [ToolResultPart | ToolErrorPart | ApprovalResponsePart]}

Any part may carry ``providerOptions: {<namespace>: {"itemId": "rs_…|msg_…|fc_…", ...}}``: a
pointer to an item the provider stored (OpenAI Responses). See ``item_id_of``.
"""

from __future__ import annotations

import re
from typing import Any, Literal, NotRequired, TypedDict

Message = dict[str, Any]
Part = dict[str, Any]

Role = Literal["system", "user", "assistant", "tool"]


class TextPart(TypedDict):
    type: Literal["text"]
    text: str
    providerOptions: NotRequired[dict[str, dict[str, Any]]]


class ReasoningPart(TypedDict):
    type: Literal["reasoning"]
    text: str
    providerOptions: NotRequired[dict[str, dict[str, Any]]]


class ToolCallPart(TypedDict):
    type: Literal["tool-call"]
    toolCallId: str
    toolName: str
    input: Any
    providerOptions: NotRequired[dict[str, dict[str, Any]]]


class ToolResultOutput(TypedDict):
    type: Literal["text", "json", "error-text", "error-json"]
    value: Any


class ToolResultPart(TypedDict):
    type: Literal["tool-result"]
    toolCallId: str
    toolName: str
    output: ToolResultOutput


class ToolErrorPart(TypedDict):
    type: Literal["tool-error"]
    toolCallId: str
    toolName: str
    error: str


TOOL_RESULT_TYPES = frozenset({"tool-result", "tool-error"})


def item_id_of(part: Part) -> str | None:
    """The provider item id of a part: the first string ``itemId`` in any provider namespace."""
    options = part.get("providerOptions")
    if not isinstance(options, dict):
        return None
    for namespace in options.values():
        if isinstance(namespace, dict):
            item_id = namespace.get("itemId")
            if isinstance(item_id, str):
                return item_id
    return None


_CONTEXT_BLOCK = re.compile(r'\s*<context label="[^"\n]*"[^>\n]*>\n[\s\S]*?\n</context>')
"""An attached document in a prompt (agent/attachments.py writes them): never part of a title."""


def without_attachments(text: str) -> str:
    """A prompt's text without the documents attached to it: what the user typed."""
    return _CONTEXT_BLOCK.sub("", text)


def title_of(messages: list[Message]) -> str:
    """Session title (spec §3.1): the first user message, clipped to 60 chars + '...', without the
    documents attached to it (the current file, a selection)."""
    for message in messages:
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # a prompt with images: its text
                content = "".join(str(p.get("text", "")) for p in content if p.get("type") == "text")
            if isinstance(content, str) and content:
                words = without_attachments(content).strip() or content
                return words[:60] + "..." if len(words) > 60 else words
            return "untitled"
    return "untitled"


def succeeded(part: Part) -> bool:
    """Whether a tool-result part is a result, not an error or a refusal."""
    return bool(part.get("output", {}).get("type") == "text")
