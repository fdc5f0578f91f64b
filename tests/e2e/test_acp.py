"""`shiro-lsp acp`: the ACP front door, driven over stdio by the agent-client-protocol SDK's own client
against the scripted model (and, for session/load, a session written through the LSP by pytest-lsp)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.core import ClientSideConnection
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    ClientCapabilities,
    DeniedOutcome,
    EmbeddedResourceContentBlock,
    FileEditToolCallContent,
    Implementation,
    McpServerStdio,
    PermissionOption,
    RequestPermissionResponse,
    ResourceContentBlock,
    SseMcpServer,
    TextResourceContents,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UserMessageChunk,
)

from chat_helpers import eventually, model_bodies, sent, tool_names_of
from fakes.fake_openai import FakeOpenAI, HttpError, Reasoning, Step, Text, ToolCall, Usage, WaitForRelease
from lsp_client import start_server
from shiro_lsp.errors import CONFLICT, MODEL_ERROR, NOT_FOUND

pytest_plugins = ["fakes.fixtures"]

MCP_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_servers.py"


class Editor:
    """An ACP client: records every session/update and answers permission requests from a script.

    An answer is an option id, ``"cancelled"``, or ``"error"`` (the client answers with a JSON-RPC
    error); with no answer left the request is left hanging (a person who does not answer)."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.permissions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []
        self.answers: list[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        if not self.answers:
            await asyncio.Event().wait()
        answer = self.answers.pop(0)
        if answer == "error":
            raise RequestError(-32603, "the editor failed")
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    def of(self, kind: type[Any], session_id: str | None = None) -> list[Any]:
        return [u for s, u in self.updates if isinstance(u, kind) and session_id in (None, s)]

    def text(self) -> str:
        return "".join(u.content.text for u in self.of(AgentMessageChunk))

    def calls(self, call_id: str) -> list[ToolCallStart | ToolCallProgress]:
        return [u for u in self.of(ToolCallStart) + self.of(ToolCallProgress) if u.tool_call_id == call_id]

    def statuses(self, call_id: str) -> list[str]:
        ordered = [u for _, u in self.updates if u in self.calls(call_id)]
        return [u.status for u in ordered if u.status is not None]


# `workspace` and `home` are tests/e2e/conftest.py's.


@pytest.fixture
def editor() -> Editor:
    return Editor()


@asynccontextmanager
async def acp_agent(fake: FakeOpenAI, home: Path, editor: Editor) -> AsyncIterator[ClientSideConnection]:
    env = {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "sk-test", "SHIRO_MODEL": "gpt-5"}
    async with spawn_agent_process(
        editor,
        sys.executable,
        "-m",
        "shiro_lsp",
        "acp",
        "--home",
        str(home),
        env=env,
        # the server's log goes to the test's stderr; a busy machine may need more than the SDK's 2 s
        # to exit after stdin closes (its spawner then races a terminate against the exit)
        transport_kwargs={"stderr": None, "shutdown_timeout": 30.0},
    ) as (conn, _process):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="pytest", version="1"),
        )
        yield conn


async def new_session(conn: ClientSideConnection, workspace: Path) -> str:
    return (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id


async def prompt(conn: ClientSideConnection, session_id: str, text: str) -> str:
    response = await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=[text_block(text)]), 60)
    return response.stop_reason


async def test_an_embedded_env_resource_never_reaches_the_model_and_the_editor_is_told(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor, tmp_path: Path
) -> None:
    env = workspace / ".env"
    env.write_text("DB_PASS=zq7-hunter2-9f4e\nPLAIN=blue-horse-battery\n")
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("OUTSIDE-CONTENT-5521\n")
    (workspace / "app.py").write_text("print('kept-content')\n")
    fake.script.append(Step(Text("ok")))
    blocks = [
        text_block("what is configured?"),
        EmbeddedResourceContentBlock(
            type="resource", resource=TextResourceContents(uri=env.as_uri(), text=env.read_text())
        ),
        EmbeddedResourceContentBlock(
            type="resource", resource=TextResourceContents(uri=outside.as_uri(), text=outside.read_text())
        ),
        ResourceContentBlock(type="resource_link", name=".env", uri=env.as_uri()),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(
                uri=(workspace / "app.py").as_uri(), text="print('kept-content')\n"
            ),
        ),
    ]
    async with acp_agent(fake, home, editor) as conn:
        session_id = await new_session(conn, workspace)
        response = await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=blocks), 60)
    assert response.stop_reason == "end_turn"
    body = sent(fake)
    for value in ("zq7-hunter2-9f4e", "blue-horse-battery", "OUTSIDE-CONTENT-5521"):
        assert value not in body
    assert "kept-content" in body and "what is configured?" in body
    told = editor.text()
    assert ".env is a secrets file" in told and "is outside the workspace folders" in told


