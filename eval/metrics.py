"""What a recorded run says: model requests, tokens, llama.cpp's cache, tool calls, the final answer."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

Record = dict[str, Any]


@dataclass
class Exchange:
    """One model request and what came back."""

    n: int
    path: str
    body: Any
    status: int | None = None
    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None


def _is_model_call(method: str, path: str) -> bool:
    return method == "POST" and path.rstrip("/").endswith(("/chat/completions", "/completions", "/responses"))


def _apply_usage(ex: Exchange, obj: dict[str, Any]) -> None:
    usage = obj.get("usage") or {}
    timings = obj.get("timings") or {}
    if isinstance(usage, dict):
        if isinstance(usage.get("prompt_tokens"), int):
            ex.prompt_tokens = usage["prompt_tokens"]
        if isinstance(usage.get("completion_tokens"), int):
            ex.completion_tokens = usage["completion_tokens"]
        details = usage.get("prompt_tokens_details") or {}
        if isinstance(details, dict) and isinstance(details.get("cached_tokens"), int):
            ex.cached_tokens = details["cached_tokens"]
    if isinstance(timings, dict):
        # llama.cpp: cache_n prompt tokens came from its cache, prompt_n were processed now
        cache_n, prompt_n = timings.get("cache_n"), timings.get("prompt_n")
        if isinstance(cache_n, int):
            ex.cached_tokens = cache_n
            if ex.prompt_tokens is None and isinstance(prompt_n, int):
                ex.prompt_tokens = cache_n + prompt_n


def _merge_tool_delta(calls: dict[int, dict[str, Any]], delta: dict[str, Any]) -> None:
    index = delta.get("index", len(calls))
    call = calls.setdefault(index, {"id": None, "name": "", "arguments": ""})
    if delta.get("id"):
        call["id"] = delta["id"]
    function = delta.get("function") or {}
    call["name"] += function.get("name") or ""
    call["arguments"] += function.get("arguments") or ""


def exchanges(records: Iterable[Record]) -> list[Exchange]:
    """The model requests of a recorded run, in order, with their answers assembled."""
    by_n: dict[int, Exchange] = {}
    lines: dict[int, list[str]] = {}
    for record in records:
        n = record.get("n")
        if not isinstance(n, int):
            continue
        kind = record.get("dir")
        if kind == "req" and _is_model_call(str(record.get("method")), str(record.get("path"))):
            by_n[n] = Exchange(n=n, path=str(record["path"]), body=record.get("body"))
        elif kind == "resp" and n in by_n:
            by_n[n].status = record.get("status")
        elif kind == "line" and n in by_n:
            lines.setdefault(n, []).append(str(record.get("text", "")))
    for n, ex in by_n.items():
        texts = lines.get(n, [])
        if any(t.startswith("data:") for t in texts):
            calls: dict[int, dict[str, Any]] = {}
            for text in texts:
                payload = text[5:].strip() if text.startswith("data:") else ""
                if not payload or payload == "[DONE]":
                    continue
                try:
                    chunk = json.loads(payload)
                except ValueError:
                    continue
                if not isinstance(chunk, dict):
                    continue
                _apply_usage(ex, chunk)
                for choice in chunk.get("choices") or []:
                    delta = choice.get("delta") or {}
                    ex.content += delta.get("content") or ""
                    for tool_delta in delta.get("tool_calls") or []:
                        _merge_tool_delta(calls, tool_delta)
                    if choice.get("finish_reason"):
                        ex.finish_reason = choice["finish_reason"]
            ex.tool_calls = [calls[i] for i in sorted(calls)]
        else:
            try:
                obj = json.loads("\n".join(texts)) if texts else None
            except ValueError:
                obj = None
            if isinstance(obj, dict):
                _apply_usage(ex, obj)
                for choice in obj.get("choices") or []:
                    message = choice.get("message") or {}
                    ex.content += message.get("content") or ""
                    ex.finish_reason = choice.get("finish_reason")
                    for call in message.get("tool_calls") or []:
                        function = call.get("function") or {}
                        ex.tool_calls.append(
                            {"id": call.get("id"), "name": function.get("name", ""),
                             "arguments": function.get("arguments", "")}
                        )  # fmt: skip
    return [by_n[n] for n in sorted(by_n)]


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def system_text(body: Any) -> str:
    """The system/developer message(s) of a request body (Chat Completions or Responses)."""
    if not isinstance(body, dict):
        return ""
    parts: list[str] = []
    if isinstance(body.get("instructions"), str):
        parts.append(body["instructions"])
    for message in body.get("messages") or body.get("input") or []:
        if isinstance(message, dict) and message.get("role") in ("system", "developer"):
            parts.append(_message_text(message))
    return "\n".join(parts)


def _tool_descriptions(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    return "\n".join(
        json.dumps(tool, ensure_ascii=False) for tool in body.get("tools") or [] if isinstance(tool, dict)
    )


_SENTENCE_END = re.compile(r"(?<=[.!?:])\s+|\n+")


def prompt_sentences(body: Any, most: int = 40, min_chars: int = 30) -> list[str]:
    """Long, distinctive sentences of a harness's own system prompt: an answer that contains one of them
    echoes the prompt instead of answering. The longest ``most`` are kept."""
    seen: set[str] = set()
    sentences: list[str] = []
    for raw in _SENTENCE_END.split(system_text(body)):
        sentence = raw.strip(" -*#>`\t")
        if len(sentence) >= min_chars and len(sentence.split()) >= 5 and sentence not in seen:
            seen.add(sentence)
            sentences.append(sentence)
    sentences.sort(key=len, reverse=True)
    return sentences[:most]


_EXAMPLE = re.compile(r"`([^`\n]{6,80})`|\\\"([^\"\\\n]{6,80})\\\"|'([^'\n]{6,80})'")


def example_values(body: Any) -> list[str]:
    """Quoted example values in a harness's system prompt and tool descriptions (`src/**/*.ts`, ...)."""
    text = system_text(body) + "\n" + _tool_descriptions(body)
    values = {next(g for g in m.groups() if g) for m in _EXAMPLE.finditer(text)}
    values = {v for v in values if v == v.strip() and len(set(v)) > 3}
    # a placeholder path's folder part too: `path/to/file` -> `path/to/` (a model writes path/to/x.py)
    values |= {
        v.rsplit("/", 1)[0] + "/" for v in values if v.count("/") >= 2 and v[0].isalpha() and " " not in v
    }
    return sorted(values)


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def echoed_sentences(answer: str, sentences: list[str]) -> list[str]:
    flat = normalise(answer)
    return [s for s in sentences if normalise(s) in flat]


