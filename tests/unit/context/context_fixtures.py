"""Message fixtures shared by the context tests (the reference's test/prune.test.ts helpers)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from shiro_lsp.context.estimate import estimate_tokens as estimate
from shiro_lsp.messages import Message

__all__ = ["estimate"]


def user(text: str) -> Message:
    return {"role": "user", "content": text}


def kinds(messages: Sequence[Message]) -> list[str]:
    return [
        f"{m['role']}:{'+'.join(p['type'] for p in m['content'])}"
        if isinstance(m["content"], list)
        else m["role"]
        for m in messages
    ]


def item_ids(messages: Sequence[Message]) -> list[str]:
    """Every provider itemId in a message tree, in any namespace."""
    found: list[str] = []
    for message in messages:
        if not isinstance(message["content"], list):
            continue
        for part in message["content"]:
            for options in (part.get("providerOptions") or {}).values():
                if isinstance(options.get("itemId"), str):
                    found.append(options["itemId"])
    return found


def as_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def reasoning_turn(rs: str, msg: str, text: str = "answer") -> Message:
    """An assistant turn as the OpenAI Responses API returns it."""
    return {
        "role": "assistant",
        "content": [
            {"type": "reasoning", "text": "thinking", "providerOptions": {"openai": {"itemId": rs}}},
            {"type": "text", "text": text, "providerOptions": {"openai": {"itemId": msg}}},
        ],
    }


def tool_call_part(call_id: str = "tc1", item: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {
        "type": "tool-call",
        "toolCallId": call_id,
        "toolName": "grep",
        "input": {"pattern": "x"},
    }
    if item is not None:
        part["providerOptions"] = {"openai": {"itemId": item}}
    return part


def tool_turn(rs: str, call: str) -> Message:
    return {
        "role": "assistant",
        "content": [
            {"type": "reasoning", "text": "deciding", "providerOptions": {"openai": {"itemId": rs}}},
            tool_call_part("tc1", call),
        ],
    }


def result_part(call_id: str, value: str = "hit", tool: str = "grep") -> dict[str, Any]:
    return {
        "type": "tool-result",
        "toolCallId": call_id,
        "toolName": tool,
        "output": {"type": "text", "value": value},
    }


def call_and_result(call: str, rs: str | None = None) -> list[Message]:
    """The assistant tool-call plus the tool message answering it, as one exchange."""
    reasoning = (
        [{"type": "reasoning", "text": "deciding", "providerOptions": {"openai": {"itemId": rs}}}]
        if rs
        else []
    )
    return [
        {"role": "assistant", "content": [*reasoning, tool_call_part(call)]},
        {"role": "tool", "content": [result_part(call)]},
    ]


def transcript(steps: int, size: int, prefix: str = "") -> list[Message]:
    """A user prompt and ``steps`` reasoning + read_file steps with ``size`` chars of output each."""
    messages: list[Message] = [user("do the thing")]
    for i in range(steps):
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "reasoning",
                        "text": "deciding",
                        "providerOptions": {"openai": {"itemId": f"rs_{prefix}{i}"}},
                    },
                    {
                        "type": "tool-call",
                        "toolCallId": f"t{prefix}{i}",
                        "toolName": "read_file",
                        "input": {"path": f"{prefix}f{i}.ts"},
                    },
                ],
            }
        )
        messages.append({"role": "tool", "content": [result_part(f"t{prefix}{i}", "x" * size, "read_file")]})
    return messages


def tool_calls_in(messages: Sequence[Message]) -> int:
    return sum(
        1
        for m in messages
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "tool-call"
    )


def stranded_results(messages: Sequence[Message]) -> list[str]:
    """Tool results/errors whose tool call is not in ``messages``."""
    calls = {
        p["toolCallId"]
        for m in messages
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "tool-call"
    }
    return [
        p["toolCallId"]
        for m in messages
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] in ("tool-result", "tool-error") and p["toolCallId"] not in calls
    ]
