"""The review state of a changed file (kept, undone, conflicted), and the model told what was undone.

Through the real server over stdio against the scripted model, which records every request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chat_helpers import model_bodies
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.fixtures import options
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI) -> dict[str, object]:
    return options(home, fake, {"write_file": "allow"}, model="gpt-5")


async def turn(client: ShiroClient, fake: FakeOpenAI, text: str, *calls: ToolCall) -> None:
    fake.script += [Step(call) for call in calls] + [Step(Text("done"))]
    result = await client.call("shiro/chat", {"text": text})
    assert result["stopReason"] == "done", result


def user_texts(body: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m["role"] == "user"]


async def rows(client: ShiroClient) -> dict[str, dict[str, Any]]:
    return {f["path"]: f for f in (await client.call("shiro/changes", {}))["files"]}


async def test_a_row_says_whether_it_was_kept_undone_or_is_in_conflict(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    for name in ("kept.txt", "undone.txt", "edited.txt", "open.txt"):
        (workspace / name).write_text("before\n")
    await turn(
        client,
        fake,
        "four files",
        *(
            ToolCall("write_file", {"path": n, "content": "after\n"}, n)
            for n in ("kept.txt", "undone.txt", "edited.txt", "open.txt")
        ),
    )
    (card,) = [e for e in client.events() if e["type"] == "tool-result"][:1]
    assert "review" not in card["files"][0]  # pending: a tool card's row is as it always was

    await client.call("shiro/changes/keep", {"path": "kept.txt"})
    await client.call("shiro/changes/undo", {"path": "undone.txt"})
    (workspace / "edited.txt").write_text("the user's own\n")

    found = await rows(client)
    assert {path: row.get("review") for path, row in found.items()} == {
        "kept.txt": "kept",
        "undone.txt": "undone",
        "edited.txt": "conflicted",
        "open.txt": None,
    }
    refused = await client.call("shiro/changes/undo", {"path": "edited.txt"})
    assert refused["undone"] is False and "changed after Shiro's edit" in refused["conflict"]


async def test_the_next_request_tells_the_model_once_what_the_user_undid(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    await turn(client, fake, "make it 2", ToolCall("write_file", {"path": "app.py", "content": "x = 2\n"}))
    await client.call("shiro/changes/undo", {"path": "app.py"})

    await turn(client, fake, "now add y")
    told = user_texts(model_bodies(fake)[-1])[-1]
    assert "the user undid your changes to app.py" in told and told.endswith("now add y")

    fake.script.append(Step(Text("ok")))
    await client.call("shiro/chat", {"text": "and z"})
    (later,) = [t for t in user_texts(model_bodies(fake)[-1]) if "undid" in t]
    assert later == told  # said once, and kept in the history as it was sent (the prompt cache holds)