async def test_initialize_says_sessions_load_and_prompts_take_files(
    fake: FakeOpenAI, home: Path, editor: Editor
) -> None:
    env = {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "sk-test"}
    async with spawn_agent_process(
        editor, sys.executable, "-m", "shiro_lsp", "acp", "--home", str(home), env=env
    ) as (conn, _):
        response = await conn.initialize(protocol_version=PROTOCOL_VERSION)
    assert response.protocol_version == PROTOCOL_VERSION
    capabilities = response.agent_capabilities
    assert capabilities is not None and capabilities.load_session is True
    assert capabilities.prompt_capabilities is not None
    assert capabilities.prompt_capabilities.embedded_context is True
    assert capabilities.prompt_capabilities.image is True
    assert capabilities.mcp_capabilities is not None and capabilities.mcp_capabilities.http is True
    assert (
        capabilities.session_capabilities is not None and capabilities.session_capabilities.list is not None
    )
    assert capabilities.session_capabilities.additional_directories is not None
    assert response.agent_info is not None and response.agent_info.name == "shiro"


async def test_a_prompt_streams_thoughts_and_text_then_ends_the_turn(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor
) -> None:
    fake.script.append(
        Step(
            Reasoning("thinking it over", chunks=2),
            Text("Hello from the model", chunks=5),
            usage=Usage(10, 5),
        )
    )
    async with acp_agent(fake, home, editor) as conn:
        session_id = await new_session(conn, workspace)
        assert await prompt(conn, session_id, "say hello") == "end_turn"
    assert editor.text() == "Hello from the model"
    assert len(editor.of(AgentMessageChunk)) >= 2  # streamed, not one block at the end
    assert "".join(u.content.text for u in editor.of(AgentThoughtChunk)) == "thinking it over"
    assert {s for s, _ in editor.updates} == {session_id}
    assert "say hello" in sent(fake)
    # someone can answer approvals here, so the tools that ask are offered (headless hides them)
    assert {"write_file", "bash"} <= set(tool_names_of(model_bodies(fake)[0]))


async def test_a_read_file_call_reports_pending_in_progress_and_completed(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor
) -> None:
    (workspace / "notes.txt").write_text("the answer is 42\n")
    fake.script += [
        Step(ToolCall("read_file", {"path": "notes.txt"}, call_id="call_1")),
        Step(Text("It says 42.")),
    ]
    async with acp_agent(fake, home, editor) as conn:
        session_id = await new_session(conn, workspace)
        assert await prompt(conn, session_id, "read notes.txt") == "end_turn"
    assert editor.statuses("call_1") == ["pending", "in_progress", "completed"]
    start, *updates = editor.calls("call_1")
    assert isinstance(start, ToolCallStart) and start.kind == "read"
    called = updates[0]
    assert called.raw_input == {"path": "notes.txt"} and called.title == "read_file notes.txt"
    assert called.locations is not None and called.locations[0].path == str(workspace / "notes.txt")
    assert "the answer is 42" in updates[-1].content[0].content.text
    assert editor.permissions == []  # reading asks no one
    assert editor.text() == "It says 42."


async def test_an_allowed_write_asks_with_the_diff_then_writes(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor
) -> None:
    fake.script += [
        Step(ToolCall("write_file", {"path": "hello.txt", "content": "hi there\n"}, call_id="w1")),
        Step(Text("written")),
    ]
    editor.answers = ["once"]
    async with acp_agent(fake, home, editor) as conn:
        session_id = await new_session(conn, workspace)
        assert await prompt(conn, session_id, "write hello.txt") == "end_turn"
    assert (workspace / "hello.txt").read_text() == "hi there\n"
    [(tool_call, options)] = editor.permissions
    assert tool_call.tool_call_id == "w1" and tool_call.status == "pending"
    assert {o.kind for o in options} == {"allow_once", "allow_always", "reject_once"}
    [diff] = [c for c in tool_call.content or [] if isinstance(c, FileEditToolCallContent)]
    assert (
        diff.path == str(workspace / "hello.txt") and diff.new_text == "hi there\n" and diff.old_text is None
    )
    assert editor.statuses("w1") == ["pending", "in_progress", "in_progress", "completed"]


