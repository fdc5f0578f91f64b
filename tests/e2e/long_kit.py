"""What the long-session e2e tests share: a fake that answers plain calls apart, seeded sessions, wire checks.

Plain model calls (no tools offered: the pruned-span summary and ``/compact``) come at moments a turn's
script cannot predict, so ``RoutedFake`` answers them from their own queue (``plain``) and the turn's
steps from ``script``. Every check reads the request bodies the fake recorded, i.e. what the model saw.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from chat_helpers import task_list_of
from fakes.fake_openai import Entry, FakeOpenAI, Step, Text, Usage
from fakes.fixtures import options
from lsp_client import ShiroClient
from shiro_lsp.context.summary import PRUNED_SPAN_PREFIX

PLAIN_SUMMARY = (
    "- read the generated files one by one\n- nothing changed yet\n- pending: the rest of the files"
)
SEEDED_ID = "0193bb11-5555-7000-8000-00000000c0de"
TODOS = [
    {"content": "read every generated file", "status": "in_progress"},
    {"content": "write the report", "status": "pending"},
]


class RoutedFake(FakeOpenAI):
    """``script`` answers turns (requests that offer tools); ``plain`` answers plain calls, else a summary."""

    def __init__(self) -> None:
        super().__init__()
        self.plain: list[Entry] = []

    def _next(self, body: dict[str, Any]) -> Entry:
        if body.get("tools"):
            return super()._next(body)
        with self._lock:
            if self.plain:
                return self.plain.pop(0)
        return Step(Text(PLAIN_SUMMARY), usage=Usage(0, 0))


@pytest.fixture
def fake() -> Iterator[RoutedFake]:
    server = RoutedFake()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def api() -> str:
    return "responses"


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI, api: str) -> dict[str, object]:
    # the kit's tests are about pruning; automatic compaction has its own
    return options(home, fake, api=api, model="gpt-5", compactThreshold=1_000_000, autoCompact=False)


# --- requests ------------------------------------------------------------------------------------


def model_bodies(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [r["body"] for r in fake.requests if r["path"].endswith(("/responses", "/chat/completions"))]


def turn_bodies(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [b for b in model_bodies(fake) if b.get("tools")]


def plain_bodies(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [b for b in model_bodies(fake) if not b.get("tools")]


def json_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def tokens_of_chars(chars: int) -> int:
    return (chars + 2) // 4


def request_estimate(body: dict[str, Any]) -> int:
    """The estimate of what a request carried, as the server counts it: instructions + tools + messages."""
    tools = [
        {"name": t["name"], "description": t["description"], "parameters": t["parameters"]}
        for t in body.get("tools") or []
    ]
    instructions = body.get("instructions") or ""
    return (
        tokens_of_chars(len(instructions))
        + (tokens_of_chars(len(json.dumps(tools))) if tools else 0)
        + tokens_of_chars(len(json_text(body.get("input", body.get("messages")))))
    )


def wire_text(body: dict[str, Any]) -> str:
    return json_text(body)


def user_texts(body: dict[str, Any]) -> list[str]:
    """The user messages of a Responses request, in order (not the trailing task list reminder)."""
    texts = []
    for item in body.get("input") or []:
        if item.get("type") == "message" and item.get("role") == "user":
            texts.append("".join(c.get("text", "") for c in item["content"]))
    if texts and task_list_of(body) == texts[-1]:
        texts.pop()
    return texts


def ids_without_reasoning(body: dict[str, Any]) -> list[str]:
    """Item ids (references or inline ids) sent in a request that carries no reasoning item for them."""
    items = body.get("input") or []
    has_reasoning = any(i.get("type") == "reasoning" and i.get("id") for i in items)
    if has_reasoning:
        return []
    return [
        str(i.get("id"))
        for i in items
        if i.get("type") == "item_reference"
        or (i.get("type") in ("message", "function_call") and i.get("id"))
    ]


def orphan_outputs(body: dict[str, Any]) -> list[str]:
    """Tool outputs sent without their call (Responses ``function_call_output``, Chat ``tool``)."""
    if "input" in body:
        items = body["input"]
        calls = {i["call_id"] for i in items if i.get("type") == "function_call"}
        return [
            i["call_id"]
            for i in items
            if i.get("type") == "function_call_output" and i["call_id"] not in calls
        ]
    messages = body.get("messages") or []
    calls = {c["id"] for m in messages for c in m.get("tool_calls") or []}
    return [m["tool_call_id"] for m in messages if m.get("role") == "tool" and m["tool_call_id"] not in calls]


def assert_sound(body: dict[str, Any], goal: str, todos: list[str]) -> None:
    """What must hold of every request after any rung of pruning."""
    assert ids_without_reasoning(body) == [], "an item id went out whose reasoning was pruned"
    assert orphan_outputs(body) == [], "a tool output went out without its call"
    assert goal in user_texts(body)[0], "the user's goal is not the first thing on the wire"
    for todo in todos:
        assert todo in task_list_of(body), f"the task list lost {todo!r}"


def summary_notes(body: dict[str, Any]) -> list[str]:
    return [t for t in user_texts(body) if t.startswith(PRUNED_SPAN_PREFIX)]


def event_types(client: ShiroClient, task_id: str) -> list[str]:
    return [e["type"] for e in client.events(task_id)]


async def eventually(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition never became true"
        await asyncio.sleep(0.02)


# --- seeded sessions ----------------------------------------------------------------------------


def bulky_exchange(i: int, size: int = 5000) -> list[dict[str, Any]]:
    """Spec §5.8: ``question i``, a ``read_file f_i.ts`` call and a 5000-character result."""
    return [
        {"role": "user", "content": f"question {i}"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool-call",
                    "toolCallId": f"t_{i}",
                    "toolName": "read_file",
                    "input": {"path": f"f_{i}.ts"},
                }
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": f"t_{i}",
                    "toolName": "read_file",
                    "output": {"type": "text", "value": "x" * size},
                }
            ],
        },
    ]


def reasoned_answer(text: str, rs: str, msg: str) -> dict[str, Any]:
    """An assistant turn recorded on the Responses API: reasoning (replayable) and a text item."""
    return {
        "role": "assistant",
        "content": [
            {
                "type": "reasoning",
                "text": "thinking it over",
                "providerOptions": {"openai": {"itemId": rs, "reasoningEncryptedContent": f"enc-{rs}"}},
            },
            {"type": "text", "text": text, "providerOptions": {"openai": {"itemId": msg}}},
        ],
    }


def seed_session(
    home: Path,
    workspace: Path,
    messages: list[dict[str, Any]],
    todos: list[dict[str, Any]] | None = None,
    session_id: str = SEEDED_ID,
) -> str:
    record = {
        "id": session_id,
        "createdAt": "2026-01-01T00:00:00.000Z",
        "updatedAt": "2026-01-01T00:00:00.000Z",
        "cwd": str(workspace),
        "provider": "openai",
        "model": "gpt-5",
        "title": "seeded",
        "inputTokens": 0,
        "outputTokens": 0,
        "costUsd": 0,
        "notebook": {"todos": TODOS if todos is None else todos},
        "messages": messages,
    }
    path = home / "sessions" / f"{session_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    return session_id


def saved_messages(home: Path, session_id: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = json.loads((home / "sessions" / f"{session_id}.json").read_text())[
        "messages"
    ]
    return messages


async def overhead(client: ShiroClient) -> int:
    """What instructions and tools cost on the current (empty) session: the meter's floor."""
    return int((await client.call("shiro/context"))["tokens"])


def set_threshold(client: ShiroClient, threshold: int) -> None:
    from lsprotocol import types

    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"shiro": {"compactThreshold": threshold}})
    )


async def use_threshold(client: ShiroClient, threshold: int) -> None:
    set_threshold(client, threshold)
    await eventually(lambda: _threshold_seen(client, threshold))


def _threshold_seen(client: ShiroClient, threshold: int) -> bool:
    meters = client.notifications["shiro/context/changed"]
    return bool(meters) and meters[-1]["threshold"] == threshold