@dataclass
class Traffic:
    """The numbers a run's recorded traffic gives."""

    requests: int
    native_tool_calls: int
    first_prompt_tokens: int | None
    prompt_tokens: int
    cached_tokens: int
    later_prompt_tokens: int
    later_cached_tokens: int
    last_content: str
    last_tool_calls: int
    system_sentences: list[str]
    examples: list[str]
    tool_call_texts: list[str]
    errors: list[str]


def traffic(records: list[Record]) -> Traffic:
    exs = exchanges(records)
    first = exs[0] if exs else None
    later = exs[1:]
    return Traffic(
        requests=len(exs),
        native_tool_calls=sum(len(e.tool_calls) for e in exs),
        first_prompt_tokens=first.prompt_tokens if first else None,
        prompt_tokens=sum(e.prompt_tokens or 0 for e in exs),
        cached_tokens=sum(e.cached_tokens or 0 for e in exs),
        later_prompt_tokens=sum(e.prompt_tokens or 0 for e in later),
        later_cached_tokens=sum(e.cached_tokens or 0 for e in later),
        last_content=exs[-1].content if exs else "",
        last_tool_calls=len(exs[-1].tool_calls) if exs else 0,
        system_sentences=prompt_sentences(first.body) if first else [],
        examples=example_values(first.body) if first else [],
        tool_call_texts=[f"{c['name']} {c['arguments']}" for e in exs for c in e.tool_calls],
        errors=[f"HTTP {e.status}" for e in exs if e.status is not None and e.status >= 400]
        + [str(r.get("error")) for r in records if r.get("dir") == "upstream-error"],
    )


def repeated_blocks(text: str, size: int = 5) -> set[tuple[str, ...]]:
    """Blocks of ``size`` non-blank lines that occur twice in ``text`` without overlapping."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    first: dict[tuple[str, ...], int] = {}
    repeated: set[tuple[str, ...]] = set()
    for i in range(len(lines) - size + 1):
        block = tuple(lines[i : i + size])
        if i - first.setdefault(block, i) >= size:
            repeated.add(block)
    return repeated


def duplicated_files(before: dict[str, bytes], written: dict[str, bytes]) -> list[str]:
    """Written files that hold a block of five or more non-blank lines twice, where their start did not
    (a listing appended instead of replacing the file, a loop that wrote the same lines again)."""
    return sorted(
        path
        for path, content in written.items()
        if repeated_blocks(content.decode("utf-8", "replace"))
        - repeated_blocks(before.get(path, b"").decode("utf-8", "replace"))
    )
