"""What the panel is told is what happened (issue 34), over stdio: summaries that summarise, the served
window after a resume, no price on a local server, Shiro's own commands labelled as Shiro's, and a
resumed session's undone compactions, proposed changes and notices where they were.

The scripted model answers the way Qwen2.5-Coder-1.5B did in a real panel: asked for a summary of
a session that ends on its own answer, it writes that answer again.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from chat_helpers import eventually, model_bodies
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall, Usage
from fakes.fixtures import options
from fakes.local_servers import LLAMACPP_PROPS, serve
from lsp_client import ShiroClient
from shiro_lsp.context.summary import COMPACT_SUMMARY_PREFIX

pytest_plugins = ["fakes.fixtures"]

GOAL = "Why does the shelf planner put the heaviest crates on top? Make it stack them by weight."
ANSWER = (
    "The planner sorts crates by label, not weight. After making this change, the planner should "
    "stack the crates correctly: sort them with key=lambda crate: crate.weight, reverse=True."
)
GOOD_SUMMARY = "Goal: the shelf planner should stack crates by weight.\nFiles touched: planner.py\nDecisions: sort by weight."


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI) -> dict[str, object]:
    return options(home, fake, model="gpt-5", approvalTimeoutMs=3000)


def settings(client: ShiroClient, **values: object) -> None:
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"shiro": values}))


def plain_bodies(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [b for b in model_bodies(fake) if not b.get("tools")]


def text_of_message(message: dict[str, Any]) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


async def answered_once(client: ShiroClient, fake: FakeOpenAI) -> None:
    fake.script.append(Step(Text(ANSWER)))
    await client.call("shiro/chat", {"text": GOAL})


# --- summaries that summarise -------------------------------------------------------------------


async def test_the_summary_is_asked_for_last_by_name(client: ShiroClient, fake: FakeOpenAI) -> None:
    await answered_once(client, fake)
    fake.script.append(Step(Text(GOOD_SUMMARY)))
    result = await client.call("shiro/session/compact")
    (body,) = plain_bodies(fake)
    last = body["messages"][-1]
    assert last["role"] == "user"  # not the model's own answer, which a small model continues
    for heading in ("Goal:", "Task list:", "Files touched:", "Decisions:"):
        assert heading in text_of_message(last)
    assert result["compaction"]["summary"] == GOOD_SUMMARY
    assert "digestReason" not in result["compaction"]


async def test_a_summary_that_repeats_the_last_answer_twice_gives_way_to_the_digest(
    client: ShiroClient, fake: FakeOpenAI, home: Path
) -> None:
    await answered_once(client, fake)
    fake.script += [Step(Text(ANSWER)), Step(Text("Sure! " + ANSWER))]
    result = await client.call("shiro/session/compact")
    first, retry = plain_bodies(fake)
    assert len(retry["messages"]) < len(first["messages"])  # asked again over the digest, not the same way
    compaction = result["compaction"]
    assert compaction["digestReason"] == "it repeated the model's last answer"
    summary = compaction["summary"]
    assert summary.startswith("Goal: " + GOAL) and ANSWER[:40] in summary
    # the next turn's model reads the digest, with the goal, in place of the session
    fake.script.append(Step(Text("ok")))
    await client.call("shiro/chat", {"text": "go on"})
    sent = model_bodies(fake)[-1]["messages"]
    assert any(text_of_message(m).startswith(COMPACT_SUMMARY_PREFIX + "Goal: " + GOAL) for m in sent)
    progress = client.notifications["shiro/session/compacting"]
    assert progress[-1]["phase"] == "done" and progress[-1]["compaction"]["digestReason"]


async def test_a_summary_that_misses_the_goal_is_asked_for_again_and_the_second_is_kept(
    client: ShiroClient, fake: FakeOpenAI
) -> None:
    await answered_once(client, fake)
    invented = "We fixed a bug in the activate function in i18n.py and added tests."
    fake.script += [Step(Text(invented)), Step(Text(GOOD_SUMMARY))]
    result = await client.call("shiro/session/compact")
    assert len(plain_bodies(fake)) == 2
    assert result["compaction"]["summary"] == GOOD_SUMMARY and "digestReason" not in result["compaction"]


async def test_an_automatic_compaction_that_falls_back_to_the_digest_says_so(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    await answered_once(client, fake)
    floor = (await client.call("shiro/context"))["tokens"]
    settings(client, compactThreshold=floor, autoCompact=True)  # the next prompt does not fit
    await eventually(lambda: client.notifications["shiro/context/changed"][-1]["threshold"] == floor)
    fake.script += [Step(Text(ANSWER)), Step(Text(ANSWER)), Step(Text("Stacked by weight now."))]
    result = await client.call("shiro/chat", {"text": "and the lightest ones?"})
    notices = [e["text"] for e in client.events(result["taskId"]) if e["type"] == "notice"]
    assert any("Shiro's own digest" in n and "repeated the model's last answer" in n for n in notices)


# --- the window and the price of a local server -------------------------------------------------


@pytest.fixture
def llamacpp(fake: FakeOpenAI) -> FakeOpenAI:
    serve(fake, "llamacpp")
    props = copy.deepcopy(LLAMACPP_PROPS)
    props["default_generation_settings"]["n_ctx"] = 16_384
    fake.get_routes = {"/props": props}
    return fake


async def test_the_meter_after_a_resume_uses_the_served_window_before_any_turn(
    client: ShiroClient, llamacpp: FakeOpenAI, home: Path, workspace: Path
) -> None:
    record = {
        "id": "resumed-16k",
        "createdAt": "2026-01-01T00:00:00.000Z",
        "cwd": str(workspace),
        "model": "gpt-5",
        "title": "t",
        "messages": [{"role": "user", "content": GOAL}, {"role": "assistant", "content": ANSWER}],
    }
    (home / "sessions").mkdir(parents=True, exist_ok=True)
    (home / "sessions" / "resumed-16k.json").write_text(json.dumps(record))
    await client.call("shiro/session/resume", {"id": "resumed-16k"})
    await eventually(lambda: bool(client.notifications["shiro/context/changed"]))
    assert client.notifications["shiro/context/changed"][-1]["threshold"] == int(16_384 * 0.75)
    assert (await client.call("shiro/context"))["threshold"] == int(16_384 * 0.75)
    assert not [r for r in llamacpp.requests if r["method"] == "POST"]  # no turn was needed


async def test_a_local_server_never_prices_a_turn_even_under_a_priced_name(
    client: ShiroClient, fake: FakeOpenAI, home: Path
) -> None:
    fake.script.append(Step(Text("Hello."), usage=Usage(120_000, 4_000)))
    result = await client.call("shiro/chat", {"text": "hello"})
    done = client.events(result["taskId"])[-1]
    assert done["type"] == "done" and done["costUsd"] is None
    assert result["usage"].get("costUsd") is None
    await client.call("shiro/session/save")
    saved = json.loads((home / "sessions" / f"{result['sessionId']}.json").read_text())
    assert saved.get("costUsd") is None


# --- Shiro's own command ------------------------------------------------------------------------


async def test_a_command_shiro_runs_first_is_labelled_as_shiros(
    client: ShiroClient, llamacpp: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "stock_report.py").write_text("import sys\nsys.exit('KeyError: amount')\n")
    settings(client, model="qwen2.5-coder-1.5b-instruct")
    client.decisions = ["once"]
    llamacpp.script.append(Step(Text("The file reads a key that is missing.")))
    result = await client.call(
        "shiro/chat", {"text": "python3 stock_report.py crashes with KeyError: 'amount'. Please fix it."}
    )
    asked = client.approvals[0]
    assert asked["origin"] == "shiro" and asked["input"] == {"command": "python3 stock_report.py"}
    events = client.events(result["taskId"])
    call = next(e for e in events if e["type"] == "tool-call")
    approval = next(e for e in events if e["type"] == "approval")
    assert call["origin"] == approval["origin"] == "shiro"
    await client.call("shiro/session/save")
    resumed = await client.call("shiro/session/resume", {"id": result["sessionId"]})
    part = next(p for m in resumed["transcript"] if isinstance(m["content"], list) for p in m["content"])
    assert part["providerOptions"]["shiro"]["byShiro"] is True


# --- a resumed session as it happened ------------------------------------------------------------


async def test_resume_keeps_the_undone_compaction_the_proposed_change_and_the_notice_order(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    client.decisions = ["once"]
    fake.script += [
        Step(ToolCall("write_file", {"path": "crates.txt", "content": "a\nb\n"}, call_id="w1")),
        Step(Text("Wrote crates.txt.")),
    ]
    first = await client.call("shiro/chat", {"text": "list the crates in crates.txt"})
    fake.script.append(Step(Text(GOOD_SUMMARY)))
    await client.call("shiro/session/compact")
    undone = await client.call("shiro/session/uncompact")
    # a reply cut in a loop: its notice comes after the reply in the panel, and so on resume
    looping = "Crates:\n" + "".join("- crate on the shelf\n" for _ in range(300))
    fake.script += [Step(Text(looping, chunks=300)), Step(Text("Two crates."))]
    second = await client.call("shiro/chat", {"text": "how many crates?"})
    live = [e["type"] for e in client.events(second["taskId"]) if e["type"] in ("text", "notice")]
    assert live.index("notice") > live.index("text")

    await client.call("shiro/session/save")
    resumed = await client.call("shiro/session/resume", {"id": first["sessionId"]})
    (mark,) = resumed["undoneCompactions"]
    assert mark["summary"] == GOOD_SUMMARY and mark["restored"] == undone["after"]
    assert mark["at"] <= mark["undoneAt"] and resumed["compactions"] == []
    approval = next(h["event"] for h in resumed["events"] if h["event"]["type"] == "approval")
    (row,) = approval["files"]
    assert (row["path"], row["status"], row["additions"], row["deletions"]) == ("crates.txt", "added", 2, 0)
    cut = next(
        h for h in resumed["events"] if h["event"]["type"] == "notice" and h["taskId"] == second["taskId"]
    )
    transcript = resumed["transcript"]
    reply = next(
        i for i, m in enumerate(transcript) if m["role"] == "assistant" and "crate on the shelf" in str(m)
    )
    assert cut["at"] == reply + 1  # shown after the cut reply, as live
