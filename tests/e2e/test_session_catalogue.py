"""The reference's session catalogues (spec §13 session.test.ts, session-features.test.ts), over LSP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from chat_helpers import (
    eventually,
    model_bodies,
    sent,
    system_prompt_of,
    task_list_of,
    tool_names_of,
    types_of,
)
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.fixtures import options
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]


@pytest.fixture
def permissions() -> dict[str, Any]:
    return {}


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI, permissions: dict[str, Any]) -> dict[str, object]:
    return options(home, fake, permissions, model="gpt-5")


async def chat(client: ShiroClient, text: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = await client.call("shiro/chat", {"text": text, **params})
    return result


async def test_a_read_only_tool_runs_without_approval(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    fake.script += [Step(ToolCall("read_file", {"path": "a.txt"})), Step(Text("read it"))]
    result = await chat(client, "read a.txt")
    assert types_of(client.events(result["taskId"])) == [
        "tool-start",
        "tool-call",
        "tool-result",
        "text",
        "done",
    ]
    assert client.approvals == [] and len(model_bodies(fake)) == 2


async def test_an_approved_edit_changes_the_file(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    client.decisions = ["once"]
    edit = {"path": "a.py", "oldString": "x = 1", "newString": "x = 2"}
    fake.script += [Step(ToolCall("edit_file", edit)), Step(Text("edited"))]
    await chat(client, "bump x")
    assert (workspace / "a.py").read_text() == "x = 2\n"


async def test_a_denied_bash_leaves_a_tool_message_in_history(client: ShiroClient, fake: FakeOpenAI) -> None:
    client.decisions = ["deny"]
    fake.script += [Step(ToolCall("bash", {"command": "make deploy"}, call_id="call_b")), Step(Text("ok"))]
    result = await chat(client, "deploy")
    assert "tool-denied" in types_of(client.events(result["taskId"]))
    tool_messages = [m for m in model_bodies(fake)[1]["messages"] if m["role"] == "tool"]
    assert tool_messages[0]["tool_call_id"] == "call_b"


@pytest.mark.parametrize(("agent", "effort"), [("deep", "xhigh"), ("quick", "none"), ("default", "medium")])
async def test_agent_variants_set_the_reasoning_effort(
    client: ShiroClient, fake: FakeOpenAI, agent: str, effort: str
) -> None:
    fake.script.append(Step(Text("ok")))
    await chat(client, "hi", agent=agent)
    assert model_bodies(fake)[0]["reasoning_effort"] == effort


async def test_switching_agent_changes_the_next_call(client: ShiroClient, fake: FakeOpenAI) -> None:
    fake.script += [Step(Text("one")), Step(Text("two"))]
    await chat(client, "first")
    await chat(client, "second", agent="deep")
    assert [b["reasoning_effort"] for b in model_bodies(fake)] == ["medium", "xhigh"]


async def test_plan_hides_the_tools_that_change_things(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / ".git").mkdir()  # git tools are offered in a repository only
    fake.script += [Step(Text("plan")), Step(Text("default"))]
    await chat(client, "plan it", agent="plan")
    await chat(client, "do it")
    planned, default = (tool_names_of(b) for b in model_bodies(fake))
    assert not {"write_file", "edit_file", "bash"} & set(planned)
    assert {"read_file", "todo_write", "remember"} <= set(planned)
    assert {"write_file", "edit_file", "bash", "git_status", "recall"} <= set(default)
    assert "write_file" not in system_prompt_of(model_bodies(fake)[0])


async def test_the_variant_appendix_is_in_the_system_prompt(client: ShiroClient, fake: FakeOpenAI) -> None:
    fake.script.append(Step(Text("ok")))
    await chat(client, "look at this", agent="review")
    assert "You are reviewing code" in system_prompt_of(model_bodies(fake)[0])


async def test_quick_stops_after_12_steps(client: ShiroClient, fake: FakeOpenAI) -> None:
    fake.script += [Step(ToolCall("glob", {"pattern": f"*{i}"})) for i in range(13)]
    result = await chat(client, "search", agent="quick")
    events = client.events(result["taskId"])
    assert len(model_bodies(fake)) == 12 and result["stopReason"] == "done"
    assert any(e["type"] == "notice" and "12 steps" in e["text"] for e in events)


async def test_memory_and_git_tools_never_prompt(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / ".git").mkdir()  # git tools are offered in a repository only
    fake.script += [
        Step(ToolCall("remember", {"kind": "fact", "text": "the API lives in api/"})),
        Step(ToolCall("recall", {"query": "api"})),
        Step(ToolCall("git_status", {})),
        Step(Text("noted")),
    ]
    result = await chat(client, "note it")
    assert client.approvals == []
    outputs = [e["output"] for e in client.events(result["taskId"]) if e["type"] == "tool-result"]
    assert (
        outputs[0].startswith("Remembered as fact (1 stored)")
        and outputs[1] == "(fact) the API lives in api/"
    )
    listing = await client.call("shiro/memory/list")
    assert listing["entries"][0]["hits"] == 1


async def test_a_remembered_note_reaches_the_next_turns_system_prompt(
    client: ShiroClient, fake: FakeOpenAI
) -> None:
    """Within a turn the system prompt stays byte-identical (a provider's prompt cache serves it);
    the turn's own remember is in its history, and the next turn's prompt carries it."""
    fake.script += [
        Step(ToolCall("remember", {"kind": "gotcha", "text": "run migrations first"})),
        Step(Text("ok")),
        Step(Text("again")),
    ]
    await chat(client, "learn")
    await chat(client, "go on")
    first, same_turn, next_turn = (system_prompt_of(body) for body in model_bodies(fake))
    assert same_turn == first
    assert "earlier sessions" in next_turn and "- (gotcha) run migrations first" in next_turn


async def test_todo_write_reaches_the_next_step_and_the_editor(client: ShiroClient, fake: FakeOpenAI) -> None:
    todos = [{"content": "read", "status": "done"}, {"content": "fix", "status": "in_progress"}]
    fake.script += [Step(ToolCall("todo_write", {"todos": todos})), Step(Text("planned"))]
    await chat(client, "plan")
    assert task_list_of(model_bodies(fake)[1]) == (
        "Your task list (1/2 done). Keep it current with todo_write:\n[x] read\n[~] fix"
    )
    changed = client.notifications["shiro/todos/changed"][-1]
    assert changed["progress"] == {"done": 1, "total": 2, "blocked": 0, "current": "fix"}


async def test_safe_bash_still_asks(client: ShiroClient, fake: FakeOpenAI) -> None:
    client.decisions = ["deny"]
    fake.script += [Step(ToolCall("bash", {"command": "ls"})), Step(Text("ok"))]
    await chat(client, "list")
    assert [a["toolName"] for a in client.approvals] == ["bash"]


class TestRules:
    @pytest.fixture
    def permissions(self) -> dict[str, Any]:
        return {"bash": {"*": "ask", "echo *": "allow", "rm *": "deny"}}

    async def test_an_allow_pattern_skips_the_prompt(self, client: ShiroClient, fake: FakeOpenAI) -> None:
        fake.script += [Step(ToolCall("bash", {"command": "echo hi"})), Step(Text("ok"))]
        result = await chat(client, "say hi")
        assert client.approvals == []
        assert "hi" in next(
            e["output"] for e in client.events(result["taskId"]) if e["type"] == "tool-result"
        )

    async def test_a_deny_pattern_refuses_without_asking(
        self, client: ShiroClient, fake: FakeOpenAI, workspace: Path
    ) -> None:
        (workspace / "keep.txt").write_text("x")
        fake.script += [Step(ToolCall("bash", {"command": "rm keep.txt"})), Step(Text("ok"))]
        result = await chat(client, "remove it")
        events = client.events(result["taskId"])
        assert client.approvals == [] and (workspace / "keep.txt").exists()
        assert any(e["type"] == "notice" and '"rm *" = deny' in e["text"] for e in events)

    async def test_a_command_outside_the_allowed_pattern_asks(
        self, client: ShiroClient, fake: FakeOpenAI
    ) -> None:
        client.decisions = ["deny"]
        fake.script += [Step(ToolCall("bash", {"command": "npm test"})), Step(Text("ok"))]
        await chat(client, "test")
        (approval,) = client.approvals
        assert approval["matchedPattern"] == "*" and approval["suggestedPattern"] == "npm *"


async def test_always_grants_the_first_word_for_the_session(client: ShiroClient, fake: FakeOpenAI) -> None:
    client.decisions = ["always", "deny"]
    fake.script += [
        Step(ToolCall("bash", {"command": "git status"})),
        Step(ToolCall("bash", {"command": "git log -1"})),
        Step(ToolCall("bash", {"command": "npm test"})),
        Step(Text("ok")),
    ]
    await chat(client, "check")
    assert [a["input"]["command"] for a in client.approvals] == ["git status", "npm test"]
    assert client.approvals[0]["suggestedPattern"] == "git *"
    fake.script += [Step(ToolCall("bash", {"command": "git diff"})), Step(Text("ok"))]
    await client.call("shiro/session/new")
    client.decisions = ["deny"]
    await chat(client, "again")
    assert client.approvals[-1]["input"]["command"] == "git diff"  # grants end with the session


async def test_reading_a_secret_is_denied_and_never_reaches_the_model(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / ".env").write_text("API_TOKEN=hunter2-secret\n")
    fake.script += [Step(ToolCall("read_file", {"path": ".env"})), Step(Text("ok"))]
    result = await chat(client, "read .env")
    assert "tool-denied" in types_of(client.events(result["taskId"]))
    assert "hunter2-secret" not in sent(fake)
    saved = await client.call("shiro/session/export", {"format": "json"})
    assert "hunter2-secret" not in saved["content"]


async def test_a_model_change_applies_to_the_next_turn(client: ShiroClient, fake: FakeOpenAI) -> None:
    fake.script += [Step(Text("one")), Step(Text("two"))]
    await chat(client, "first")
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"shiro": {"model": "gpt-5-mini"}})
    )
    await eventually(lambda: True)
    await chat(client, "second")
    assert [b["model"] for b in model_bodies(fake)] == ["gpt-5", "gpt-5-mini"]


async def test_clear_starts_a_new_session_with_zero_counters(client: ShiroClient, fake: FakeOpenAI) -> None:
    fake.script.append(Step(Text("hello")))
    first = await chat(client, "hi")
    cleared = await client.call("shiro/session/clear")
    assert cleared["previous"]["id"] == first["sessionId"] and cleared["previous"]["messageCount"] == 2
    assert cleared["session"]["id"] != first["sessionId"] and cleared["session"]["messageCount"] == 0
    assert cleared["session"]["inputTokens"] == 0
    listed = await client.call("shiro/session/list")
    assert first["sessionId"] in [s["id"] for s in listed["sessions"]]


class TestRestrictedMode:
    @pytest.fixture
    def init_options(self, home: Path, fake: FakeOpenAI) -> dict[str, object]:
        return options(home, fake, apiKey="sk", maxRetries=None, trusted=False)

    async def test_changes_are_refused_but_reads_work(
        self, client: ShiroClient, fake: FakeOpenAI, workspace: Path
    ) -> None:
        (workspace / "a.txt").write_text("readable\n")
        fake.script += [
            Step(ToolCall("read_file", {"path": "a.txt"})),
            Step(ToolCall("write_file", {"path": "b.txt", "content": "no"})),
            Step(Text("done")),
        ]
        result = await chat(client, "try")
        events = client.events(result["taskId"])
        assert any(e["type"] == "tool-result" and "readable" in e["output"] for e in events)
        assert any(e["type"] == "notice" and "restricted mode" in e["text"] for e in events)
        assert not (workspace / "b.txt").exists() and client.approvals == []
        with pytest.raises(JsonRpcException, match="restricted mode"):
            await client.call("shiro/memory/remember", {"kind": "fact", "text": "x"})
