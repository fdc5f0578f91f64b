"""Local models as they really behave, through the real server over stdio.

The scripted model answers the way llama.cpp's llama-server did with Qwen2.5-Coder (recorded in
tests/fixtures/realmodel/): verbatim replays of its SSE streams, and scripted steps in its chunk
dialect, with tool calls written as text.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from lsprotocol import types

from chat_helpers import model_bodies, system_prompt_of, task_list_of, text_of, tool_names_of, types_of
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall, Usage
from fakes.fixtures import options
from fakes.local_servers import LLAMACPP_MODEL, OLLAMA_NO_TOOLS_MODEL, serve
from fakes.recorded import exchange
from lsp_client import ShiroClient, start_server

pytest_plugins = ["fakes.fixtures"]


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI) -> dict[str, object]:
    serve(fake, "llamacpp")
    fake.chat_dialect = "llamacpp"
    return options(home, fake, apiKey=None, model=LLAMACPP_MODEL, approvalTimeoutMs=3000)


def call_text(name: str, arguments: dict[str, object], form: str = "fenced") -> str:
    body = json.dumps({"name": name, "arguments": arguments}, indent=2)
    if form == "fenced":
        return f"```json\n{body}\n```"
    if form == "hermes":
        return f"<tool_call>\n{body}\n</tool_call>"
    return body


def tool_messages(body: dict[str, object]) -> list[dict[str, object]]:
    return [m for m in body["messages"] if m["role"] == "tool"]  # type: ignore[index,union-attr]


async def test_a_recorded_fenced_call_runs_as_a_real_tool_call(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("launch code: 7731\n")
    recorded = exchange("1.5b", 2)  # ```json {"name": "read_file", ...} ```, as llama-server streamed it
    fake.script += [recorded.reply, Step(Text("The launch code is 7731.", chunks=5), usage=Usage(3300, 9))]
    result = await client.call("shiro/chat", {"text": recorded.prompt})
    assert result["stopReason"] == "done"
    events = client.events(result["taskId"])
    assert text_of(events) == "The launch code is 7731."  # the call itself was never shown as an answer
    notice = next(e["text"] for e in events if e["type"] == "notice")
    assert "as text" in notice and "read_file" in notice
    tool_result = next(e for e in events if e["type"] == "tool-result")
    assert tool_result["name"] == "read_file" and "launch code: 7731" in tool_result["output"]
    second = model_bodies(fake)[1]
    assistant = second["messages"][-2]
    assert assistant["role"] == "assistant" and assistant["tool_calls"][0]["function"]["name"] == "read_file"
    assert "launch code: 7731" in str(tool_messages(second)[-1]["content"])


async def test_a_recorded_bare_json_todo_write_reaches_the_task_list(
    client: ShiroClient, fake: FakeOpenAI
) -> None:
    recorded = exchange("0.5b", 3)  # pretty-printed bare JSON todo_write
    fake.script += [recorded.reply, Step(Text("Planned."))]
    result = await client.call("shiro/chat", {"text": recorded.prompt})
    assert result["stopReason"] == "done"
    todos = await client.call("shiro/todos")
    assert [t["content"] for t in todos["todos"]] == [
        "Parse a --verbose flag in cli.py",
        "Print debug output when it is set",
        "Add a test",
    ]
    assert client.notifications["shiro/todos/changed"]


async def test_a_recorded_write_file_with_a_bare_list_asks_and_writes(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    client.decisions = ["once"]
    fake.script += [
        Step(Text(call_text("write_file", {"path": "hello.py", "content": "print('hello from shiro')\n"}))),
        Step(Text("Created hello.py.")),
    ]
    result = await client.call("shiro/chat", {"text": exchange("1.5b", 4).prompt})
    assert result["stopReason"] == "done"
    assert [a["toolName"] for a in client.approvals] == ["write_file"]
    assert (workspace / "hello.py").read_text() == "print('hello from shiro')\n"


async def test_a_json_code_block_the_user_asked_for_stays_text(client: ShiroClient, fake: FakeOpenAI) -> None:
    answer = '```json\n{\n  "name": "Ada Lovelace",\n  "born": 1815\n}\n```'
    fake.script.append(Step(Text(answer, chunks=8)))
    result = await client.call("shiro/chat", {"text": "Give me a JSON object for Ada Lovelace."})
    events = client.events(result["taskId"])
    assert text_of(events) == answer
    assert not [t for t in types_of(events) if t.startswith("tool")]
    assert not any(e["type"] == "notice" for e in events)
    assert len(model_bodies(fake)) == 1


async def test_a_recorded_call_to_no_such_tool_stays_text(client: ShiroClient, fake: FakeOpenAI) -> None:
    recorded = exchange("0.5b", 5)  # {"name": "read_notes.txt", ...}: not a tool
    fake.script.append(recorded.reply)
    result = await client.call("shiro/chat", {"text": recorded.prompt})
    events = client.events(result["taskId"])
    assert text_of(events) == recorded.text
    assert not [t for t in types_of(events) if t.startswith("tool")]


async def test_a_multi_step_turn_read_edit_answer(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "greet.py").write_text("def greet():\n    return 'helo'\n")
    client.decisions = ["once"]
    edit = {"path": "greet.py", "oldString": "'helo'", "newString": "'hello'"}
    fake.script += [
        Step(Text(call_text("read_file", {"path": "greet.py"}, "bare"), chunks=12), usage=Usage(3200, 30)),
        Step(Text(call_text("edit_file", edit, "hermes"), chunks=12), usage=Usage(3300, 40)),
        Step(Text("Fixed the typo in `greet.py`.", chunks=4), usage=Usage(3400, 8)),
    ]
    result = await client.call("shiro/chat", {"text": "Fix the typo in greet.py"})
    assert result["stopReason"] == "done"
    assert (workspace / "greet.py").read_text() == "def greet():\n    return 'hello'\n"
    events = client.events(result["taskId"])
    assert [e["name"] for e in events if e["type"] == "tool-result"] == ["read_file", "edit_file"]
    assert text_of(events) == "Fixed the typo in `greet.py`."
    bodies = model_bodies(fake)
    assert len(bodies) == 3
    assert [len(tool_messages(b)) for b in bodies] == [0, 1, 2]
    assert "'helo'" in str(tool_messages(bodies[1])[0]["content"])


def set_format(client: ShiroClient, value: object) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"shiro": {"toolCallFormat": value}})
    )


async def test_native_format_never_parses_text(client: ShiroClient, fake: FakeOpenAI) -> None:
    set_format(client, "native")
    recorded = exchange("1.5b", 2)
    fake.script.append(recorded.reply)
    result = await client.call("shiro/chat", {"text": recorded.prompt})
    events = client.events(result["taskId"])
    assert text_of(events) == recorded.text
    assert not [t for t in types_of(events) if t.startswith("tool")]


async def test_a_call_repeated_forever_ends_the_turn_early(client: ShiroClient, fake: FakeOpenAI) -> None:
    fake.script += [Step(ToolCall("list_dir", {"path": "."}, call_id=f"c{i}")) for i in range(40)]
    client.decisions = ["once"] * 40
    result = await client.call("shiro/chat", {"text": "look around"})
    assert result["stopReason"] == "done"
    events = client.events(result["taskId"])
    notices = [e["text"] for e in events if e["type"] == "notice"]
    assert any("same list_dir call 5 times" in n for n in notices)
    bodies = model_bodies(fake)
    assert len(bodies) == 5  # well before the 50-step limit
    said = json.dumps(bodies[2]["messages"][-1])
    assert "you already made this exact list_dir call once before" in said


async def test_a_denied_call_repeated_is_not_asked_again(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    write = {"path": "x.txt", "content": "x"}
    fake.script += [Step(ToolCall("write_file", write, call_id=f"w{i}")) for i in range(8)]
    client.decisions = ["deny"] * 8
    result = await client.call("shiro/chat", {"text": "write x"})
    assert result["stopReason"] == "done"
    assert len(client.approvals) == 1
    bodies = model_bodies(fake)
    assert len(bodies) == 5
    assert "User denied this tool call." in json.dumps(bodies[1]["messages"][-1])
    assert "already refused earlier in this turn" in json.dumps(bodies[2]["messages"][-1])
    denied = [e for e in client.events(result["taskId"]) if e["type"] == "tool-denied"]
    assert all(e["reason"] for e in denied)
    assert not (workspace / "x.txt").exists()


async def test_every_step_sends_max_tokens_within_the_window(client: ShiroClient, fake: FakeOpenAI) -> None:
    fake.script += [Step(ToolCall("list_dir", {"path": "."}, call_id="c1")), Step(Text("ok"))]
    await client.call("shiro/chat", {"text": "look"})
    bodies = model_bodies(fake)
    assert len(bodies) == 2
    for body in bodies:
        assert 256 <= body["max_tokens"] <= 8192  # llama.cpp's /props says the window is 8192


async def test_git_tools_are_offered_only_in_a_repository(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    client.workspace_did_change_configuration(  # a small window offers no git tools at all
        types.DidChangeConfigurationParams(settings={"shiro": {"contextWindow": 65_536}})
    )
    fake.script += [Step(Text("a")), Step(Text("b"))]
    await client.call("shiro/chat", {"text": "one"})
    (workspace / ".git").mkdir()
    await client.call("shiro/chat", {"text": "two"})
    first, second = (tool_names_of(b) for b in model_bodies(fake))
    assert not [n for n in first if n.startswith("git_")]
    assert "git_status" in second and "git_diff" in second


async def test_a_todo_write_step_keeps_the_prompt_prefix_byte_identical(
    client: ShiroClient, fake: FakeOpenAI
) -> None:
    plan = {
        "todos": [
            {"content": "read cli.py", "status": "in_progress"},
            {"content": "add flag", "status": "pending"},
        ]
    }
    done = {
        "todos": [
            {"content": "read cli.py", "status": "done"},
            {"content": "add flag", "status": "in_progress"},
        ]
    }
    fake.script += [
        Step(Text(call_text("todo_write", plan))),
        Step(Text(call_text("todo_write", done, "bare"))),
        Step(Text("Planned.")),
    ]
    await client.call("shiro/chat", {"text": exchange("1.5b", 3).prompt})
    bodies = model_bodies(fake)
    assert len(bodies) == 3
    # What a chat template renders first (system message, then the tool schemas) never changes ...
    assert len({json.dumps(b["messages"][0]) for b in bodies}) == 1
    assert len({json.dumps(b["tools"]) for b in bodies}) == 1
    # ... and each request's conversation, up to its trailing task list, starts the next one byte for byte.
    for before, after in itertools.pairwise(bodies):
        kept = before["messages"][:-1] if task_list_of(before) else before["messages"]
        assert json.dumps(after["messages"][: len(kept)]) == json.dumps(kept)
    assert task_list_of(bodies[1]).endswith("[~] read cli.py\n[ ] add flag")
    assert task_list_of(bodies[2]).endswith("[x] read cli.py\n[~] add flag")
    assert "Your task list" not in bodies[2]["messages"][0]["content"]


async def test_a_small_window_gets_the_compact_prompt(client: ShiroClient, fake: FakeOpenAI) -> None:
    fake.script.append(Step(Text("Paris")))
    await client.call("shiro/chat", {"text": exchange("1.5b", 1).prompt})
    (body,) = model_bodies(fake)
    recorded = exchange("1.5b", 1).request
    sent_size = len(body["messages"][0]["content"]) + len(json.dumps(body["tools"]))
    recorded_size = len(recorded["messages"][0]["content"]) + len(json.dumps(recorded["tools"]))
    assert sent_size * 2 < recorded_size  # the ~3,260-token prompt of the recording, less than halved
    assert "multi_edit" not in tool_names_of(body) and "read_file" in tool_names_of(body)
    assert "edit_file" not in tool_names_of(body)  # until it makes a native call, it writes files out
    meter = client.notifications["shiro/context/changed"][-1]
    assert meter["threshold"] == 6144  # 3/4 of the 8,192-token window llama.cpp's /props reports


def not_shown_whole(workspace: Path) -> None:
    """A file too big for a small model's workspace view, so that it is offered (or told of) its tools."""
    (workspace / "big.log.txt").write_text("padding\n" * 20_000)  # over half of a 32k window


