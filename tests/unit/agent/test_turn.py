"""loop.Turn through the in-process scripted client: steps, tools, approvals, errors, cancel, pruning."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from fakes.scripted_client import Call, Reply, ScriptedClient
from shiro_lsp.agent import events as ev
from shiro_lsp.agent.agents import variant
from shiro_lsp.agent.context_window import ContextWindow
from shiro_lsp.agent.loop import Turn
from shiro_lsp.agent.permissions import Grants, PermissionPolicy
from shiro_lsp.agent.setup import ApprovalRequest, TurnSetup, plan_turn
from shiro_lsp.config import ToolCallFormat
from shiro_lsp.messages import Message
from shiro_lsp.providers.types import ProviderError
from shiro_lsp.tools import builtin_registry
from shiro_lsp.usage import Usage


class ListHistory:
    def __init__(self, messages: list[Message] | None = None) -> None:
        self.messages: list[Message] = list(messages or [])
        self.usage: list[tuple[int, int, float | None]] = []

    def append(self, *messages: Message) -> None:
        self.messages.extend(messages)

    def replace(self, messages: list[Message]) -> None:
        self.messages = list(messages)

    def add_usage(self, usage: Usage) -> None:
        self.usage.append((usage.input_tokens, usage.output_tokens, usage.cost_usd))


def make_turn(
    workspace: Path,
    client: ScriptedClient,
    *,
    history: ListHistory | None = None,
    decisions: list[str] | None = None,
    threshold: int = 120_000,
    agent: str = "default",
    tool_call_format: ToolCallFormat = "auto",
    billed: bool = True,
) -> tuple[Turn, ListHistory, list[ev.Event], list[ApprovalRequest]]:
    asked: list[ApprovalRequest] = []
    answers = list(decisions or [])

    async def approve(request: ApprovalRequest) -> Any:
        asked.append(request)
        return answers.pop(0) if answers else "deny"

    async def prompt() -> str:
        return "You are a test agent."

    registry = builtin_registry()
    setup = TurnSetup(
        client=client,
        model="gpt-4o",
        plan=plan_turn(variant(agent), registry, calls=tool_call_format),
        policy=PermissionPolicy(registry=registry),
        grants=Grants(),
        window=ContextWindow(threshold),
        system_prompt=prompt,
        workspace=workspace,
        approver=approve,
        billed=billed,
    )
    emitted: list[ev.Event] = []
    history = history if history is not None else ListHistory()
    return Turn(setup, history, emitted.append), history, emitted, asked


def kinds(emitted: list[ev.Event]) -> list[str]:
    return [type(e).__name__ for e in emitted]


async def test_a_plain_answer_streams_its_text_and_is_saved(tmp_path: Path) -> None:
    client = ScriptedClient(Reply("hello there", chunks=3))
    turn, history, emitted, _ = make_turn(tmp_path, client)
    outcome = await turn.run("hi")
    assert (
        outcome.stop_reason == "done"
        and outcome.usage.input_tokens == 100
        and outcome.usage.output_tokens == 10
    )
    assert "".join(e.text for e in emitted if isinstance(e, ev.Text)) == "hello there"
    assert kinds(emitted)[-1] == "Done"
    assert [m["role"] for m in history.messages] == ["user", "assistant"]
    assert client.requests[0].instructions.startswith("You are a test agent.")
    assert client.requests[0].messages[0] == {"role": "user", "content": "hi"}


@pytest.mark.parametrize(("billed", "cost"), [(True, 100 / 1e6 * 2.5 + 10 / 1e6 * 10), (False, None)])
async def test_a_turn_is_priced_by_its_model_only_where_the_endpoint_bills(
    tmp_path: Path, billed: bool, cost: float | None
) -> None:
    turn, history, emitted, _ = make_turn(tmp_path, ScriptedClient(Reply("priced")), billed=billed)
    await turn.run("hi")
    assert history.usage == [(100, 10, pytest.approx(cost) if cost is not None else None)]
    done = emitted[-1]
    assert isinstance(done, ev.Done) and done.cost_usd == (pytest.approx(cost) if cost is not None else None)


async def test_a_read_only_tool_runs_without_asking_and_its_result_goes_back(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("the answer is 42\n")
    client = ScriptedClient(
        Reply(calls=[Call("read_file", {"path": "notes.txt"}, "c1")]), Reply("it says 42")
    )
    turn, history, emitted, asked = make_turn(tmp_path, client)
    outcome = await turn.run("what does notes.txt say?")
    assert outcome.stop_reason == "done" and asked == []
    results = [e for e in emitted if isinstance(e, ev.ToolResult)]
    assert len(results) == 1 and "the answer is 42" in results[0].output
    assert [m["role"] for m in history.messages] == ["user", "assistant", "tool", "assistant"]
    second = client.requests[1].messages
    assert second[-1]["role"] == "tool" and "the answer is 42" in str(second[-1]["content"])


async def test_a_write_asks_and_runs_once_approved(tmp_path: Path) -> None:
    client = ScriptedClient(
        Reply(calls=[Call("write_file", {"path": "out.txt", "content": "written"}, "w1")]), Reply("done")
    )
    turn, _, emitted, asked = make_turn(tmp_path, client, decisions=["once"])
    assert (await turn.run("write it")).stop_reason == "done"
    assert [a.tool_name for a in asked] == ["write_file"]
    assert (tmp_path / "out.txt").read_text() == "written"
    assert "ToolResult" in kinds(emitted)


async def test_a_denied_write_changes_nothing_and_the_model_hears_why(tmp_path: Path) -> None:
    client = ScriptedClient(
        Reply(calls=[Call("write_file", {"path": "out.txt", "content": "x"}, "w1")]), Reply("ok, I will not")
    )
    turn, history, emitted, asked = make_turn(tmp_path, client, decisions=["deny"])
    assert (await turn.run("write it")).stop_reason == "done"
    assert len(asked) == 1 and not (tmp_path / "out.txt").exists()
    assert "ToolDenied" in kinds(emitted)
    tool_message = history.messages[2]
    assert tool_message["role"] == "tool" and "w1" in str(tool_message["content"])


async def test_an_unknown_tool_is_an_error_result_not_a_crash(tmp_path: Path) -> None:
    client = ScriptedClient(Reply(calls=[Call("no_such_tool", {}, "u1")]), Reply("sorry"))
    turn, history, _, _ = make_turn(tmp_path, client)
    assert (await turn.run("go")).stop_reason == "done"
    assert "no_such_tool" in str(history.messages[2]["content"])


async def test_a_provider_error_ends_the_turn_with_its_message(tmp_path: Path) -> None:
    error = ProviderError("The API key was refused.", kind="auth", status=401)
    turn, _, emitted, _ = make_turn(tmp_path, ScriptedClient(Reply(error=error)))
    outcome = await turn.run("hi")
    assert outcome.stop_reason == "error" and outcome.error == "The API key was refused."
    assert [e.error for e in emitted if isinstance(e, ev.Failed)] == ["The API key was refused."]


async def test_a_cancelled_turn_keeps_its_partial_answer(tmp_path: Path) -> None:
    hold = asyncio.Event()
    turn, history, emitted, _ = make_turn(tmp_path, ScriptedClient(Reply("partial", hold=hold)))
    task = asyncio.create_task(turn.run("a long one"))
    while not any(isinstance(e, ev.Text) for e in emitted):
        await asyncio.sleep(0)
    task.cancel()
    outcome = await task
    assert outcome.stop_reason == "cancelled" and kinds(emitted)[-1] == "Done"
    assert "partial" in str(history.messages[1:])


async def test_the_step_limit_stops_a_model_that_never_stops_calling_tools(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    limit = variant("default").max_steps
    replies = [Reply(calls=[Call("read_file", {"path": "a.txt", "offset": n + 1})]) for n in range(limit + 1)]
    client = ScriptedClient(*replies)
    turn, _, emitted, _ = make_turn(tmp_path, client)
    assert (await turn.run("loop")).stop_reason == "done"
    assert len(client.requests) == limit
    assert any(isinstance(e, ev.Notice) and "step limit" in e.text for e in emitted)


@pytest.mark.parametrize("agent", ["plan", "review"])
async def test_read_only_agents_are_offered_no_tool_that_writes(tmp_path: Path, agent: str) -> None:
    client = ScriptedClient(Reply("a plan"))
    turn, _, _, _ = make_turn(tmp_path, client, agent=agent)
    await turn.run("plan it")
    offered = {t.name for t in client.requests[0].tools}
    assert "read_file" in offered and not offered & {"write_file", "edit_file", "bash"}


async def test_a_history_over_the_threshold_is_pruned_on_the_wire_not_in_the_session(tmp_path: Path) -> None:
    bulky = "x = compute(value)\n" * 400
    old: list[Message] = [{"role": "user", "content": "read them all"}]
    for n in range(30):
        call = {
            "type": "tool-call",
            "toolCallId": f"c{n}",
            "toolName": "read_file",
            "input": {"path": "a.py"},
        }
        result = {
            "type": "tool-result",
            "toolCallId": f"c{n}",
            "toolName": "read_file",
            "output": {"type": "text", "value": bulky},
        }
        old += [{"role": "assistant", "content": [call]}, {"role": "tool", "content": [result]}]
    history = ListHistory(old)
    client = ScriptedClient(Reply("fine"))
    turn, _, emitted, _ = make_turn(tmp_path, client, history=history, threshold=20_000)
    assert (await turn.run("the newest question")).stop_reason == "done"
    sent = client.requests[0].messages
    assert len(sent) < len(old) and "the newest question" in str(sent[-1])
    assert len(history.messages) == len(old) + 2  # the session keeps everything
    assert any(isinstance(e, ev.Compacted) for e in emitted)


async def test_text_tool_calls_describe_the_tools_once_per_turn_and_the_same_every_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shiro_lsp.agent import setup

    built: list[int] = []
    real = setup.tools_prompt

    def counting(specs: list[Any]) -> str:
        built.append(len(specs))
        return real(specs)

    monkeypatch.setattr(setup, "tools_prompt", counting)
    (tmp_path / "notes.txt").write_text("the answer is 42\n")
    call = '<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n</tool_call>'
    client = ScriptedClient(Reply(call), Reply(call), Reply("it says 42"))
    turn, _, emitted, _ = make_turn(tmp_path, client, tool_call_format="text")
    assert (await turn.run("what does notes.txt say?")).stop_reason == "done"
    assert len([e for e in emitted if isinstance(e, ev.ToolResult)]) == 2
    instructions = [request.instructions for request in client.requests]
    assert len(instructions) == 3 and len(set(instructions)) == 1  # a stable prefix for the prompt cache
    assert "<tools>" in instructions[0] and '"name": "read_file"' in instructions[0]
    assert all(request.tools == [] for request in client.requests)
    assert len(built) == 1  # built once for the turn's plan, not at every step


async def test_in_auto_a_native_call_makes_the_rest_of_the_turns_text_text(tmp_path: Path) -> None:
    (tmp_path / "call.json").write_text("x")
    written = '{"name": "write_file", "arguments": {"path": "out.txt", "content": "x"}}'
    client = ScriptedClient(Reply(calls=[Call("read_file", {"path": "call.json"}, "c1")]), Reply(written))
    turn, _, emitted, asked = make_turn(tmp_path, client, decisions=["once"])
    assert (await turn.run("print it")).stop_reason == "done"
    assert turn.native_calls_seen and turn.tool_call_format == "native"
    assert asked == [] and not (tmp_path / "out.txt").exists()
    assert "".join(e.text for e in emitted if isinstance(e, ev.Text)) == written


async def test_a_text_call_is_asked_about_as_one(tmp_path: Path) -> None:
    written = '{"name": "write_file", "arguments": {"path": "out.txt", "content": "x"}}'
    client = ScriptedClient(Reply(written), Reply("done"))
    turn, _, emitted, asked = make_turn(tmp_path, client, decisions=["always"])
    assert (await turn.run("write it")).stop_reason == "done"
    assert [(a.tool_name, a.origin) for a in asked] == [("write_file", "text")]
    assert [e.origin for e in emitted if isinstance(e, ev.ToolCall)] == ["text"]
    grants = turn.setup.grants
    assert (
        grants.patterns("write_file", "text") == ["out.txt"] and grants.patterns("write_file") == []
    )  # that path alone


async def test_the_model_is_sent_back_at_most_three_times_a_turn_whatever_the_reasons(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    in_prose = 'To look, call:\n```json\n{"name": "grep", "arguments": {"pattern": "alpha"}}\n```\n'
    client = ScriptedClient(
        Reply(in_prose),  # a call inside prose: sent back (1)
        Reply(calls=[Call("read_file", {"path": "a.txt"}, "r1")]),
        Reply("It says alpha. I will now edit a.txt."),  # an announced step: sent back (2)
        Reply(""),  # no answer after its tools: sent back (3)
        Reply("<tool_response>\nall good\n</tool_response>"),  # a fourth reason: the budget is spent
        Reply("a.txt holds alpha."),
    )
    turn, history, emitted, _ = make_turn(tmp_path, client)
    assert (await turn.run("what does a.txt hold?")).stop_reason == "done"
    assert len(client.requests) == 5
    notices = [e.text for e in emitted if isinstance(e, ev.Notice)]
    assert len(notices) == 3 and all("sent the model back" in n for n in notices)
    assert history.messages[-1]["content"][0]["text"].startswith("<tool_response>")
