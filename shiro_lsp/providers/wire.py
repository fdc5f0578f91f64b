"""Pieces of the message model (spec §5.1) both wire formats need."""

from __future__ import annotations

import json
from typing import Any

from shiro_lsp.bounded import NOT_PARSED, json_value
from shiro_lsp.messages import Message, Part


def content_text(content: object) -> str:
    """The text of a string content or of the text parts of a part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def parts_of(message: Message) -> list[Part]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [p for p in content or [] if isinstance(p, dict)]


def arguments_of(part: Part) -> str:
    """A tool-call part's input as the JSON text the wire wants (a raw string input is sent as-is)."""
    value = part.get("input")
    if isinstance(value, str):
        return value
    return json.dumps({} if value is None else value, ensure_ascii=False)


def loose_tool_input(arguments: str) -> Any:
    """The tool-call ``input`` for a message: parsed JSON, or the raw text when it is not JSON."""
    if not arguments.strip():
        return {}
    value = json_value(arguments)
    return arguments if value is NOT_PARSED else value


def tool_output_text(part: Part) -> str:
    """The text a tool-result / tool-error part sends back to the model."""
    if part.get("type") == "tool-error":
        return str(part.get("error", ""))
    output = part.get("output")
    if not isinstance(output, dict):
        return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    value = output.get("value")
    if output.get("type") in ("text", "error-text") and isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def image_url(part: Part) -> str:
    """A URL (http(s) or data:) for an image part ``{type: image, image, mediaType?}``."""
    image = str(part.get("image", ""))
    if image.startswith(("http://", "https://", "data:")):
        return image
    return f"data:{part.get('mediaType') or 'image/png'};base64,{image}"


def openai_options(part: Part) -> dict[str, Any]:
    options = part.get("providerOptions")
    if isinstance(options, dict) and isinstance(options.get("openai"), dict):
        return dict(options["openai"])
    return {}


def with_item_id(part: Part, item_id: str | None, **extra: Any) -> Part:
    """``part`` with ``providerOptions.openai`` = ``{itemId, **extra}`` (``None`` values left out)."""
    options = {k: v for k, v in {"itemId": item_id, **extra}.items() if v is not None}
    return {**part, "providerOptions": {"openai": options}} if options else part


def as_is(params: dict[str, Any], key: str) -> dict[str, Any]:
    """SDK arguments with ``params[key]`` (the history) passed through ``extra_body`` untouched.

    The SDK walks every request field against its TypedDicts before sending it, on the event loop:
    ~36 ms of CPU for a 480 KB history (ten times one ``json.dumps`` of it). Shiro's messages are
    already wire JSON, and the SDK merges ``extra_body`` over the body as it is.
    """
    args = dict(params)
    args["extra_body"] = {key: args.pop(key)}
    args[key] = []
    return args
