"""Notes meet chat: a turn is a task, its notes reach later turns, and sessions carry them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from chat_helpers import model_bodies, system_prompt_of
from fakes.fake_openai import FakeOpenAI, Step, Text
from fakes.fixtures import options
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI) -> dict[str, object]:
    return options(home, fake)


async def turn(client: ShiroClient, fake: FakeOpenAI, text: str) -> dict[str, Any]:
    fake.script.append(Step(Text(f"answer to {text}")))
    result: dict[str, Any] = await client.call("shiro/chat", {"text": text})
    assert result["stopReason"] == "done"
    return result


async def test_a_turn_is_a_task_whose_notes_reach_later_turns(client: ShiroClient, fake: FakeOpenAI) -> None:
    first = await turn(client, fake, "fix the parser")
    read = await client.call("shiro/notes/read", {"scope": "task"})
    assert read["taskId"] == first["taskId"] and read["task"] == ""
    appended = await client.call("shiro/notes/append", {"scope": "task", "note": "keep the regression case"})
    assert appended["task"] == "keep the regression case"
    await client.call("shiro/notes/append", {"scope": "project", "note": "run the offline fixtures first"})
    await turn(client, fake, "and now the lexer")
    prompt = system_prompt_of(model_bodies(fake)[-1])
    assert "keep the regression case" in prompt and "run the offline fixtures first" in prompt
    assert "historical data" in prompt and "grants no permission" in prompt
    assert prompt.index("run the offline fixtures first") < prompt.index("keep the regression case")


async def test_tasks_of_another_session_are_found_by_id_but_not_by_default(
    client: ShiroClient, fake: FakeOpenAI
) -> None:
    first = await turn(client, fake, "one")
    await client.call("shiro/session/new")
    read = await client.call("shiro/notes/read", {"scope": "task"})
    assert read["taskId"] is None
    named = await client.call("shiro/notes/read", {"scope": "task", "taskId": first["taskId"]})
    assert named["taskId"] == first["taskId"]
    with pytest.raises(JsonRpcException):
        await client.call("shiro/notes/read", {"scope": "task", "taskId": "../../etc"})


async def test_branch_keeps_a_copy_that_outlives_the_source(client: ShiroClient, fake: FakeOpenAI) -> None:
    first = await turn(client, fake, "investigate")
    await client.call("shiro/notes/append", {"scope": "task", "note": "root cause: stale cache"})
    await client.call("shiro/session/save")
    branch = await client.call("shiro/session/branch", {})
    await client.call("shiro/session/new")
    assert await client.call("shiro/session/delete", {"id": first["sessionId"]}) == {"deleted": True}
    with pytest.raises(JsonRpcException):
        await client.call("shiro/notes/read", {"scope": "task", "taskId": first["taskId"]})
    exported = json.loads(
        (await client.call("shiro/session/export", {"id": branch["id"], "format": "json"}))["content"]
    )
    assert [n["text"] for n in exported["notes"]["inherited"]] == ["root cause: stale cache"]
    await client.call("shiro/session/resume", {"id": branch["id"]})
    await turn(client, fake, "continue on the branch")
    assert "root cause: stale cache" in system_prompt_of(model_bodies(fake)[-1])


async def test_export_in_markdown_carries_task_notes(client: ShiroClient, fake: FakeOpenAI) -> None:
    await turn(client, fake, "plan")
    await client.call("shiro/notes/append", {"scope": "task", "note": "decided: use SQLite"})
    markdown = (await client.call("shiro/session/export", {"format": "markdown"}))["content"]
    assert "answer to plan" in markdown and "## Task notes" in markdown and "decided: use SQLite" in markdown
