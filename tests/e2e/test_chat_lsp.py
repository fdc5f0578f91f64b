"""Chat turns through the real server over stdio, against the scripted OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from chat_helpers import eventually, model_bodies, text_of, types_of
from fakes.fake_openai import (
    FakeOpenAI,
    HttpError,
    Reasoning,
    Step,
    StreamError,
    Text,
    ToolCall,
    Usage,
    WaitForRelease,
)
from fakes.fixtures import options
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]


@pytest.fixture
def api() -> str:
    """Chat Completions, what `api: auto` speaks to anything but OpenAI; `both_apis` tests run on each."""
    return "chat"


both_apis = pytest.mark.parametrize("api", ["responses", "chat"])


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI, api: str) -> dict[str, object]:
    return options(home, fake, api=api, model="gpt-5", approvalTimeoutMs=3000)


@both_apis
async def test_a_plain_answer_streams_and_counts(client: ShiroClient, fake: FakeOpenAI, api: str) -> None:
    fake.script.append(Step(Text("Hello from the model", chunks=6), usage=Usage(120, 7)))
    result = await client.call("shiro/chat", {"text": "say hello"})
    assert result["stopReason"] == "done" and result["error"] is None
    assert result["usage"]["inputTokens"] == 120 and result["usage"]["outputTokens"] == 7
    # the scripted model is on 127.0.0.1: a local server is never priced, whatever the model's name (issue 34;
    # a priced turn: tests/unit/agent/test_turn.py)
    assert result["usage"]["costUsd"] is None
    events = client.events(result["taskId"])
    assert text_of(events) == "Hello from the model"
    assert types_of(events)[-1] == "done"
    seqs = [n["seq"] for n in client.notifications["shiro/event"] if n["taskId"] == result["taskId"]]
    assert seqs == list(range(len(seqs)))
    assert all(n["sessionId"] == result["sessionId"] for n in client.notifications["shiro/event"])
    assert (await client.call("shiro/history"))["prompts"] == ["say hello"]


@both_apis
async def test_a_multi_step_tool_turn_pairs_results_with_calls(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, api: str
) -> None:
    (workspace / "notes.txt").write_text("the answer is 42\n")
    fake.script += [
        Step(
            Reasoning("look at the file", id="rs_1"),
            ToolCall("read_file", {"path": "notes.txt"}, call_id="call_1"),
        ),
        Step(Text("It says 42."), usage=Usage(50, 5)),
    ]
    result = await client.call("shiro/chat", {"text": "what does notes.txt say?"})
    assert result["stopReason"] == "done"
    events = client.events(result["taskId"])
    assert [t for t in types_of(events) if t.startswith("tool")] == ["tool-start", "tool-call", "tool-result"]
    tool_result = next(e for e in events if e["type"] == "tool-result")
    assert "the answer is 42" in tool_result["output"] and tool_result["name"] == "read_file"
    second = json.dumps(model_bodies(fake)[1])
    assert "call_1" in second and "the answer is 42" in second
    if api == "chat":
        messages = model_bodies(fake)[1]["messages"]
        assert [m["role"] for m in messages][-2:] == ["assistant", "tool"]


async def test_approval_once_runs_the_tool(client: ShiroClient, fake: FakeOpenAI, workspace: Path) -> None:
    client.decisions = ["once"]
    fake.script += [
        Step(ToolCall("write_file", {"path": "out.txt", "content": "written"}, call_id="call_w")),
        Step(Text("done")),
    ]
    result = await client.call("shiro/chat", {"text": "write it"})
    assert result["stopReason"] == "done"
    (approval,) = client.approvals
    assert approval["toolName"] == "write_file" and approval["taskId"] == result["taskId"]
    assert approval["input"] == {"path": "out.txt", "content": "written"}
    assert approval["suggestedPattern"] == "*" and approval["repeated"] is False
    assert (workspace / "out.txt").read_text() == "written"


async def test_approval_always_asks_once_for_the_session(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    client.decisions = ["always"]
    fake.script += [
        Step(ToolCall("write_file", {"path": "a.txt", "content": "a"}, call_id="c1")),
        Step(ToolCall("write_file", {"path": "b.txt", "content": "b"}, call_id="c2")),
        Step(Text("both written")),
    ]
    await client.call("shiro/chat", {"text": "write two files"})
    assert len(client.approvals) == 1
    assert (workspace / "a.txt").exists() and (workspace / "b.txt").exists()


async def test_deny_leaves_the_workspace_untouched(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    client.decisions = ["deny"]
    fake.script += [Step(ToolCall("bash", {"command": "touch created.txt"}, call_id="c1")), Step(Text("ok"))]
    result = await client.call("shiro/chat", {"text": "make a file"})
    assert "tool-denied" in types_of(client.events(result["taskId"]))
    assert not (workspace / "created.txt").exists()
    assert "User denied this tool call." in json.dumps(model_bodies(fake)[1])


async def test_no_answer_in_time_is_a_deny(client: ShiroClient, fake: FakeOpenAI, workspace: Path) -> None:
    client.decisions = ["once"]
    client.approval_delay = 4.0  # longer than approvalTimeoutMs (3 s)
    fake.script += [
        Step(ToolCall("write_file", {"path": "late.txt", "content": "x"}, call_id="c1")),
        Step(Text("ok")),
    ]
    result = await client.call("shiro/chat", {"text": "write"})
    assert "tool-denied" in types_of(client.events(result["taskId"]))
    await eventually(lambda: client.answering == 0)  # the late answer arrives and changes nothing
    assert not (workspace / "late.txt").exists()


async def test_the_guard_refuses_without_asking(client: ShiroClient, fake: FakeOpenAI) -> None:
    client.decisions = ["once"]
    fake.script += [Step(ToolCall("bash", {"command": "rm -rf /"}, call_id="c1")), Step(Text("ok"))]
    result = await client.call("shiro/chat", {"text": "clean up"})
    events = client.events(result["taskId"])
    assert client.approvals == []
    assert "tool-denied" in types_of(events)
    assert any(e["type"] == "notice" and "delete" in e["text"] for e in events)


async def test_the_third_identical_call_asks_with_repeated(client: ShiroClient, fake: FakeOpenAI) -> None:
    client.decisions = ["once", "once"]
    call = {"path": "."}
    fake.script += [Step(ToolCall("list_dir", call, call_id=f"c{i}")) for i in range(4)] + [Step(Text("ok"))]
    await client.call("shiro/chat", {"text": "look around"})
    assert [a["repeated"] for a in client.approvals] == [True, True]


async def test_bad_tool_input_becomes_a_tool_error_the_model_reads(
    client: ShiroClient, fake: FakeOpenAI
) -> None:
    fake.script += [
        Step(ToolCall("read_file", "{not json", call_id="c1")),
        Step(ToolCall("no_such_tool", {}, call_id="c2")),
        Step(ToolCall("read_file", {"path": "../../etc/passwd"}, call_id="c3")),
        Step(Text("giving up")),
    ]
    result = await client.call("shiro/chat", {"text": "try things"})
    assert result["stopReason"] == "done"
    errors = [e["error"] for e in client.events(result["taskId"]) if e["type"] == "tool-error"]
    assert "not valid JSON" in errors[0]
    assert 'Unknown tool "no_such_tool"' in errors[1]
    assert "Path escapes workspace" in errors[2]
    assert "root:x:0:0" not in json.dumps(model_bodies(fake))


async def chat_then_cancel(client: ShiroClient, text: str, ready: Callable[[], bool]) -> dict[str, Any]:
    future = client.protocol.send_request("shiro/chat", {"text": text}, msg_id=f"chat-{text}")
    await eventually(ready)
    client.cancel_request(types.CancelParams(id=f"chat-{text}"))
    return dict(await asyncio.wait_for(asyncio.wrap_future(future), 15))


@both_apis
async def test_cancel_mid_stream_keeps_the_partial_answer(
    client: ShiroClient, fake: FakeOpenAI, api: str
) -> None:
    gate = fake.gate("hold")
    fake.script += [
        Step(Text("partial answer"), WaitForRelease(gate), Text(" never sent")),
        Step(Text("next")),
    ]
    result = await chat_then_cancel(
        client, "long one", lambda: any(e["type"] == "text" for e in client.events())
    )
    gate.release()
    assert result["stopReason"] == "cancelled"
    events = client.events(result["taskId"])
    assert text_of(events) == "partial answer" and types_of(events)[-1] == "done"
    follow_up = await client.call("shiro/chat", {"text": "and then?"})
    assert follow_up["stopReason"] == "done"
    assert "partial answer" in json.dumps(model_bodies(fake)[-1])


async def test_cancel_mid_bash_kills_the_command(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    client.decisions = ["once"]
    # found by its arguments, not its pid: in the sandbox's own pid namespace `$!` is not the host's pid
    seconds = f"59.{os.getpid()}"
    command = f"sleep {seconds} & echo $! > child.pid; echo started; wait"
    fake.script += [Step(ToolCall("bash", {"command": command}, call_id="c1")), Step(Text("after"))]
    pid_file = workspace / "child.pid"

    def pid_written() -> bool:  # not only created: the shell opens the file before it writes the pid
        return pid_file.exists() and pid_file.read_text().endswith("\n")

    result = await chat_then_cancel(client, "run it", pid_written)
    assert result["stopReason"] == "cancelled"
    await eventually(lambda: not running(["sleep", seconds]))
    follow_up = await client.call("shiro/chat", {"text": "go on"})
    assert follow_up["stopReason"] == "done"
    assert "c1" in json.dumps(model_bodies(fake)[-1])  # the call still has a result on the wire


@both_apis
async def test_every_error_class_ends_the_turn_with_a_clear_message(
    client: ShiroClient, fake: FakeOpenAI, api: str
) -> None:
    cases = [
        (HttpError.invalid_api_key(), "API key"),
        (HttpError.model_not_found("gpt-5"), "gpt-5"),
        (HttpError.rate_limited(0.01), "429"),
        (HttpError.server_error(), "500"),
    ]
    for error, expected in cases:
        fake.script.append(error)
        result = await client.call("shiro/chat", {"text": "hi"})
        assert result["stopReason"] == "error"
        assert expected in result["error"] and "Traceback" not in result["error"]
        events = client.events(result["taskId"])
        assert types_of(events) == ["error"]


@both_apis
async def test_a_stream_error_midway_is_an_error(client: ShiroClient, fake: FakeOpenAI, api: str) -> None:
    fake.script.append(Step(Text("half"), StreamError()))
    result = await client.call("shiro/chat", {"text": "hi"})
    assert result["stopReason"] == "error"
    assert types_of(client.events(result["taskId"])) == ["text", "error"]


async def test_queued_chats_run_in_order_and_clear(client: ShiroClient, fake: FakeOpenAI) -> None:
    first_gate, second_gate = fake.gate("first"), fake.gate("second")
    fake.script += [
        Step(WaitForRelease(first_gate), Text("first")),
        Step(WaitForRelease(second_gate), Text("second")),
    ]
    first = asyncio.ensure_future(client.call("shiro/chat", {"text": "one"}))
    await eventually(first_gate.reached.is_set)
    second = asyncio.ensure_future(client.call("shiro/chat", {"text": "two"}))
    third = asyncio.ensure_future(client.call("shiro/chat", {"text": "three"}))
    queued: dict[str, Any] = {}
    for _ in range(250):
        queued = await client.call("shiro/queue")
        if len(queued["queued"]) == 2:
            break
        await asyncio.sleep(0.02)
    assert [q["text"] for q in queued["queued"]] == ["two", "three"]
    first_gate.release()
    one = await first
    assert one["stopReason"] == "done" and text_of(client.events(one["taskId"])) == "first"
    await eventually(second_gate.reached.is_set)
    assert [q["text"] for q in (await client.call("shiro/queue"))["queued"]] == ["three"]
    assert await client.call("shiro/queue/clear") == {"cleared": 1}
    assert (await third)["stopReason"] == "queue-cleared"
    second_gate.release()
    two = await second
    assert two["stopReason"] == "done" and text_of(client.events(two["taskId"])) == "second"
    assert len(model_bodies(fake)) == 2


async def test_no_key_and_no_local_url_fails_at_once_saying_how(
    workspace: Path, home: Path, fake: FakeOpenAI
) -> None:
    from lsp_client import SERVER_COMMAND, initialize, make_client

    client = make_client()
    env_free = {"home": str(home), "baseUrl": "https://api.example.com/v1"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    await client.start_io(*SERVER_COMMAND, env=env)
    try:
        await initialize(client, workspace, **env_free)
        result = await client.call("shiro/chat", {"text": "hi"})
    finally:
        await client.shutdown_session()
        await client.stop()
    assert result["stopReason"] == "error" and "API key" in result["error"]


async def test_bad_chat_params_are_invalid_params(client: ShiroClient) -> None:
    with pytest.raises(JsonRpcException) as caught:
        await client.call("shiro/chat", {"text": ""})
    assert caught.value.code == -32602


async def test_cancel_between_two_calls_answers_every_call(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    client.decisions = ["once"]
    (workspace / "a.txt").write_text("a\n")
    fake.script += [
        Step(
            ToolCall("read_file", {"path": "a.txt"}, call_id="c_read"),
            ToolCall("bash", {"command": "touch started; sleep 60"}, call_id="c_bash"),
        ),
        Step(Text("after")),
    ]
    result = await chat_then_cancel(client, "two calls", lambda: (workspace / "started").exists())
    assert result["stopReason"] == "cancelled"
    follow_up = await client.call("shiro/chat", {"text": "go on"})
    assert follow_up["stopReason"] == "done"  # the fake rejects (400) a call left without its output
    last = json.dumps(model_bodies(fake)[-1])
    assert "c_read" in last and "c_bash" in last and "cancelled the turn" in last


def running(argv: list[str]) -> bool:
    """Whether a live process has exactly this command line (a zombie's is empty)."""
    wanted = "\0".join(argv).encode() + b"\0"
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if cmdline.read_bytes() == wanted:
                return True
        except OSError:  # the process ended while the scan ran
            continue
    return False
