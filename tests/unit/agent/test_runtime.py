"""AgentRuntime through the service with the in-process scripted client: queue, session, meter, /compact."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from fakes.scripted_client import Reply, ScriptedClient
from shiro_lsp.agent import events as ev
from shiro_lsp.agent.context_window import Meter
from shiro_lsp.agent.runtime import BUSY_COMPACT, AgentRuntime
from shiro_lsp.agent.setup import ApprovalRequest
from shiro_lsp.checkpoints.rows import TurnChangesView
from shiro_lsp.config import load_settings
from shiro_lsp.context.estimate import estimate_text
from shiro_lsp.errors import ShiroError
from shiro_lsp.service import Shiro
from shiro_lsp.usage import Usage


class Recorder:
    """A front end that records what the runtime tells it."""

    def __init__(self) -> None:
        self.events: list[tuple[str, ev.Event]] = []
        self.meters: list[Meter] = []
        self.todos = 0

    def emitter(self, session_id: str, task_id: str) -> Any:
        return lambda event: self.events.append((task_id, event))

    async def approve(self, task_id: str, request: ApprovalRequest) -> Any:
        return "deny"

    def todos_changed(self) -> None:
        self.todos += 1

    def context_changed(self, meter: Meter) -> None:
        self.meters.append(meter)

    def changes_changed(self, view: TurnChangesView) -> None:
        pass

    def text_of(self, task_id: str) -> str:
        return "".join(e.text for t, e in self.events if t == task_id and isinstance(e, ev.Text))


@pytest.fixture
def shiro(tmp_path: Path) -> Shiro:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings, problems = load_settings({"home": str(tmp_path / "state"), "apiKey": "sk-test"})
    assert problems == []
    return Shiro(str(workspace), settings)


def started(shiro: Shiro, client: ScriptedClient) -> tuple[AgentRuntime, Recorder]:
    frontend = Recorder()
    runtime = shiro.start_agent(frontend)
    runtime.client_factory = lambda settings: client
    return runtime, frontend


async def test_a_chat_answers_is_saved_and_the_meter_shows_the_providers_count(shiro: Shiro) -> None:
    client = ScriptedClient(Reply("hello", usage=Usage(input_tokens=1_234, output_tokens=56)))
    runtime, frontend = started(shiro, client)
    ticket = runtime.submit("hi")
    outcome = await ticket.future
    assert outcome.stop_reason == "done" and outcome.usage.input_tokens == 1_234
    assert frontend.text_of(ticket.task_id) == "hello"
    assert frontend.meters[-1].tokens == 1_234 + 56 and not frontend.meters[-1].estimated
    await shiro.sessions.flush()
    saved = json.loads((shiro.paths.sessions_dir / f"{outcome.session_id}.json").read_text())
    assert [m["role"] for m in saved["messages"]] == ["user", "assistant"]


async def test_chats_sent_together_run_in_order_on_one_session(shiro: Shiro) -> None:
    client = ScriptedClient(Reply("first"), Reply("second"))
    runtime, frontend = started(shiro, client)
    one, two = runtime.submit("one"), runtime.submit("two")
    first, second = await one.future, await two.future
    assert (frontend.text_of(one.task_id), frontend.text_of(two.task_id)) == ("first", "second")
    assert first.session_id == second.session_id
    assert [r.messages[-1]["content"] for r in client.requests] == ["one", "two"]
    assert len(client.requests[1].messages) == 3  # the second chat sees the first one's answer


async def test_a_missing_key_fails_the_chat_with_a_clear_message(tmp_path: Path) -> None:
    settings, _ = load_settings({"home": str(tmp_path / "state"), "baseUrl": "https://api.openai.com/v1"})
    shiro = Shiro(str(tmp_path), settings.model_copy(update={"api_key": None}))
    runtime = shiro.start_agent(Recorder())
    outcome = await runtime.submit("hi").future
    assert outcome.stop_reason == "error" and outcome.error and "API key" in outcome.error


async def test_compact_gives_the_model_the_summary_and_keeps_the_history(shiro: Shiro) -> None:
    client = ScriptedClient(Reply("an answer"), Reply("SUMMARY: we said hello"))
    runtime, frontend = started(shiro, client)
    await runtime.submit("hello").future
    before, after = await runtime.compact()
    assert (before, after) == (2, 1)
    session = shiro.sessions.current
    assert "SUMMARY: we said hello" in json.dumps(session.model_messages())
    assert [m["role"] for m in session.messages] == ["user", "assistant"]
    assert frontend.meters  # the meter follows the shorter history


async def test_compact_is_refused_while_a_chat_runs(shiro: Shiro) -> None:
    hold = asyncio.Event()
    client = ScriptedClient(Reply("slow", hold=hold))
    runtime, _ = started(shiro, client)
    ticket = runtime.submit("a long one")
    while not runtime.queue.busy:
        await asyncio.sleep(0)
    with pytest.raises(ShiroError) as refused:
        await runtime.compact()
    assert refused.value.message == BUSY_COMPACT
    hold.set()
    assert (await ticket.future).stop_reason == "done"


async def test_stopping_the_agent_cancels_the_running_chat(shiro: Shiro) -> None:
    hold = asyncio.Event()
    runtime, frontend = started(shiro, ScriptedClient(Reply("partial", hold=hold)))
    ticket = runtime.submit("a long one")
    while not frontend.text_of(ticket.task_id):
        await asyncio.sleep(0.001)
    await shiro.stop_agent()
    assert (await ticket.future).stop_reason == "cancelled"
    assert "partial" in json.dumps(shiro.sessions.current.messages)


async def test_the_turn_is_registered_as_a_task_before_its_chat_answers(
    shiro: Shiro, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A notes read right after the reply finds this turn's task, however slow the registration."""
    runtime, _ = started(shiro, ScriptedClient(Reply("done")))
    register = shiro.register_task

    def slow_register(task_id: str, session_id: str, prompt: str) -> None:
        time.sleep(0.3)  # the registration's transaction waits on a busy database
        register(task_id, session_id, prompt)

    monkeypatch.setattr(shiro, "register_task", slow_register)
    outcome = await runtime.submit("fix the parser").future
    current = shiro.notes.read()
    assert current.task_id == outcome.task_id