async def test_a_rejected_write_leaves_the_file_untouched_and_the_model_hears_it(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor
) -> None:
    (workspace / "keep.txt").write_text("original\n")
    fake.script += [
        Step(ToolCall("write_file", {"path": "keep.txt", "content": "overwritten\n"}, call_id="w1")),
        Step(Text("ok, I left it")),
    ]
    editor.answers = ["deny"]
    async with acp_agent(fake, home, editor) as conn:
        session_id = await new_session(conn, workspace)
        assert await prompt(conn, session_id, "overwrite keep.txt") == "end_turn"
    assert (workspace / "keep.txt").read_text() == "original\n"
    assert editor.statuses("w1")[-1] == "failed"
    [tool_call, _] = editor.permissions[0]
    [diff] = [c for c in tool_call.content or [] if isinstance(c, FileEditToolCallContent)]
    assert diff.old_text == "original\n" and diff.new_text == "overwritten\n"
    assert "denied" in json.dumps(model_bodies(fake)[-1]).lower()


@pytest.mark.parametrize("answer", ["error", "cancelled", "allow_everything"])
async def test_an_error_a_cancel_or_an_unknown_answer_is_a_deny(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor, answer: str
) -> None:
    fake.script += [
        Step(ToolCall("bash", {"command": "touch ran.txt"}, call_id="b1")),
        Step(Text("did not run")),
    ]
    editor.answers = [answer]
    async with acp_agent(fake, home, editor) as conn:
        session_id = await new_session(conn, workspace)
        assert await prompt(conn, session_id, "run it") == "end_turn"
    assert len(editor.permissions) == 1
    assert not (workspace / "ran.txt").exists()
    assert editor.statuses("b1")[-1] == "failed"


async def test_a_disconnect_while_asking_denies_and_the_turn_is_saved(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor
) -> None:
    fake.script += [
        Step(ToolCall("bash", {"command": "touch ran.txt"}, call_id="b1")),
        Step(Text("never asked again")),
    ]
    async with acp_agent(fake, home, editor) as conn:
        session_id = await new_session(conn, workspace)
        task = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=[text_block("run it")]))
        await eventually(lambda: bool(editor.permissions))
    task.cancel()  # the editor went away with the question open (no answer)
    assert not (workspace / "ran.txt").exists()
    saved = home / "sessions" / f"{session_id}.json"
    await eventually(saved.exists)
    assert "run it" in saved.read_text()


async def test_cancel_mid_turn_stops_it_and_the_prompt_answers_cancelled(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor
) -> None:
    gate = fake.gate("hold")
    fake.script.append(Step(Text("partial answer"), WaitForRelease(gate), Text(" never sent")))
    async with acp_agent(fake, home, editor) as conn:
        session_id = await new_session(conn, workspace)
        task = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=[text_block("go")]))
        await eventually(lambda: editor.text() == "partial answer")
        await conn.cancel(session_id=session_id)
        response = await asyncio.wait_for(task, 30)
        gate.release()
        assert response.stop_reason == "cancelled"
        fake.script.append(Step(Text("next answer")))
        assert await prompt(conn, session_id, "and now?") == "end_turn"
    assert editor.text() == "partial answer" + "next answer"
    assert "partial answer" in json.dumps(model_bodies(fake)[-1])  # the partial answer stays in history


async def test_todo_write_becomes_plan_entries(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor
) -> None:
    todos = [
        {"content": "Read the code", "status": "done"},
        {"content": "Fix the bug", "status": "in_progress"},
        {"content": "Ask for the key", "status": "blocked", "note": "no access"},
        {"content": "Write a test", "status": "pending"},
    ]
    fake.script += [Step(ToolCall("todo_write", {"todos": todos}, call_id="t1")), Step(Text("planned"))]
    async with acp_agent(fake, home, editor) as conn:
        session_id = await new_session(conn, workspace)
        assert await prompt(conn, session_id, "plan it") == "end_turn"
    plan = editor.of(AgentPlanUpdate)[-1]
    assert [(e.content, e.status) for e in plan.entries] == [
        ("Read the code", "completed"),
        ("Fix the bug", "in_progress"),
        ("Ask for the key (blocked: no access)", "pending"),
        ("Write a test", "pending"),
    ]
    assert editor.statuses("t1")[-1] == "completed"


