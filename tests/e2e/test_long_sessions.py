"""Long sessions (issue 5) through the real server: pruning over hundreds of steps, the meter, /compact.

Every assertion is on what a user or the model would notice: the requests the scripted model server
recorded, the `shiro/*` notifications, and the session file on disk.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import long_kit
import pytest
from long_kit import (
    PLAIN_SUMMARY,
    SEEDED_ID,
    TODOS,
    RoutedFake,
    assert_sound,
    bulky_exchange,
    eventually,
    overhead,
    plain_bodies,
    reasoned_answer,
    request_estimate,
    saved_messages,
    seed_session,
    summary_notes,
    turn_bodies,
    use_threshold,
    user_texts,
    wire_text,
)
from pygls.exceptions import JsonRpcException

from chat_helpers import task_list_of
from fakes.fake_openai import Gate, HttpError, Reasoning, Step, Text, ToolCall, Usage, WaitForRelease
from lsp_client import ShiroClient
from shiro_lsp.context.summary import (
    COMPACT_SUMMARY_PREFIX,
    COMPACT_SYSTEM_PROMPT,
    PRUNED_SPAN_PREFIX,
    SPAN_SUMMARY_SYSTEM_PROMPT,
)

api, fake, init_options = long_kit.api, long_kit.fake, long_kit.init_options  # the kit's fixtures

TODO_TEXTS = [t["content"] for t in TODOS]
GOAL = "Read every generated file under gen/ and report which ones mention the marker."
THRESHOLD = 30_000
CHATS = 4
READS_PER_CHAT = 75  # with the todo_write of the first chat: 300 tool steps, under the deep agent's 80


def meters(client: ShiroClient) -> list[dict[str, Any]]:
    return list(client.notifications["shiro/context/changed"])


def level_for(tokens: int, threshold: int) -> str:
    if tokens >= 0.9 * threshold:
        return "critical"
    return "warn" if tokens >= threshold * 2 / 3 else "ok"


def generate_files(workspace: Path, count: int, low: int, high: int) -> list[str]:
    """Files of ``low``..``high`` bytes with numbered lines, so every read is different."""
    rng = random.Random(5)
    names = []
    for n in range(count):
        size = rng.randint(low, high)
        line = f"file {n}: the quick brown fox jumps over the lazy dog {n}\n"
        name = f"gen/file_{n:03d}.txt"
        path = workspace / name
        path.parent.mkdir(exist_ok=True)
        path.write_text((line * (size // len(line) + 1))[:size])
        names.append(name)
    return names


def read_step(n: int, path: str) -> Step:
    return Step(
        Reasoning(f"next file {n}", id=f"rs_{n}", encrypted_content=f"enc_{n}"),
        ToolCall("read_file", {"path": path}, call_id=f"call_{n}", id=f"fc_{n}"),
    )


# --- 300 steps -----------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_a_300_step_session_keeps_its_goal_tasks_and_a_summary_under_the_threshold(
    client: ShiroClient, fake: RoutedFake, workspace: Path
) -> None:
    files = generate_files(workspace, 60, 2_000, 20_000)
    await use_threshold(client, THRESHOLD)
    todo_call = ToolCall("todo_write", {"todos": TODOS}, call_id="call_todos", id="fc_todos")
    steps = 0
    for chat in range(CHATS):
        if chat == 0:
            fake.script.append(Step(todo_call))
            steps += 1
        for _ in range(READS_PER_CHAT if chat else READS_PER_CHAT - 1):
            fake.script.append(read_step(steps, files[steps % len(files)]))
            steps += 1
        fake.script.append(Step(Text(f"chunk {chat} read")))
        prompt = GOAL if chat == 0 else f"carry on with part {chat + 1}"
        result = await client.call("shiro/chat", {"text": prompt, "agent": "deep"})
        assert result["stopReason"] == "done", result
        assert [e["type"] for e in client.events(result["taskId"])].count("compacted") == 1
    assert steps == 300

    bodies = turn_bodies(fake)
    assert len(bodies) == 300 + CHATS
    for body in bodies:
        assert_sound(body, GOAL, [] if body is bodies[0] else TODO_TEXTS)
    estimates = [request_estimate(body) for body in bodies]
    assert max(estimates) <= THRESHOLD, "a request went out over the threshold"
    # pruned only as hard as needed, not to a stub (each rung halves the tail it keeps)
    assert min(estimates[100:]) > THRESHOLD // 3

    last = bodies[-1]
    assert user_texts(last)[0] == GOAL  # the goal, then the note of what was pruned
    (note,) = summary_notes(last)
    assert user_texts(last)[1] == note and PLAIN_SUMMARY.splitlines()[0] in note
    assert "[~] read every generated file" in task_list_of(last)

    summaries = plain_bodies(fake)
    assert summaries and all(b["instructions"] == SPAN_SUMMARY_SYSTEM_PROMPT for b in summaries)
    batches = [sum(line.startswith("- (") for line in user_texts(b)[0].splitlines()) for b in summaries]
    assert min(batches) >= 8  # spans are summarised in batches, not message by message ...
    assert sum(batches) <= 2 * 300 + 2 * CHATS  # ... and each message at most once
    assert not any(PRUNED_SPAN_PREFIX.strip() in wire_text(b) for b in summaries)  # never nested

    assert all(m["tokens"] <= THRESHOLD for m in meters(client))
    await client.call("shiro/session/save")
    session = await client.call("shiro/session/current")
    assert session["messageCount"] == 2 * 300 + 2 * CHATS  # the local history keeps everything


@pytest.mark.timeout(300)
async def test_when_the_summary_call_fails_a_digest_of_the_pruned_span_stands_in(
    client: ShiroClient, fake: RoutedFake, workspace: Path
) -> None:
    files = generate_files(workspace, 24, 2_400, 2_400)
    threshold = await overhead(client) + 6_000
    await use_threshold(client, threshold)
    fake.plain += [HttpError.server_error() for _ in range(24)]
    fake.script += [read_step(n, files[n]) for n in range(24)] + [Step(Text("read them all"))]
    result = await client.call("shiro/chat", {"text": GOAL, "agent": "deep"})
    assert result["stopReason"] == "done"
    assert plain_bodies(fake)  # the summary was asked for, and failed
    last = turn_bodies(fake)[-1]
    (note,) = summary_notes(last)
    assert user_texts(last)[:2] == [GOAL, note]
    assert "- (assistant) read_file" in note and "- (result) read_file:" in note
    assert PLAIN_SUMMARY.splitlines()[0] not in note
    assert request_estimate(last) <= threshold


async def test_a_stale_item_after_an_earlier_step_of_the_turn_is_repaired_without_repeating_output(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    """Spec §5.6 guards against delivering half an answer twice; that is per model call here, so a
    step that has streamed nothing yet is repaired even when an earlier step of the turn spoke."""
    (workspace / "notes.txt").write_text("42\n")
    history = [
        {"role": "user", "content": "what was decided?"},
        reasoned_answer("the old answer", "rs_gone", "msg_gone"),
    ]
    seed_session(home, workspace, history)
    await client.call("shiro/session/resume", {"id": SEEDED_ID})
    fake.script += [
        Step(Text("Checking."), ToolCall("read_file", {"path": "notes.txt"}, call_id="call_n")),
        HttpError.item_not_found("msg_gone"),
        Step(Text("It is 42.")),
    ]
    result = await client.call("shiro/chat", {"text": "and the notes?"})
    assert result["stopReason"] == "done"
    events = client.events(result["taskId"])
    assert [e["type"] for e in events] == [
        "text", "tool-start", "tool-call", "tool-result", "notice", "text", "done",
    ]  # fmt: skip
    assert [e["text"] for e in events if e["type"] == "text"] == ["Checking.", "It is 42."]
    last = wire_text(turn_bodies(fake)[-1])
    assert "msg_gone" not in last and "the old answer" in last and '"call_id":"call_n"' in last


# --- the meter -----------------------------------------------------------------------------------


@pytest.mark.timeout(300)
async def test_the_meter_warns_then_goes_critical_as_a_session_grows_and_never_passes_the_threshold(
    client: ShiroClient, fake: RoutedFake, workspace: Path
) -> None:
    files = generate_files(workspace, 20, 2_400, 2_400)
    threshold = await overhead(client) + 8_000
    await use_threshold(client, threshold)
    fake.script += [read_step(n, files[n]) for n in range(20)] + [Step(Text("read them all"))]
    result = await client.call("shiro/chat", {"text": GOAL, "agent": "deep"})
    assert "compacted" in [e["type"] for e in client.events(result["taskId"])]
    during = [m for m in meters(client) if m["threshold"] == threshold]
    assert len(during) >= 20  # one after every step
    levels = [m["level"] for m in during]
    assert {"ok", "warn", "critical"} <= set(levels)
    assert levels.index("ok") < levels.index("warn") < levels.index("critical")
    for meter in during:
        assert meter["tokens"] <= threshold  # what the next request carries, after pruning
        assert meter["level"] == level_for(meter["tokens"], threshold)
        assert meter["percent"] == round(meter["tokens"] / threshold * 100)
        assert meter["estimated"] is True  # the fake reported no usage
    for body in turn_bodies(fake):
        assert request_estimate(body) <= threshold


async def test_the_meter_shows_the_providers_count_when_it_has_one(
    client: ShiroClient, fake: RoutedFake
) -> None:
    fake.script += [Step(Text("counted"), usage=Usage(4_321, 79)), Step(Text("not counted"))]
    await client.call("shiro/chat", {"text": "hello"})
    assert meters(client)[-1] == {
        "tokens": 4_400,
        "threshold": 1_000_000,
        "percent": 0,
        "level": "ok",
        "estimated": False,
        "local": True,  # the scripted model listens on 127.0.0.1
        "cachedTokens": 0,
        "willCompact": False,
    }
    assert await client.call("shiro/context") == meters(client)[-1]
    await client.call("shiro/chat", {"text": "again"})
    assert meters(client)[-1]["estimated"] is True  # no usage reported: the estimate stands in


async def test_the_meter_follows_resume_clear_and_a_new_threshold(
    client: ShiroClient, home: Path, workspace: Path
) -> None:
    floor = await overhead(client)
    assert floor > 1_000  # an empty session still sends the instructions and the tools
    seed_session(home, workspace, [m for i in range(4) for m in bulky_exchange(i)])
    await client.call("shiro/session/resume", {"id": SEEDED_ID})
    await eventually(lambda: bool(meters(client)))
    resumed = meters(client)[-1]
    assert resumed["tokens"] > floor + 4 * 5_000 // 4
    assert resumed == await client.call("shiro/context")
    await use_threshold(client, resumed["tokens"])  # the new threshold applies at once
    assert meters(client)[-1]["percent"] == 100 and meters(client)[-1]["level"] == "critical"
    await client.call("shiro/session/clear")
    await eventually(lambda: meters(client)[-1]["tokens"] < resumed["tokens"])
    assert meters(client)[-1]["level"] == "ok"
    assert meters(client)[-1]["tokens"] == (await client.call("shiro/context"))["tokens"]


# --- /compact ------------------------------------------------------------------------------------


async def seeded(client: ShiroClient, home: Path, workspace: Path, exchanges: int) -> None:
    seed_session(home, workspace, [m for i in range(exchanges) for m in bulky_exchange(i)])
    await client.call("shiro/session/resume", {"id": SEEDED_ID})


async def test_compact_sends_the_exact_prompt_and_replaces_the_history_with_a_saved_summary(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    await seeded(client, home, workspace, 4)
    before = (await client.call("shiro/context"))["tokens"]
    fake.plain.append(Step(Text("- goal: answer questions 0-3\n- read f_0.ts .. f_3.ts")))
    result = await client.call("shiro/session/compact")
    assert (result["before"], result["after"]) == (12, 1)

    (body,) = plain_bodies(fake)
    assert body["instructions"] == COMPACT_SYSTEM_PROMPT and "tools" not in body
    assert wire_text(body).count("x" * 5000) == 4 and "question 3" in wire_text(body)

    summary = COMPACT_SUMMARY_PREFIX + "- goal: answer questions 0-3\n- read f_0.ts .. f_3.ts"
    await client.call("shiro/session/save")
    assert len(saved_messages(home, SEEDED_ID)) == 12  # the history is kept; the model's view is the summary
    assert meters(client)[-1]["tokens"] < before - 4_000  # the meter drops at once

    fake.script.append(Step(Text("picking up from the summary")))
    await client.call("shiro/chat", {"text": "what next?"})
    (next_turn,) = turn_bodies(fake)
    assert user_texts(next_turn) == [summary, "what next?"]
    assert all(t in task_list_of(next_turn) for t in TODO_TEXTS)  # the task list is unaffected


async def test_a_failed_compact_changes_nothing(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    await seeded(client, home, workspace, 2)
    fake.plain.append(HttpError.server_error())
    with pytest.raises(JsonRpcException) as caught:
        await client.call("shiro/session/compact")
    assert "unchanged" in caught.value.message and "500" in caught.value.message
    assert (await client.call("shiro/session/current"))["messageCount"] == 6
    await client.call("shiro/session/save")
    assert json.dumps(saved_messages(home, SEEDED_ID)).count("x" * 5000) == 2


async def test_compact_is_refused_while_a_chat_runs(client: ShiroClient, fake: RoutedFake) -> None:
    gate: Gate = fake.gate("hold")
    fake.script.append(Step(WaitForRelease(gate), Text("slow answer")))
    chat = asyncio.ensure_future(client.call("shiro/chat", {"text": "take your time"}))
    await eventually(gate.reached.is_set)
    with pytest.raises(JsonRpcException) as caught:
        await client.call("shiro/session/compact")
    assert "running" in caught.value.message
    gate.release()
    assert (await chat)["stopReason"] == "done"
    assert plain_bodies(fake) == []


async def test_compact_of_a_history_too_big_for_one_request_is_pruned_to_fit(
    client: ShiroClient, fake: RoutedFake, home: Path, workspace: Path
) -> None:
    threshold = 6_000
    (workspace / ".git").mkdir()  # a repository: the git tools count in what each request carries
    await use_threshold(client, threshold)
    await seeded(client, home, workspace, 8)
    assert (await client.call("shiro/context"))["tokens"] > threshold
    result = await client.call("shiro/session/compact")
    assert (result["before"], result["after"]) == (24, 1)
    summaries = plain_bodies(fake)
    compact = next(b for b in summaries if b["instructions"] == COMPACT_SYSTEM_PROMPT)
    assert request_estimate(compact) <= threshold
    assert "question 0" in wire_text(compact) and "question 7" in wire_text(compact)