def watch_writes(shiro: Shiro, frontend: Recorder, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many events had reached the editor when the prompt history write and the task's
    registration began (they run in threads; recorded once done)."""
    began: dict[str, int] = {}
    register, append = shiro.register_task, shiro.history.append

    def registering(task_id: str, session_id: str, prompt: str) -> None:
        events = len(frontend.events)
        register(task_id, session_id, prompt)
        began["register"] = events

    def appending(prompt: str) -> None:
        events = len(frontend.events)
        append(prompt)
        began["history"] = events

    monkeypatch.setattr(shiro, "register_task", registering)
    monkeypatch.setattr(shiro.history, "append", appending)
    return began


async def test_the_turns_own_writes_wait_until_its_first_event_is_out(
    shiro: Shiro, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prompt history write and the task's registration do not compete with the first token."""
    runtime, frontend = started(shiro, ScriptedClient(Reply("hello")))
    began = watch_writes(shiro, frontend, monkeypatch)
    outcome = await runtime.submit("fix the parser").future
    assert began["register"] >= 1 and began["history"] >= 1
    assert isinstance(frontend.events[0][1], ev.Text)
    assert shiro.notes.read().task_id == outcome.task_id
    await asyncio.wait_for(_until(lambda: shiro.history.load() == ["fix the parser"]), 10)


async def test_with_a_model_slow_to_answer_the_turns_writes_start_anyway(
    shiro: Shiro, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = asyncio.Event()
    runtime, frontend = started(shiro, ScriptedClient(Reply("", hold=answer), Reply("ok")))
    began = watch_writes(shiro, frontend, monkeypatch)
    ticket = runtime.submit("fix the parser")
    await asyncio.wait_for(_until(lambda: len(began) == 2), 10)
    assert began == {"register": 0, "history": 0} and not frontend.events
    assert shiro.notes.read().task_id == ticket.task_id
    answer.set()
    assert (await ticket.future).stop_reason == "done"


async def _until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0.01)


async def test_in_the_text_tool_format_the_meter_counts_the_tools_as_the_request_carries_them(
    tmp_path: Path,
) -> None:
    """Text-format tools ride in the instructions; the meter must not count the smaller JSON specs instead."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings, _ = load_settings(
        {"home": str(tmp_path / "state"), "apiKey": "sk-test", "toolCallFormat": "text"}, env={}
    )
    client = ScriptedClient(Reply("ok"))
    runtime, _ = started(Shiro(str(workspace), settings), client)
    meter = await runtime.current_meter()  # what the next request would carry, before it is sent
    await runtime.submit("hi").future
    sent = client.requests[-1]
    assert sent.tools == [] and "<tools>" in sent.instructions
    assert meter.estimated and meter.tokens >= estimate_text(sent.instructions)


class Approving(Recorder):
    async def approve(self, task_id: str, request: ApprovalRequest) -> Any:
        return "once"


async def test_the_configured_check_runs_after_a_small_models_change_and_its_failure_goes_back(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "price.py").write_text("RATE = 2\n")
    (workspace / "verify.py").write_text("import price\n\nassert price.RATE == 3, 'RATE must be 3'\n")
    (workspace / "test_price.py").write_text("def test_nothing():\n    pass\n")  # the setting comes first
    check = f"{sys.executable} verify.py"
    options = {
        "home": str(tmp_path / "state"),
        "apiKey": "sk-test",
        "contextWindow": 16_384,
        "checkCommand": check,
        # the check runs this interpreter, which a checkout in /tmp keeps where the sandbox hides the folder
        "bashSandbox": "off",
    }
    settings, problems = load_settings(options)
    assert problems == []
    client = ScriptedClient(
        Reply("price.py\n```python\nRATE = 4\n```\n"),
        Reply("RATE is changed."),
        Reply("price.py\n```python\nRATE = 3\n```\n\nRATE is 3 now, as verify.py wants."),
    )
    frontend = Approving()
    runtime = Shiro(str(workspace), settings).start_agent(frontend)
    runtime.client_factory = lambda settings: client
    outcome = await runtime.submit("Set RATE in price.py to what verify.py expects.").future
    assert outcome.stop_reason == "done"
    ran = [e.input["command"] for _, e in frontend.events if isinstance(e, ev.ToolCall) and e.name == "bash"]
    assert ran == [check, check]  # after each change, never before
    assert "RATE must be 3" in json.dumps(client.requests[2].messages[-1])
    assert len(client.requests) == 3 and (workspace / "price.py").read_text() == "RATE = 3\n"


async def test_the_projects_test_runner_is_found_and_run_after_a_small_models_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "scale.py").write_text("def double(x):\n    return x + x + 1\n")
    (workspace / "test_scale.py").write_text(
        "from scale import double\n\n\ndef test_double():\n    assert double(4) == 8\n"
    )
    settings, _ = load_settings(
        {"home": str(tmp_path / "state"), "apiKey": "sk-test", "contextWindow": 16_384}
    )
    fixed = "def double(x):\n    return 2 * x\n"
    client = ScriptedClient(
        Reply(
            "scale.py\n```python\ndef double(x):\n    return x * 3\n```\n\ndouble() gives even numbers now."
        ),
        Reply(f"scale.py\n```python\n{fixed}```\n\ndouble() multiplies by two now."),
    )
    frontend = Approving()
    runtime = Shiro(str(workspace), settings).start_agent(frontend)
    runtime.client_factory = lambda settings: client
    await runtime.submit("double() in scale.py gives odd numbers; correct it.").future
    ran = [e.input["command"] for _, e in frontend.events if isinstance(e, ev.ToolCall) and e.name == "bash"]
    assert ran == ["python3 -m pytest -q"] * 2
    assert "assert 12 == 8" in json.dumps(client.requests[1].messages[-1])
    assert len(client.requests) == 2 and (workspace / "scale.py").read_text() == fixed
