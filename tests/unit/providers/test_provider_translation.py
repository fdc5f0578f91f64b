"""Property: any well-formed history goes out in a shape OpenAI accepts, on both APIs."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fakes.fake_openai import FakeOpenAI, check_chat
from shiro_lsp.providers.chat_completions import to_chat_messages
from shiro_lsp.providers.responses import to_responses_input

words = st.text(alphabet="abc xyz", min_size=1, max_size=12)


@st.composite
def assistant_step(draw: st.DrawFn, n: int) -> list[dict[str, Any]]:
    """One model step (reasoning?, text?, tool calls) and the tool message answering its calls."""
    with_ids = draw(st.booleans())

    def opts(item_id: str, **extra: Any) -> dict[str, Any]:
        return {"providerOptions": {"openai": {"itemId": item_id, **extra}}} if with_ids else {}

    parts: list[dict[str, Any]] = []
    if draw(st.booleans()):
        encrypted = {"reasoningEncryptedContent": f"enc_{n}"} if draw(st.booleans()) else {}
        parts.append({"type": "reasoning", "text": draw(words), **opts(f"rs_{n}", **encrypted)})
    if draw(st.booleans()):
        parts.append({"type": "text", "text": draw(words), **opts(f"msg_{n}")})
    calls = draw(st.integers(0, 2))
    for i in range(calls):
        call = {
            "type": "tool-call",
            "toolCallId": f"call_{n}_{i}",
            "toolName": "read_file",
            "input": {"path": draw(words)},
        }
        parts.append({**call, **opts(f"fc_{n}_{i}")})
    messages: list[dict[str, Any]] = [{"role": "assistant", "content": parts}]
    if calls:
        results = [
            {
                "type": "tool-result",
                "toolCallId": f"call_{n}_{i}",
                "toolName": "read_file",
                "output": {"type": "text", "value": "ok"},
            }
            if draw(st.booleans())
            else {
                "type": "tool-error",
                "toolCallId": f"call_{n}_{i}",
                "toolName": "read_file",
                "error": "denied",
            }
            for i in range(calls)
        ]
        messages.append({"role": "tool", "content": results})
    return messages


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = []
    for turn in range(draw(st.integers(1, 3))):
        history.append({"role": "user", "content": draw(words)})
        for step in range(draw(st.integers(0, 3))):
            history.extend(draw(assistant_step(turn * 10 + step)))
    return history


def call_ids(history: list[dict[str, Any]]) -> set[str]:
    return {
        p["toolCallId"]
        for m in history
        if isinstance(m["content"], list)
        for p in m["content"]
        if "toolCallId" in p
    }


@settings(max_examples=150, deadline=None)
@given(histories())
def test_chat_messages_pair_every_call_with_its_result(history: list[dict[str, Any]]) -> None:
    messages = to_chat_messages("You are Shiro.", history)
    assert check_chat({"messages": messages}) is None
    wire = json.dumps(messages)
    assert all(call_id in wire for call_id in call_ids(history))
    assert "reasoning" not in wire and "itemId" not in wire


@settings(max_examples=150, deadline=None)
@given(histories())
def test_responses_input_without_store_is_accepted(history: list[dict[str, Any]]) -> None:
    items = to_responses_input(history, store=False)
    assert FakeOpenAI().check_responses({"input": items}) is None
    assert all(item.get("type") != "item_reference" for item in items)
    replayed = {i["id"] for i in items if i.get("type") == "reasoning" and i.get("encrypted_content")}
    for item in items:
        if item.get("type") in ("message", "function_call") and "id" in item:
            step = item["id"].split("_")[1]  # msg_<n> / fc_<n>_<i>: an id only with its step's reasoning
            assert f"rs_{step}" in replayed
    wire = json.dumps(items)
    assert all(call_id in wire for call_id in call_ids(history))
