"""The 14 session-level compaction cases of spec §5.8 (``test/compact.test.ts``), through the real server.

The reference measured its threshold against the messages alone; here it covers the whole request
(instructions + tools + messages, design.md), so each threshold is the server's own floor (what the
instructions and tools cost, read from ``shiro/context`` on an empty session) plus the budget the
reference gave the messages. Besides each case's own assertions, every request the model received
is checked: no item id whose reasoning was pruned, no tool output without its call, the user's goal
first and the task list in the instructions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import long_kit
from long_kit import (
    SEEDED_ID,
    TODOS,
    RoutedFake,
    assert_sound,
    bulky_exchange,
    event_types,
    eventually,
    overhead,
    plain_bodies,
    reasoned_answer,
    saved_messages,
    seed_session,
    turn_bodies,
    use_threshold,
    wire_text,
)

from fakes.fake_openai import HttpError, Reasoning, Step, StreamError, Text, ToolCall, Usage
from lsp_client import ShiroClient
from shiro_lsp.agent.loop import STALE_NOTICE
from shiro_lsp.context.summary import COMPACT_SUMMARY_PREFIX, COMPACT_SYSTEM_PROMPT

api, fake, init_options = long_kit.api, long_kit.fake, long_kit.init_options  # the kit's fixtures

TODO_TEXTS = [t["content"] for t in TODOS]
BIG_LINE = "lorem ipsum dolor sit amet\n"


def bulky_history(exchanges: int) -> list[dict[str, Any]]:
    return [m for i in range(exchanges) for m in bulky_exchange(i)]


async def resume_seeded(
    client: ShiroClient, home: Path, workspace: Path, messages: list[dict[str, Any]]
) -> int:
    """Seed a session, note the floor first (instructions and tools on an empty session), resume it."""
    floor = await overhead(client)
    seed_session(home, workspace, messages)
    await client.call("shiro/session/resume", {"id": SEEDED_ID})
    return floor


def assert_every_request_sound(fake: RoutedFake, goal: str) -> None:
    bodies = turn_bodies(fake)
    assert bodies
    for body in bodies:
        assert_sound(body, goal, TODO_TEXTS)


def reasoning_tool_step(n: int) -> Step:
    """Spec §5.8 ``reasoningToolStep(n)``: reasoning ``rs_n`` and a ``read_file big.txt`` call ``fc_n``."""
    return Step(
        Reasoning(f"deciding step {n}", id=f"rs_{n}", encrypted_content=f"enc_{n}"),
        ToolCall("read_file", {"path": "big.txt"}, call_id=f"call_{n}", id=f"fc_{n}"),
        usage=Usage(0, 0),
    )


async def three_steps_then_text(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> dict[str, Any]:
    """Spec §5.8 cases 8–10: threshold 4 000 (plus the floor), three reasoning+tool steps, then text."""
    (workspace / "big.txt").write_text(BIG_LINE * 1500)
    floor = await resume_seeded(client, home, workspace, [])
    await use_threshold(client, floor + 4_000)
    fake.script += [reasoning_tool_step(n) for n in range(1, 4)] + [Step(Text("all read"))]
    result: dict[str, Any] = await client.call(
        "shiro/chat", {"text": "read big.txt three times", "agent": "deep"}
    )
    assert result["stopReason"] == "done"
    return result


async def test_history_under_the_threshold_is_sent_untouched(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    await resume_seeded(client, home, workspace, bulky_history(4))
    fake.script.append(Step(Text("ok")))
    result = await client.call("shiro/chat", {"text": "go on"})
    (body,) = turn_bodies(fake)
    assert wire_text(body).count("x" * 5000) == 4
    assert "compacted" not in event_types(client, result["taskId"])
    assert_every_request_sound(fake, "question 0")


async def test_history_over_the_threshold_is_pruned_before_reaching_the_model(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    floor = await resume_seeded(client, home, workspace, bulky_history(4))
    before = (await client.call("shiro/context"))["tokens"]
    await use_threshold(client, floor + 1_000)
    assert before > floor + 1_000
    fake.script.append(Step(Text("ok")))
    result = await client.call("shiro/chat", {"text": "go on"})
    (body,) = turn_bodies(fake)
    assert len(wire_text(body)) < len(json.dumps(bulky_history(4)))
    assert "compacted" in event_types(client, result["taskId"])
    await client.call("shiro/session/save")
    assert len(saved_messages(home, SEEDED_ID)) > 12  # the local history keeps every message
    assert (await client.call("shiro/session/current"))["messageCount"] == 14
    assert_every_request_sound(fake, "question 0")


async def test_the_compacted_event_reports_the_counts_and_arrives_before_done(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    floor = await resume_seeded(client, home, workspace, bulky_history(4))
    await use_threshold(client, floor + 1_000)
    fake.script.append(Step(Text("ok")))
    result = await client.call("shiro/chat", {"text": "go on"})
    events = client.events(result["taskId"])
    types = [e["type"] for e in events]
    compacted = events[types.index("compacted")]
    assert compacted["before"] > compacted["after"] > 0
    assert compacted["before"] == 13  # 12 seeded messages and the new prompt
    assert types.index("compacted") < types.index("done") == len(types) - 1
    assert_every_request_sound(fake, "question 0")


async def test_history_under_the_threshold_emits_no_compacted_event(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    await resume_seeded(client, home, workspace, bulky_history(1))
    fake.script.append(Step(Text("ok")))
    result = await client.call("shiro/chat", {"text": "go on"})
    assert event_types(client, result["taskId"]) == ["text", "done"]


async def test_summarize_replaces_the_models_view_with_one_summary_and_keeps_the_history(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    await resume_seeded(client, home, workspace, bulky_history(2))
    fake.plain.append(Step(Text("- goal: answer question 0\n- read f_0.ts and f_1.ts")))
    result = await client.call("shiro/session/compact")
    assert (result["before"], result["after"]) == (6, 1)
    (body,) = plain_bodies(fake)
    assert body["instructions"] == COMPACT_SYSTEM_PROMPT
    await client.call("shiro/session/save")
    assert saved_messages(home, SEEDED_ID) == bulky_history(2)
    fake.script.append(Step(Text("ok")))
    await client.call("shiro/chat", {"text": "go on"})
    first = turn_bodies(fake)[-1]["input"][0]
    assert (
        first["content"][0]["text"]
        == COMPACT_SUMMARY_PREFIX + "- goal: answer question 0\n- read f_0.ts and f_1.ts"
    )


async def test_summarize_on_an_empty_session_is_a_no_op(client: ShiroClient, fake: RoutedFake) -> None:
    assert await client.call("shiro/session/compact") == {"before": 0, "after": 0, "compaction": None}
    assert [
        r for r in fake.requests if r["method"] == "POST"
    ] == []  # no model call (the window may be looked up)


async def test_onchange_fires_for_every_history_mutation_so_autosave_stays_current(
    client: ShiroClient, fake: RoutedFake, home: Path
) -> None:
    """The reference counted onChange calls ([1, 2]); here every mutation reaches the saved file."""
    changed = client.notifications["shiro/session/changed"]

    def saved(session_id: str, count: int) -> bool:
        path = home / "sessions" / f"{session_id}.json"
        on_disk = len(json.loads(path.read_text())["messages"]) if path.exists() else 0
        return on_disk == count and bool(changed) and changed[-1]["messageCount"] == count

    fake.script += [Step(Text("first answer")), Step(Text("second answer"))]
    first = await client.call("shiro/chat", {"text": "first"})
    session_id = first["sessionId"]
    await eventually(lambda: saved(session_id, 2))
    await client.call("shiro/chat", {"text": "second"})
    await eventually(lambda: saved(session_id, 4))
    assert (await client.call("shiro/session/compact"))["after"] == 1
    path = home / "sessions" / f"{session_id}.json"
    await eventually(lambda: "compactions" in json.loads(path.read_text()))  # the marker is saved
    assert saved(session_id, 4)


async def test_a_compacted_turn_still_shows_the_model_the_tool_calls_it_already_made(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    result = await three_steps_then_text(client, fake, home, workspace)
    types = event_types(client, result["taskId"])
    assert "compacted" in types and "text" in types and types[-1] == "done"
    bodies = turn_bodies(fake)
    assert len(bodies) == 4
    for body in bodies[1:]:
        kinds = {item.get("type") for item in body["input"]}
        assert {"function_call", "function_call_output"} <= kinds
    assert_every_request_sound(fake, "read big.txt three times")


async def test_a_multi_step_turn_emits_one_compacted_event(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    result = await three_steps_then_text(client, fake, home, workspace)
    assert event_types(client, result["taskId"]).count("compacted") == 1
    assert len(turn_bodies(fake)) == 4


async def test_a_compacted_turn_sends_no_assistant_item_reference_whose_reasoning_was_pruned(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    await three_steps_then_text(client, fake, home, workspace)
    for step, body in enumerate(turn_bodies(fake)[1:], start=1):
        sent = wire_text(body)
        assert "enc_" not in sent  # the reasoning was pruned from every compacted request ...
        assert '"id":"fc_' not in sent and "item_reference" not in sent  # ... so no item id went with it
        assert f'"call_id":"call_{step}"' in sent  # while the latest call is still there, inline
    assert_every_request_sound(fake, "read big.txt three times")


async def test_a_compacted_turn_inlines_a_plain_assistant_item_instead_of_referencing_remote_storage(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    history = [
        {"role": "user", "content": "what was decided?"},
        reasoned_answer("remembered answer", "rs_stale", "msg_stale"),
    ]
    floor = await resume_seeded(client, home, workspace, [*history, *bulky_history(2)])
    fake.script += [Step(Text("unpruned")), Step(Text("pruned"))]
    await client.call("shiro/chat", {"text": "again"})
    assert "msg_stale" in wire_text(turn_bodies(fake)[0])  # unpruned, the recorded item goes back as it was
    await use_threshold(client, floor + 100)
    await client.call("shiro/chat", {"text": "and again"})
    pruned = wire_text(turn_bodies(fake)[1])
    assert "msg_stale" not in pruned and "rs_stale" not in pruned
    assert "remembered answer" in pruned
    assert_every_request_sound(fake, "what was decided?")


async def stale_session(client: ShiroClient, home: Path, workspace: Path) -> None:
    history = [
        {"role": "user", "content": "what was decided?"},
        reasoned_answer("the old answer", "rs_gone", "msg_gone"),
    ]
    await resume_seeded(client, home, workspace, history)


async def test_a_rejected_stale_item_reference_is_retried_inline_rather_than_ending_the_turn(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    await stale_session(client, home, workspace)
    fake.script += [HttpError.item_not_found("msg_gone"), Step(Text("carried on"))]
    result = await client.call("shiro/chat", {"text": "continue"})
    assert result["stopReason"] == "done"
    events = client.events(result["taskId"])
    assert [e["type"] for e in events] == ["notice", "text", "done"]
    assert events[0]["text"] == STALE_NOTICE
    first, second = (wire_text(b) for b in turn_bodies(fake))
    assert "msg_gone" in first
    assert "msg_gone" not in second and "the old answer" in second
    await client.call("shiro/session/save")
    saved = json.dumps(saved_messages(home, SEEDED_ID))
    assert "msg_gone" not in saved and "the old answer" in saved  # the repair was saved


async def test_a_stale_item_rejection_that_survives_the_repair_is_reported_once_not_looped(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    await stale_session(client, home, workspace)
    fake.script += [HttpError.item_not_found("msg_gone"), HttpError.item_not_found("msg_gone")]
    result = await client.call("shiro/chat", {"text": "continue"})
    assert result["stopReason"] == "error" and "not found" in result["error"]
    assert event_types(client, result["taskId"]) == ["notice", "error"]
    assert len(turn_bodies(fake)) == 2


async def test_a_stale_item_arriving_after_text_was_streamed_is_reported_not_silently_repeated(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    await stale_session(client, home, workspace)
    stale = StreamError("Item with id 'msg_gone' not found.", code=None, type="invalid_request_error")
    fake.script += [Step(Text("half an answer"), stale), Step(Text("never asked for"))]
    result = await client.call("shiro/chat", {"text": "continue"})
    assert result["stopReason"] == "error"
    assert event_types(client, result["taskId"]) == ["text", "error"]
    assert len(turn_bodies(fake)) == 1
