"""`/memory` (shiro/memory/compact) through the server, with the scripted model doing the merge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chat_helpers import model_bodies
from fakes.fake_openai import FakeOpenAI, HttpError, Step, Text
from fakes.fixtures import options
from lsp_client import ShiroClient
from shiro_lsp.state.paths import project_key

pytest_plugins = ["fakes.fixtures"]


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI) -> dict[str, object]:
    return options(home, fake)


def seed(home: Path, workspace: Path, count: int, recalled: int) -> None:
    entries = [
        {
            "id": f"id{i:03d}",
            "kind": "fact",
            "text": f"note number {i}",
            "createdAt": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}.000Z",
            "hits": 1 if i < recalled else 0,
        }
        for i in range(count)
    ]
    path = home / "memory" / f"{project_key(str(workspace))}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(entries))


async def test_compaction_merges_unused_notes_and_keeps_recalled_ones(
    client: ShiroClient, fake: FakeOpenAI, home: Path, workspace: Path
) -> None:
    seed(home, workspace, 62, recalled=2)
    fake.script.append(Step(Text("[fact] notes 2 to 61 say the same thing\n[command] make test")))
    result = await client.call("shiro/memory/compact")
    assert result == {"before": 62, "after": 4, "text": "memory compacted: 62 entries into 4"}
    (body,) = model_bodies(fake)
    assert "Merge duplicates and near-duplicates" in body["messages"][0]["content"]
    assert (
        "[fact] note number 61" in body["messages"][1]["content"]
        and "note number 0" not in body["messages"][1]["content"]
    )
    assert "tools" not in body
    listing = await client.call("shiro/memory/list")
    assert {e["text"] for e in listing["entries"]} == {
        "note number 0",
        "note number 1",
        "notes 2 to 61 say the same thing",
        "make test",
    }


async def test_a_small_store_is_left_as_is_and_says_so(
    client: ShiroClient, fake: FakeOpenAI, home: Path, workspace: Path
) -> None:
    seed(home, workspace, 10, recalled=0)
    result = await client.call("shiro/memory/compact")
    assert result["after"] == 10 and "memory left as is" in result["text"] and model_bodies(fake) == []


async def test_a_model_failure_changes_nothing(
    client: ShiroClient, fake: FakeOpenAI, home: Path, workspace: Path
) -> None:
    seed(home, workspace, 61, recalled=0)
    before = (home / "memory" / f"{project_key(str(workspace))}.json").read_text()
    fake.script.append(HttpError.server_error())
    with pytest.raises(Exception, match="500"):
        await client.call("shiro/memory/compact")
    assert (home / "memory" / f"{project_key(str(workspace))}.json").read_text() == before
