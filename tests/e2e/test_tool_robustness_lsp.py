"""Issue 20, Robustness: bad input from a model or a server becomes a tool error, and the turn goes on.

Through the real server over stdio, the real tools and the real file system: a name or path too long
for the file system is an answer the model reads, and the other calls of the same step still run and
keep their results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chat_helpers import model_bodies
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.fixtures import options
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]

ALLOW_ALL = {name: "allow" for name in ("write_file", "edit_file", "move_file", "delete_file", "bash")}
LONG_NAME = "n" * 300 + ".txt"
LONG_PATH = "/".join(["d" * 200] * 21) + "/f.txt"  # about 4,200 characters


@pytest.fixture
def permissions() -> dict[str, str]:
    return ALLOW_ALL


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI, permissions: dict[str, str]) -> dict[str, object]:
    return options(home, fake, permissions, model="gpt-5", approvalTimeoutMs=5000)


def tool_results(fake: FakeOpenAI) -> dict[str, str]:
    last = model_bodies(fake)[-1]
    return {m["tool_call_id"]: str(m["content"]) for m in last["messages"] if m["role"] == "tool"}


@pytest.mark.parametrize(
    "call",
    [
        ToolCall("write_file", {"path": LONG_NAME, "content": "x\n"}, call_id="bad"),
        ToolCall("read_file", {"path": LONG_NAME}, call_id="bad"),
        ToolCall("edit_file", {"path": LONG_NAME, "oldString": "a", "newString": "b"}, call_id="bad"),
        ToolCall("move_file", {"from": "ok.txt", "to": LONG_NAME}, call_id="bad"),
        ToolCall("delete_file", {"path": LONG_NAME}, call_id="bad"),
        ToolCall("list_dir", {"path": LONG_NAME}, call_id="bad"),
    ],
    ids=lambda call: call.name,
)
async def test_a_name_too_long_is_a_tool_error_and_the_step_keeps_its_other_results(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, call: ToolCall
) -> None:
    result, results = await step_with_a_good_call(client, fake, workspace, call)
    assert "too long" in results["bad"].lower(), results["bad"]
    failed = [e for e in client.events(result["taskId"]) if e["type"] == "tool-error"]
    assert [e["id"] for e in failed] == ["bad"], failed


@pytest.mark.parametrize(
    "call",
    [
        ToolCall("write_file", {"path": LONG_PATH, "content": "x\n"}, call_id="bad"),
        ToolCall("read_file", {"path": LONG_PATH}, call_id="bad"),
        ToolCall("edit_file", {"path": LONG_PATH, "oldString": "a", "newString": "b"}, call_id="bad"),
        ToolCall("list_dir", {"path": LONG_PATH}, call_id="bad"),
        ToolCall("grep", {"pattern": "x", "path": LONG_NAME}, call_id="bad"),
        ToolCall("bash", {"command": "true"}, call_id="bad"),
    ],
    ids=lambda call: call.name,
)
async def test_a_path_over_the_system_limit_leaves_the_turn_going(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, call: ToolCall
) -> None:
    if call.name == "bash":  # a folder nested past PATH_MAX, made by the turn, then scanned
        call = ToolCall(
            "bash", {"command": f"mkdir -p {LONG_PATH.rsplit('/', 1)[0]} && touch {LONG_PATH}"}, call_id="bad"
        )
    await step_with_a_good_call(client, fake, workspace, call)


async def step_with_a_good_call(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, call: ToolCall
) -> tuple[dict[str, Any], dict[str, str]]:
    """``call`` and a good write in one step: the turn ends "done" and the good call's result is kept."""
    (workspace / "ok.txt").write_text("kept\n")
    good = ToolCall("write_file", {"path": "good.txt", "content": "written\n"}, call_id="good")
    fake.script += [Step(call, good), Step(Text("done"))]
    result: dict[str, Any] = await client.call("shiro/chat", {"text": "go"})
    assert result["stopReason"] == "done", result
    results = tool_results(fake)
    assert (workspace / "good.txt").read_text() == "written\n"
    assert "good.txt" in results["good"], results
    assert "bad" in results
    return result, results


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "target.txt").write_text("outside\n")
    return folder


@pytest.mark.parametrize(
    "call",
    [
        ToolCall("edit_file", {"path": "link/target.txt", "oldString": "outside", "newString": "x"}, "bad"),
        ToolCall("write_file", {"path": "link/target.txt", "content": "x\n"}, "bad"),
        ToolCall("delete_file", {"path": "link/target.txt"}, "bad"),
        ToolCall("move_file", {"from": "ok.txt", "to": "link/moved.txt"}, "bad"),
    ],
    ids=lambda call: call.name,
)
@pytest.mark.parametrize("permissions", [{}])  # every call asks: its approval is prepared first
async def test_a_jail_refusal_while_the_approval_is_prepared_is_a_tool_error(
    client: ShiroClient,
    fake: FakeOpenAI,
    workspace: Path,
    outside: Path,
    call: ToolCall,
    permissions: dict[str, str],
) -> None:
    """The approval's preview plans the change through the jail, before the call is approved: a
    symlink out of the workspace (what a swap race leaves for a moment) is refused there too."""
    (workspace / "link").symlink_to(outside)
    client.decisions = ["once", "once"]
    _, results = await step_with_a_good_call(client, fake, workspace, call)
    assert "escapes" in results["bad"].lower(), results["bad"]
    assert (outside / "target.txt").read_text() == "outside\n"
    assert sorted(p.name for p in outside.iterdir()) == ["target.txt"]