async def test_the_text_format_describes_the_tools_and_runs_calls_written_after_prose(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("launch code: 7731\n")
    not_shown_whole(workspace)  # else a small model is sent no tools at all
    set_format(client, {"qwen2.5-coder-*": "text", "gpt-*": "native"})  # per model, by glob
    reply = 'Let me read it.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n</tool_call>'
    fake.script += [Step(Text(reply, chunks=9)), Step(Text("The launch code is 7731.", chunks=3))]
    result = await client.call("shiro/chat", {"text": "What is the launch code in notes.txt?"})
    assert result["stopReason"] == "done"
    events = client.events(result["taskId"])
    # the prose is shown, the call is not, and nothing is announced: this format asked for text calls
    assert text_of(events) == "Let me read it.\nThe launch code is 7731."
    assert not any(e["type"] == "notice" for e in events)
    assert "launch code: 7731" in next(e["output"] for e in events if e["type"] == "tool-result")
    first, second = model_bodies(fake)
    assert "tools" not in first and "tools" not in second
    system = system_prompt_of(first)
    assert "<tools>" in system and '"name": "read_file"' in system and "<tool_call>" in system
    assert system_prompt_of(second) == system
    assert not [m for m in second["messages"] if m["role"] in ("tool",) or m.get("tool_calls")]
    said = [m for m in second["messages"] if m["role"] == "assistant"][-1]["content"]
    assert said.startswith("Let me read it.\n<tool_call>\n") and '"path": "notes.txt"' in said
    answered = [m for m in second["messages"] if m["role"] == "user"][-1]["content"]
    assert '<tool_response name="read_file">' in answered and "launch code: 7731" in answered


async def test_the_text_format_leaves_prose_with_a_stray_tag_as_text(
    client: ShiroClient, fake: FakeOpenAI
) -> None:
    set_format(client, "text")
    answer = (
        "Qwen's template wraps calls in <tool_call> tags, like this: <tool_call>...</tool_call> and so on."
    )
    fake.script.append(Step(Text(answer, chunks=6)))
    result = await client.call("shiro/chat", {"text": "How does Qwen format tool calls?"})
    events = client.events(result["taskId"])
    assert text_of(events) == answer
    assert not [t for t in types_of(events) if t.startswith("tool")]
    assert len(model_bodies(fake)) == 1


async def test_a_server_that_refuses_native_tools_gets_the_text_format_from_then_on(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("launch code: 7731\n")
    not_shown_whole(workspace)  # else a small model is sent no tools at all
    fake.no_native_tools = {LLAMACPP_MODEL}  # as Ollama answers for a model with no tool template
    call = '<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n</tool_call>'
    fake.script += [Step(Text(call)), Step(Text("7731.")), Step(Text("Still here."))]
    result = await client.call("shiro/chat", {"text": "What is the launch code in notes.txt?"})
    assert result["stopReason"] == "done"
    events = client.events(result["taskId"])
    notice = next(e["text"] for e in events if e["type"] == "notice")
    assert "cannot take native tool calls" in notice and 'toolCallFormat "text"' in notice
    assert [e["name"] for e in events if e["type"] == "tool-result"] == ["read_file"]
    assert text_of(events) == "7731."
    await client.call("shiro/chat", {"text": "and now?"})
    refused, *rest = [r for r in fake.requests if r["path"].endswith("/chat/completions")]
    assert refused["body"].get("tools")  # the one request that was refused
    assert len(rest) == 3 and not any(r["body"].get("tools") for r in rest)  # the next turn too
    assert "<tools>" in system_prompt_of(rest[-1]["body"])


async def test_ollama_says_which_models_cannot_take_tools_before_any_request_fails(
    home: Path, fake: FakeOpenAI, workspace: Path
) -> None:
    serve(fake, "ollama")
    fake.chat_dialect = "openai"
    fake.script.append(Step(Text("Hello.")))
    ollama = await start_server(
        workspace, home=str(home), baseUrl=fake.base_url, api="chat", model=OLLAMA_NO_TOOLS_MODEL
    )
    try:
        result = await ollama.call("shiro/chat", {"text": "hi"})
        assert result["stopReason"] == "done"
        (body,) = model_bodies(fake)
        assert "tools" not in body and "<tools>" in system_prompt_of(body)
        meter = ollama.notifications["shiro/context/changed"][-1]
        assert meter["threshold"] == 6144  # 3/4 of the num_ctx 8192 its Modelfile sets
    finally:
        await ollama.shutdown_session()


async def test_cached_prompt_tokens_add_up_over_the_session_and_survive_a_resume(
    init_options: dict[str, object], fake: FakeOpenAI, workspace: Path
) -> None:
    fake.script += [
        Step(ToolCall("list_dir", {"path": "."}, call_id="c1"), usage=Usage(3000, 20, cached_tokens=2800)),
        Step(Text("Two files."), usage=Usage(3100, 5, cached_tokens=3000)),
    ]
    first = await start_server(workspace, **init_options)
    try:
        first.decisions = ["once"]
        result = await first.call("shiro/chat", {"text": "what is here?"})
        assert result["usage"]["cachedTokens"] == 5800  # both steps, not only the last request
        current = await first.call("shiro/session/current", {})
        assert (current["inputTokens"], current["cachedTokens"]) == (6100, 5800)
        await first.call("shiro/session/save", {})
        (listed,) = (await first.call("shiro/session/list", {}))["sessions"]
        assert listed["id"] == current["id"] and "cachedTokens" not in listed  # listings come from the index
    finally:
        await first.shutdown_session()
    again = await start_server(workspace, **init_options)
    try:
        resumed = await again.call("shiro/session/resume", {"id": current["id"]})
        assert resumed["session"]["cachedTokens"] == 5800
    finally:
        await again.shutdown_session()