async def test_a_session_started_through_the_lsp_loads_with_its_history_replayed(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor
) -> None:
    (workspace / "notes.txt").write_text("the answer is 42\n")
    fake.script += [
        Step(
            Reasoning("look at the file"),
            ToolCall("read_file", {"path": "notes.txt"}, call_id="call_lsp"),
        ),
        Step(ToolCall("todo_write", {"todos": [{"content": "Report", "status": "in_progress"}]})),
        Step(Text("The file says 42.")),
    ]
    lsp = await start_server(
        workspace, home=str(home), apiKey="sk-test", baseUrl=fake.base_url, model="gpt-5", maxRetries=0
    )
    result = await lsp.call("shiro/chat", {"text": "what does notes.txt say?"})
    assert result["stopReason"] == "done"
    session_id = result["sessionId"]
    await lsp.shutdown_session()  # the editor closes; the session is saved and its lock released

    fake.script.append(Step(Text("You asked about notes.txt.")))
    async with acp_agent(fake, home, editor) as conn:
        listed = (await conn.list_sessions(cwd=str(workspace))).sessions
        assert [(s.session_id, s.title) for s in listed] == [(session_id, "what does notes.txt say?")]
        assert listed[0].cwd == str(workspace) and listed[0].updated_at
        assert [
            s.session_id for s in (await conn.list_sessions(cwd=str(workspace / "elsewhere"))).sessions
        ] == []
        await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        replayed = [(s, u) for s, u in editor.updates if not isinstance(u, AvailableCommandsUpdate)]
        assert [c.name for c in editor.of(AvailableCommandsUpdate)[0].available_commands] == ["init"]
        assert await prompt(conn, session_id, "what did I ask?") == "end_turn"

    assert {s for s, _ in replayed} == {session_id}
    kinds = [type(u).__name__ for _, u in replayed]
    assert kinds[0] == "UserMessageChunk" and replayed[0][1].content.text == "what does notes.txt say?"
    assert isinstance(replayed[-1][1], AgentPlanUpdate)
    assert [(e.content, e.status) for e in replayed[-1][1].entries] == [("Report", "in_progress")]
    thoughts = [u.content.text for _, u in replayed if isinstance(u, AgentThoughtChunk)]
    assert thoughts == ["look at the file"]
    [start] = [u for _, u in replayed if isinstance(u, ToolCallStart) and u.tool_call_id == "call_lsp"]
    assert start.raw_input == {"path": "notes.txt"} and start.kind == "read"
    [done] = [u for _, u in replayed if isinstance(u, ToolCallProgress) and u.tool_call_id == "call_lsp"]
    assert done.status == "completed" and "the answer is 42" in done.content[0].content.text
    answer = [u.content.text for _, u in replayed if isinstance(u, AgentMessageChunk)]
    assert answer == ["The file says 42."]
    assert not any(
        isinstance(u, UserMessageChunk) and "what did I ask" in u.content.text for _, u in replayed
    )
    # the next prompt continues that history
    assert "what does notes.txt say?" in json.dumps(model_bodies(fake)[-1])
    assert editor.text().endswith("You asked about notes.txt.")


async def test_unknown_sessions_and_bad_folders_get_clear_errors(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor
) -> None:
    async with acp_agent(fake, home, editor) as conn:
        with pytest.raises(RequestError) as prompted:
            await conn.prompt(session_id="no-such-session", prompt=[text_block("hi")])
        assert prompted.value.code == NOT_FOUND
        assert 'No session "no-such-session" is open here' in str(prompted.value)
        with pytest.raises(RequestError) as loaded:
            await conn.load_session(cwd=str(workspace), session_id="0190abcd-dead-beef", mcp_servers=[])
        assert "0190abcd-dead-beef" in str(loaded.value) and loaded.value.code == NOT_FOUND
        with pytest.raises(RequestError) as folder:
            await conn.new_session(cwd="relative/path", mcp_servers=[])
        assert "absolute path of a folder" in str(folder.value)
        # and the agent still works afterwards
        fake.script.append(Step(Text("still here")))
        session_id = await new_session(conn, workspace)
        assert await prompt(conn, session_id, "hello?") == "end_turn"
    assert editor.text() == "still here"
    assert fake.requests  # the model was reached only by the good prompt
    assert len(model_bodies(fake)) == 1


