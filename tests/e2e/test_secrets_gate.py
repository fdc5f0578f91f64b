"""Issue 20, secrets: one gate for everything that reaches a model, one redactor for what is logged.

Through the real server over stdio with the scripted model recording every request: attachments
(the chat's context blocks, as the extension writes them), the state root inside the workspace
(the home folder opened as the workspace), shiro/models with a password in the base URL, and a
real MCP SDK server that logs a token to stderr and returns one in a result.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from raw_lsp import RawServer

from chat_helpers import model_bodies, sent
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.fixtures import options
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]

ENV_VALUES = ["zq7-hunter2-9f4e", "postgres://app@db.internal/main", "blue-horse-battery", "4111-0000-9999"]
ENV_TEXT = "".join(f"VALUE_{i}={v}\n" for i, v in enumerate(ENV_VALUES))
STATE_SECRET = "old-env-value-7c1d9e"
MCP_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_servers.py"


def attached(prompt: str, label: str, text: str, source: str) -> str:
    """A prompt with one attachment, byte for byte as the extension's ``withAttachments`` writes it."""
    return f'{prompt}\n\n<context label="{label}" source="{source}">\n{text.rstrip()}\n</context>'


def notices(client: ShiroClient) -> str:
    return "\n".join(e["text"] for e in client.events() if e["type"] == "notice")


def user_text(fake: FakeOpenAI) -> str:
    """The user's message as the model read it."""
    messages = model_bodies(fake)[-1]["messages"]
    return "\n".join(str(m["content"]) for m in messages if m["role"] == "user")


def tool_outputs(fake: FakeOpenAI) -> dict[str, str]:
    """The tool results the model read last, by call id (Chat Completions ``tool`` messages)."""
    messages = model_bodies(fake)[-1]["messages"]
    return {m["tool_call_id"]: str(m["content"]) for m in messages if m["role"] == "tool"}


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI) -> dict[str, object]:
    return options(home, fake)


# --- attachments ----------------------------------------------------------------------------------


