"""Exporting a session as JSON (the file format) or Markdown."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal

from shiro_lsp.state.sessions.record import SessionRecord, encode_record

ExportFormat = Literal["json", "markdown"]
ImageData = Callable[[str], str | None]
"""An image id to the image as a ``data:`` URL (None: no longer kept)."""


def export_text(
    record: SessionRecord,
    format: ExportFormat,
    *,
    extra_json: dict[str, Any] | None = None,
    extra_markdown: str = "",
    images: ImageData = lambda _id: None,
) -> str:
    """The export in one encoding pass (run it in a thread: a session can be tens of MB). The images
    the session names go with it: JSON under ``images`` (id to ``data:`` URL), Markdown inline."""
    if format == "json":
        kept = {i: url for i in _image_ids(record) if (url := images(i)) is not None}
        extra = {**(extra_json or {}), **({"images": kept} if kept else {})}
        return b"".join(encode_record(record, extra=extra or None)).decode("utf-8")
    text = export_markdown(record, images)
    return text if not extra_markdown else text.rstrip("\n") + "\n\n" + extra_markdown


def _image_ids(record: SessionRecord) -> list[str]:
    found: list[str] = []
    for message in record.messages:
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if not isinstance(part, dict):
                continue
            for image in [part, *(part.get("images") or [])]:
                image_id = image.get("imageId") if isinstance(image, dict) else None
                if image.get("type") == "image" and isinstance(image_id, str) and image_id not in found:
                    found.append(image_id)
    return found


def export_markdown(record: SessionRecord, images: ImageData = lambda _id: None) -> str:
    lines = [f"# {record.title}", ""]
    lines += [
        f"- session: `{record.id}`",
        f"- workspace: `{record.cwd}`",
        f"- created: {record.created_at}, updated: {record.updated_at}",
        f"- model: `{record.model}`" + (f" ({record.provider})" if record.provider else ""),
        f"- tokens: {record.input_tokens} in / {record.output_tokens} out"
        + (f", ${record.cost_usd:.4f}" if record.cost_usd is not None else ""),
        f"- messages: {len(record.messages)}",
    ]
    if record.todos:
        lines += ["", "## Tasks", "", *(f"- {t.line}" for t in record.todos)]
    lines += ["", "## Transcript"]
    for message in record.messages:
        lines += ["", f"### {str(message.get('role', '?')).capitalize()}", ""]
        lines += _markdown_content(message.get("content"), images)
    return "\n".join(lines).rstrip() + "\n"


def _markdown_content(content: Any, images: ImageData) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return [_fenced(json.dumps(content, indent=2, ensure_ascii=False), "json")]
    out: list[str] = []
    for part in content:
        out += [*_markdown_part(part, images), ""]
    return out[:-1] if out else []


def _markdown_image(part: dict[str, Any], images: ImageData) -> str:
    name = str(part.get("name") or "image").replace("]", ")").replace("[", "(")
    image_id = part.get("imageId")
    url = images(image_id) if isinstance(image_id, str) else None
    return f"![{name}]({url})" if url else f"*(image {name})*"


def _markdown_part(part: Any, images: ImageData) -> list[str]:
    if not isinstance(part, dict):
        return [_fenced(json.dumps(part, ensure_ascii=False), "json")]
    kind = part.get("type")
    if kind == "text":
        return [str(part.get("text", ""))]
    if kind == "reasoning":
        return ["> " + line for line in str(part.get("text", "")).splitlines() or [""]]
    if kind == "tool-call":
        body = json.dumps(part.get("input"), indent=2, ensure_ascii=False)
        return [f"**Tool call** `{part.get('toolName')}`", "", _fenced(body, "json")]
    if kind == "tool-result":
        output = part.get("output")
        value = output.get("value") if isinstance(output, dict) else output
        body = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
        shown = [_markdown_image(i, images) for i in part.get("images") or [] if isinstance(i, dict)]
        return [f"**Tool result** `{part.get('toolName')}`", "", _fenced(body, ""), *shown]
    if kind == "tool-error":
        return [f"**Tool error** `{part.get('toolName')}`", "", _fenced(str(part.get("error", "")), "")]
    if kind == "image":
        return [_markdown_image(part, images)]
    if kind == "file":
        return [f"*(file {part.get('filename') or part.get('mediaType') or ''})*".replace(" )", ")")]
    return [_fenced(json.dumps(part, indent=2, ensure_ascii=False), "json")]


def _fenced(text: str, language: str) -> str:
    """A code fence longer than any backtick run inside, so the text cannot close it early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"
