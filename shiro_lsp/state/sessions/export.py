"""Exporting a session as JSON (the file format) or Markdown."""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from shiro_lsp.state.sessions.record import SessionRecord, encode_record

ExportFormat = Literal["json", "markdown"]


def export_text(
    record: SessionRecord,
    format: ExportFormat,
    *,
    extra_json: dict[str, Any] | None = None,
    extra_markdown: str = "",
) -> str:
    """The export in one encoding pass (run it in a thread: a session can be tens of MB)."""
    if format == "json":
        return b"".join(encode_record(record, extra=extra_json)).decode("utf-8")
    text = export_markdown(record)
    return text if not extra_markdown else text.rstrip("\n") + "\n\n" + extra_markdown


def export_markdown(record: SessionRecord) -> str:
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
        lines += _markdown_content(message.get("content"))
    return "\n".join(lines).rstrip() + "\n"


def _markdown_content(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return [_fenced(json.dumps(content, indent=2, ensure_ascii=False), "json")]
    out: list[str] = []
    for part in content:
        out += [*_markdown_part(part), ""]
    return out[:-1] if out else []


def _markdown_part(part: Any) -> list[str]:
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
        return [f"**Tool result** `{part.get('toolName')}`", "", _fenced(body, "")]
    if kind == "tool-error":
        return [f"**Tool error** `{part.get('toolName')}`", "", _fenced(str(part.get("error", "")), "")]
    if kind == "image":
        return ["*(image)*"]
    if kind == "file":
        return [f"*(file {part.get('filename') or part.get('mediaType') or ''})*".replace(" )", ")")]
    return [_fenced(json.dumps(part, indent=2, ensure_ascii=False), "json")]


def _fenced(text: str, language: str) -> str:
    """A code fence longer than any backtick run inside, so the text cannot close it early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"