async def test_a_failed_turn_is_the_prompts_error_in_words(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor
) -> None:
    fake.script.append(HttpError.invalid_api_key())
    async with acp_agent(fake, home, editor) as conn:
        session_id = await new_session(conn, workspace)
        with pytest.raises(RequestError) as failed:
            await conn.prompt(session_id=session_id, prompt=[text_block("hi")])
        assert failed.value.code == MODEL_ERROR and "API key" in str(failed.value)
        fake.script.append(Step(Text("fine now")))
        assert await prompt(conn, session_id, "again") == "end_turn"  # the session goes on
    assert editor.text() == "fine now"


async def test_a_session_still_open_in_vs_code_is_refused_and_left_alone(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor
) -> None:
    fake.script.append(Step(Text("hello from VS Code")))
    lsp = await start_server(
        workspace, home=str(home), apiKey="sk-test", baseUrl=fake.base_url, model="gpt-5"
    )
    try:
        result = await lsp.call("shiro/chat", {"text": "first"})
        await lsp.call("shiro/session/save")
        saved = (home / "sessions" / f"{result['sessionId']}.json").read_bytes()
        async with acp_agent(fake, home, editor) as conn:
            with pytest.raises(RequestError) as refused:
                await conn.load_session(cwd=str(workspace), session_id=result["sessionId"], mcp_servers=[])
        assert refused.value.code == CONFLICT and "open in another Shiro window" in str(refused.value)
        assert editor.updates == []
        assert (home / "sessions" / f"{result['sessionId']}.json").read_bytes() == saved
    finally:
        await lsp.shutdown_session()


async def test_the_editors_mcp_servers_are_offered_and_each_call_asks(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor
) -> None:
    kit = McpServerStdio(name="kit", command=sys.executable, args=[str(MCP_SERVER), "stdio"], env=[])
    old = SseMcpServer(name="old", type="sse", url="http://127.0.0.1:9/sse", headers=[])
    fake.script += [
        Step(ToolCall("mcp__kit__echo", {"text": "hi there"}, call_id="m1")),
        Step(Text("echoed")),
    ]
    editor.answers = ["once"]
    async with acp_agent(fake, home, editor) as conn:
        session_id = (await conn.new_session(cwd=str(workspace), mcp_servers=[kit, old])).session_id
        assert await prompt(conn, session_id, "echo it") == "end_turn"
    first, second = model_bodies(fake)
    assert "mcp__kit__echo" in tool_names_of(first)
    [(tool_call, _)] = editor.permissions
    assert tool_call.tool_call_id == "m1"
    assert [m["content"] for m in second["messages"] if m.get("role") == "tool"] == ["HI THERE"]
    assert editor.statuses("m1")[-1] == "completed"
    assert 'MCP server "old"' in editor.text() and '"sse"' in editor.text()  # said in words, not dropped


async def test_cancel_while_asking_stops_the_turn_and_runs_nothing(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor
) -> None:
    fake.script += [Step(ToolCall("write_file", {"path": "x.txt", "content": "x"}, call_id="w1"))]
    async with acp_agent(fake, home, editor) as conn:
        session_id = await new_session(conn, workspace)
        task = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=[text_block("write x")]))
        await eventually(lambda: bool(editor.permissions))  # the question is open, nobody answers
        await conn.cancel(session_id=session_id)
        response = await asyncio.wait_for(task, 30)
    assert response.stop_reason == "cancelled"
    assert not (workspace / "x.txt").exists()
    assert len(model_bodies(fake)) == 1  # the turn did not go on