async def test_an_attached_env_file_never_reaches_the_model_and_the_user_is_told(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    env = workspace / ".env"
    env.write_text(ENV_TEXT)
    fake.script.append(Step(Text("ok")))
    text = attached("what is wrong here?", ".env", ENV_TEXT, env.as_uri())
    result = await client.call("shiro/chat", {"text": text})
    assert result["stopReason"] == "done"
    body = sent(fake)
    assert "what is wrong here?" in body
    for value in ENV_VALUES:
        assert value not in body
    assert ".env is a secrets file" in notices(client)
    await client.call("shiro/session/save")
    stored = "\n".join(p.read_text(errors="replace") for p in home.rglob("*.json"))
    assert not any(value in stored for value in ENV_VALUES)


async def test_an_attachment_from_outside_the_workspace_is_refused_one_inside_is_sent(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere" / "notes.txt"
    outside.parent.mkdir()
    outside.write_text("OUTSIDE-CONTENT-5521\n")
    inside = workspace / "calc.py"
    inside.write_text("def add(a, b):\n    return a - b\n")
    fake.script.append(Step(Text("ok")))
    text = attached("compare", str(outside), outside.read_text(), outside.as_uri())
    text += (
        '\n\n<context label="calc.py:1-2" source="'
        + inside.as_uri()
        + '">\n'
        + inside.read_text()
        + "</context>"
    )
    await client.call("shiro/chat", {"text": text})
    body = sent(fake)
    assert "OUTSIDE-CONTENT-5521" not in body
    prompt = user_text(fake)
    assert "return a - b" in prompt  # a workspace file's selection is attached as before
    assert "source=" not in prompt and inside.as_uri() not in prompt  # the source never reaches the model
    assert "is outside the workspace folders" in notices(client)


# --- the state root inside the workspace ------------------------------------------------------------


@pytest.fixture
def home(workspace: Path) -> Path:
    """The home folder opened as the workspace: the state root lies inside it."""
    return workspace / ".shiro-neko"


def plant_state(workspace: Path, home: Path) -> None:
    blob = home / "checkpoints" / "blobs" / "ab" / "cdef0123"
    blob.parent.mkdir(parents=True)
    blob.write_text(f"API_URL=x\nOLD={STATE_SECRET}\n")
    journal = home / "checkpoints" / "journal.json"
    journal.write_text(json.dumps({"blob": base64.b64encode(blob.read_bytes()).decode()}))
    (workspace / "app.py").write_text("print('hi')\n")
    run = {"cwd": workspace, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q"], **run)  # type: ignore[call-overload]
    subprocess.run(["git", "add", "-A"], **run)  # type: ignore[call-overload]
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "home"], **run)  # type: ignore[call-overload]


@pytest.mark.usefixtures("workspace")
async def test_the_state_root_inside_the_workspace_is_off_limits_to_every_tool(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    plant_state(workspace, home)
    calls = {
        "read": ToolCall("read_file", {"path": ".shiro-neko/checkpoints/blobs/ab/cdef0123"}, call_id="read"),
        "abs": ToolCall("read_file", {"path": str(home / "checkpoints" / "journal.json")}, call_id="abs"),
        "grep": ToolCall("grep", {"pattern": "OLD=|blob", "include_ignored": True}, call_id="grep"),
        "glob": ToolCall("glob", {"pattern": "**/*", "include_ignored": True}, call_id="glob"),
        "globin": ToolCall("glob", {"pattern": ".shiro-neko/**"}, call_id="globin"),
        "list": ToolCall("list_dir", {"path": ".", "depth": 4, "include_ignored": True}, call_id="list"),
        "listin": ToolCall("list_dir", {"path": ".shiro-neko"}, call_id="listin"),
        "show": ToolCall("git_show", {"ref": "HEAD"}, call_id="show"),
        "blob": ToolCall("git_show", {"ref": "HEAD:.shiro-neko/checkpoints/journal.json"}, call_id="blob"),
        "status": ToolCall("git_status", {}, call_id="status"),
    }
    fake.script += [Step(*calls.values()), Step(Text("done"))]
    result = await client.call("shiro/chat", {"text": "look around"})
    assert result["stopReason"] == "done"
    outputs = tool_outputs(fake)
    assert set(outputs) == set(calls)
    body = sent(fake)
    encoded = base64.b64encode(f"API_URL=x\nOLD={STATE_SECRET}\n".encode()).decode()
    assert STATE_SECRET not in body and encoded[:20] not in body
    for refused in ("read", "abs", "globin", "listin", "blob"):
        assert "Shiro's own state folder" in outputs[refused], outputs[refused]
    for listing in ("grep", "glob", "list", "show", "status"):
        assert "cdef0123" not in outputs[listing] and "journal" not in outputs[listing], outputs[listing]
    assert "app.py" in outputs["glob"] and "app.py" in outputs["list"]  # the rest is still there


# --- URLs with passwords ------------------------------------------------------------------------


async def test_shiro_models_never_returns_a_url_password(client: ShiroClient, fake: FakeOpenAI) -> None:
    reachable = fake.base_url.replace("http://", "http://user:PASSWORD-one@")
    listed = await client.call("shiro/models", {"baseUrl": reachable})
    unreachable = await client.call("shiro/models", {"baseUrl": "http://user:PASSWORD-two@127.0.0.1:9/v1"})
    shown = json.dumps([listed, unreachable])
    assert "PASSWORD" not in shown
    assert listed["baseUrl"].startswith("http://user:[redacted")


# --- the log ------------------------------------------------------------------------------------

LOGGED_TOKENS = ["ghp_" + "A1b2C3d4" * 5, "PASSWORD-in-url", "qtok-98765432"]


def test_an_mcp_servers_stderr_and_results_are_redacted(tmp_path: Path, fake: FakeOpenAI) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    home.mkdir()
    line = f"testkit: token {LOGGED_TOKENS[0]} for http://bot:{LOGGED_TOKENS[1]}@git.internal/x?token={LOGGED_TOKENS[2]}"
    entry = {"command": sys.executable, "args": [str(MCP_SERVER), "stdio", "--stderr-line", line]}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"testkit": entry}}))
    leaked = (
        f"Authorization: Bearer {LOGGED_TOKENS[2]} https://api.internal/v1?access_token={LOGGED_TOKENS[1]}"
    )
    fake.script += [
        Step(ToolCall("mcp__testkit__leak", {"text": leaked}, call_id="m1")),
        Step(Text("done")),
    ]
    server = RawServer(home, workspace)
    try:
        server.initialize(
            baseUrl=fake.base_url, api="chat", maxRetries=0, permissions={"mcp__testkit__*": "allow"}
        )
        reply = server.call("shiro/chat", {"text": "dump the config"}, timeout=90)
        assert reply["result"]["stopReason"] == "done", reply
        log = server.stderr()
    finally:
        server.close()
    assert "MCP server testkit" in log  # the server did write to the log
    result: Any = tool_outputs(fake)["m1"]
    assert "config:" in result
    for token in LOGGED_TOKENS:
        assert token not in log
        assert token not in result
