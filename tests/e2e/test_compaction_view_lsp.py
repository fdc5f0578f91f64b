"""Compaction as a view (issue 22): the session keeps every message; the model gets the summary plus
what followed; the title stays; resume returns the whole transcript and the marker; undo brings the
earlier view back while it fits; the front end hears of the summary's progress. Through the real server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import long_kit
import pytest
from long_kit import (
    SEEDED_ID,
    RoutedFake,
    bulky_exchange,
    overhead,
    seed_session,
    turn_bodies,
    use_threshold,
    user_texts,
)
from pygls.exceptions import JsonRpcException

from fakes.fake_openai import Step, Text
from lsp_client import ShiroClient
from shiro_lsp.context.summary import COMPACT_SUMMARY_PREFIX

api, fake, init_options = long_kit.api, long_kit.fake, long_kit.init_options  # the kit's fixtures

SUMMARY = "- goal: answer the questions\n- read f_0.ts and f_1.ts"


def saved(home: Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads((home / "sessions" / f"{SEEDED_ID}.json").read_text())
    return record


async def compacted_after_two_exchanges(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> list[dict[str, Any]]:
    """Two seeded exchanges (6 messages), resumed, compacted, then one chat after it."""
    history = [m for i in range(2) for m in bulky_exchange(i)]
    seed_session(home, workspace, history)
    await client.call("shiro/session/resume", {"id": SEEDED_ID})
    fake.plain.append(Step(Text(SUMMARY)))
    result = await client.call("shiro/session/compact")
    assert (result["before"], result["after"]) == (6, 1)
    assert result["compaction"]["at"] == 6 and result["compaction"]["summary"] == SUMMARY
    fake.script.append(Step(Text("picking up from the summary")))
    await client.call("shiro/chat", {"text": "what next?"})
    return history


async def test_compact_keeps_every_message_and_the_title_and_the_model_gets_summary_plus_what_followed(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    history = await compacted_after_two_exchanges(client, fake, home, workspace)

    (next_turn,) = turn_bodies(fake)
    assert user_texts(next_turn) == [COMPACT_SUMMARY_PREFIX + SUMMARY, "what next?"]
    assert "x" * 5000 not in json.dumps(next_turn)

    current = await client.call("shiro/session/current")
    await client.call("shiro/session/save")
    record = saved(home)
    assert record["messages"][:6] == history and len(record["messages"]) == 8
    assert [c["at"] for c in record["compactions"]] == [6]
    assert current["title"] == record["title"] == "question 0"
    assert current["messageCount"] == 8


async def test_resume_returns_the_whole_transcript_with_the_compaction_marker(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    history = await compacted_after_two_exchanges(client, fake, home, workspace)
    await client.call("shiro/session/new")
    resumed = await client.call("shiro/session/resume", {"id": SEEDED_ID})
    assert resumed["transcript"][:6] == history and len(resumed["transcript"]) == 8
    assert [(c["at"], c["summary"]) for c in resumed["compactions"]] == [(6, SUMMARY)]
    assert resumed["session"]["title"] == "question 0"

    fake.script.append(Step(Text("still on it")))
    await client.call("shiro/chat", {"text": "and then?"})  # the resumed view is the compacted one
    assert user_texts(turn_bodies(fake)[-1])[0] == COMPACT_SUMMARY_PREFIX + SUMMARY


async def test_undo_compaction_gives_the_model_the_earlier_messages_again(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    await compacted_after_two_exchanges(client, fake, home, workspace)
    undone = await client.call("shiro/session/uncompact")
    assert (undone["before"], undone["after"], undone["compactions"]) == (3, 8, [])

    fake.script.append(Step(Text("back with everything")))
    await client.call("shiro/chat", {"text": "recap"})
    texts = user_texts(turn_bodies(fake)[-1])
    assert texts == ["question 0", "question 1", "what next?", "recap"]
    await client.call("shiro/session/save")
    assert "compactions" not in saved(home)


async def test_undo_is_refused_with_a_reason_when_the_earlier_view_no_longer_fits(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    floor = await overhead(client)
    await compacted_after_two_exchanges(client, fake, home, workspace)
    await use_threshold(client, floor + 1_500)  # the two 5000-character results need ~2 500 tokens
    with pytest.raises(JsonRpcException) as caught:
        await client.call("shiro/session/uncompact")
    assert "no longer fits" in caught.value.message and f"{floor + 1_500:,}-token" in caught.value.message
    fake.script.append(Step(Text("ok")))
    await client.call("shiro/chat", {"text": "go on"})
    assert user_texts(turn_bodies(fake)[-1])[0] == COMPACT_SUMMARY_PREFIX + SUMMARY


async def test_the_front_end_hears_while_the_summary_runs(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    await compacted_after_two_exchanges(client, fake, home, workspace)
    progress = client.notifications["shiro/session/compacting"]
    assert [(n["phase"], n["messages"]) for n in progress] == [("summarizing", 6), ("done", 6)]
    assert progress[0].get("compaction") is None
    assert (progress[1]["compaction"]["at"], progress[1]["compaction"]["auto"]) == (6, False)


async def test_a_session_compacted_by_an_older_version_resumes_with_its_own_title(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    """Older files held only the summary and what followed: read as a compaction at 0."""
    summary = {"role": "user", "content": COMPACT_SUMMARY_PREFIX + SUMMARY}
    seed_session(home, workspace, [summary, *bulky_exchange(7)])
    resumed = await client.call("shiro/session/resume", {"id": SEEDED_ID})
    assert resumed["session"]["title"] == "question 7"
    assert resumed["transcript"] == bulky_exchange(7)
    assert [(c["at"], c["summary"]) for c in resumed["compactions"]] == [(0, SUMMARY)]
    fake.script.append(Step(Text("ok")))
    await client.call("shiro/chat", {"text": "go on"})
    assert user_texts(turn_bodies(fake)[-1]) == [COMPACT_SUMMARY_PREFIX + SUMMARY, "question 7", "go on"]


# --- automatic compaction, the meter's warning, branches -----------------------------------------


def auto_compact(client: ShiroClient) -> None:
    from lsprotocol import types

    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"shiro": {"autoCompact": True}})
    )


async def full_session(client: ShiroClient, home: Path, workspace: Path) -> None:
    """Two seeded exchanges (about 2 500 tokens of tool output) under a threshold they exceed."""
    floor = await overhead(client)
    seed_session(home, workspace, [m for i in range(2) for m in bulky_exchange(i)])
    await client.call("shiro/session/resume", {"id": SEEDED_ID})
    await use_threshold(client, floor + 1_500)


async def test_the_meter_says_the_next_request_will_be_compacted_before_it_happens(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    seed_session(home, workspace, bulky_exchange(0))
    await client.call("shiro/session/resume", {"id": SEEDED_ID})
    assert (await client.call("shiro/context"))["willCompact"] is False
    await client.call("shiro/session/new")
    await full_session(client, home, workspace)
    meter = client.notifications["shiro/context/changed"][-1]
    assert meter["willCompact"] is True
    assert (await client.call("shiro/context"))["willCompact"] is True


async def test_a_prompt_that_no_longer_fits_compacts_the_history_first_with_a_marker_like_compact(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    auto_compact(client)
    await full_session(client, home, workspace)
    fake.plain.append(Step(Text(SUMMARY)))
    fake.script.append(Step(Text("carrying on")))
    result = await client.call("shiro/chat", {"text": "what next?"})
    assert result["stopReason"] == "done"

    (turn,) = turn_bodies(fake)
    assert user_texts(turn) == [COMPACT_SUMMARY_PREFIX + SUMMARY, "what next?"]
    phases = client.notifications["shiro/session/compacting"]
    assert [n["phase"] for n in phases] == ["summarizing", "done"]
    marker = phases[-1]["compaction"]
    assert (marker["at"], marker["summary"], marker["auto"]) == (6, SUMMARY, True)
    assert client.notifications["shiro/context/changed"][-1]["willCompact"] is False

    await client.call("shiro/session/save")
    assert saved(home)["compactions"][0]["auto"] is True
    await client.call("shiro/session/new")
    resumed = await client.call("shiro/session/resume", {"id": SEEDED_ID})
    assert [(c["at"], c["auto"]) for c in resumed["compactions"]] == [(6, True)]
    with pytest.raises(JsonRpcException) as caught:  # the earlier view is what did not fit
        await client.call("shiro/session/uncompact")
    assert "no longer fits" in caught.value.message


async def test_branches_carry_the_compactions_before_their_cut_and_load_again(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    await compacted_after_two_exchanges(client, fake, home, workspace)
    after = await client.call("shiro/session/branch", {"atMessage": 7})
    before = await client.call("shiro/session/branch", {"atMessage": 3})
    kept = await client.call("shiro/session/resume", {"id": after["id"]})
    assert [c["at"] for c in kept["compactions"]] == [6]
    cut = await client.call("shiro/session/resume", {"id": before["id"]})
    assert cut["compactions"] == [] and len(cut["transcript"]) == 4