async def test_sigterm_right_after_a_turn_still_saves_it(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor
) -> None:
    fake.script.append(Step(Text("remember this answer")))
    env = {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "sk-test", "SHIRO_MODEL": "gpt-5"}
    command = (sys.executable, "-m", "shiro_lsp", "acp", "--home", str(home))
    transport = {"stderr": None, "shutdown_timeout": 30.0}
    async with spawn_agent_process(editor, *command, env=env, transport_kwargs=transport) as (conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session_id = await new_session(conn, workspace)
        assert await prompt(conn, session_id, "a turn worth keeping") == "end_turn"
        process.terminate()  # before the debounced autosave is due
        assert await asyncio.wait_for(process.wait(), 30) == 0
    saved = (home / "sessions" / f"{session_id}.json").read_text()
    assert "a turn worth keeping" in saved and "remember this answer" in saved


async def test_additional_directories_are_visible_to_the_tools_and_nothing_else_is(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor, tmp_path: Path
) -> None:
    lib, outside = tmp_path / "lib", tmp_path / "outside"
    lib.mkdir()
    outside.mkdir()
    (lib / "util.txt").write_text("shared helper\n")
    (outside / "secret.txt").write_text("not yours\n")
    fake.script += [
        Step(
            ToolCall("read_file", {"path": "lib/util.txt"}, call_id="in_lib"),
            ToolCall("read_file", {"path": str(outside / "secret.txt")}, call_id="escape"),
        ),
        Step(Text("read")),
    ]
    async with acp_agent(fake, home, editor) as conn:
        created = await conn.new_session(
            cwd=str(workspace), additional_directories=[str(lib)], mcp_servers=[]
        )
        assert await prompt(conn, created.session_id, "read them") == "end_turn"
        with pytest.raises(RequestError) as bad:
            await conn.new_session(cwd=str(workspace), additional_directories=["lib"], mcp_servers=[])
        assert "additionalDirectories must be the absolute path of a folder" in str(bad.value)
    assert editor.statuses("in_lib")[-1] == "completed"
    assert "shared helper" in editor.calls("in_lib")[-1].content[0].content.text
    assert editor.statuses("escape")[-1] == "failed"
    assert "not yours" not in json.dumps(model_bodies(fake)[-1])
    saved = json.loads((home / "sessions" / f"{created.session_id}.json").read_text())
    assert saved["cwd"] == str(workspace)  # the session's root is cwd


async def test_available_commands_offer_init_and_the_custom_commands_and_a_prompt_runs_one(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor
) -> None:
    commands = workspace / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "explain.md").write_text(
        "---\ndescription: Explain a module\nargument-hint: <path>\n---\nExplain $1 to a newcomer."
    )
    (commands / "compact.md").write_text("A repository's compact never replaces the built-in.")
    fake.script.append(Step(Text("explained")))
    async with acp_agent(fake, home, editor) as conn:
        session_id = await new_session(conn, workspace)
        await eventually(lambda: bool(editor.of(AvailableCommandsUpdate)))
        assert await prompt(conn, session_id, "/explain src/ledger.py") == "end_turn"
    offered = {c.name: c for c in editor.of(AvailableCommandsUpdate)[0].available_commands}
    assert set(offered) == {"init", "explain"}
    assert offered["explain"].description == "Explain a module (.claude/commands/explain.md)"
    assert offered["explain"].input is not None and offered["explain"].input.root.hint == "<path>"
    assert "Explain src/ledger.py to a newcomer." in sent(fake)


async def test_a_repositorys_shiro_settings_hooks_never_run_before_the_user_trusts_them(
    fake: FakeOpenAI, workspace: Path, home: Path, editor: Editor, tmp_path: Path
) -> None:
    marker = tmp_path / "hook-ran.txt"
    (workspace / ".shiro").mkdir()
    hook = {"type": "command", "command": f"cat > {marker}"}
    (workspace / ".shiro" / "settings.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}})
    )
    fake.script += [Step(ToolCall("bash", {"command": "echo one"}, call_id="b1")), Step(Text("ran"))]
    editor.answers = ["once"]
    async with acp_agent(fake, home, editor) as conn:
        session_id = await new_session(conn, workspace)
        assert await prompt(conn, session_id, "run it") == "end_turn"
    assert not marker.exists()
    assert "hook(s) you have not trusted" in editor.text()
    trust = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "shiro_lsp",
        "hooks",
        "--workspace",
        str(workspace),
        "--home",
        str(home),
        "--trust",
        "all",
        stdout=asyncio.subprocess.PIPE,
    )
    listed, _ = await trust.communicate()
    assert trust.returncode == 0 and f"cat > {marker}" in listed.decode()
    fake.script += [Step(ToolCall("bash", {"command": "echo two"}, call_id="b2")), Step(Text("ran"))]
    editor.answers = ["once"]
    async with acp_agent(fake, home, editor) as conn:
        session_id = await new_session(conn, workspace)
        assert await prompt(conn, session_id, "run it again") == "end_turn"
    assert json.loads(marker.read_text())["tool_input"] == {"command": "echo two"}
