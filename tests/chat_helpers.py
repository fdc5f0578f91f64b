"""Helpers for end-to-end chat tests: waiting, reading events, reading what the model was sent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from fakes.fake_openai import FakeOpenAI


async def eventually(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition never became true"
        await asyncio.sleep(0.02)


def types_of(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e["text"] for e in events if e["type"] == "text")


def model_bodies(fake: FakeOpenAI) -> list[dict[str, Any]]:
    """Every request body the scripted model received, oldest first."""
    return [r["body"] for r in fake.requests if r["path"].endswith(("/responses", "/chat/completions"))]


def system_prompt_of(body: dict[str, Any]) -> str:
    if "instructions" in body:
        return str(body["instructions"])
    return str(body["messages"][0]["content"])


def tool_names_of(body: dict[str, Any]) -> list[str]:
    return [t.get("name") or t["function"]["name"] for t in body.get("tools") or []]


def sent(fake: FakeOpenAI) -> str:
    return json.dumps(model_bodies(fake))


def task_list_of(body: dict[str, Any]) -> str:
    """The task list reminder that trails a request's conversation ('' when there is none)."""
    items = body.get("messages") or body.get("input") or []
    last = items[-1] if isinstance(items, list) and items else {}
    if last.get("role") != "user":
        return ""
    content = last.get("content")
    text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content or [])
    return text if text.startswith("Your task list") else ""
