"""Hooks through the real server: Claude Code's events and JSON, a repository's hooks only once trusted,
the user's own always, none in restricted mode, never with the provider's key, never a stuck turn."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from chat_helpers import model_bodies
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.fixtures import options
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]

KEY = "sk-test-hooks-0123456789abcdef"


@pytest.fixture
def trusted() -> bool:
    return True


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI, trusted: bool) -> dict[str, object]:
    return options(home, fake, model="gpt-5", approvalTimeoutMs=5000, apiKey=KEY, trusted=trusted)


def settings(path: Path, hooks: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))


def group(command: str, matcher: str | None = None, **entry: Any) -> list[dict[str, Any]]:
    one: dict[str, Any] = {"hooks": [{"type": "command", "command": command, **entry}]}
    if matcher is not None:
        one["matcher"] = matcher
    return [one]


def tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m.get("role") == "tool"]


def notices(client: ShiroClient, task_id: str) -> list[str]:
    return [e["text"] for e in client.events(task_id) if e["type"] == "notice"]


def recorder(marker: Path) -> str:
    """A hook command that appends the event it was given to ``marker``."""
    return f"cat >> {shlex.quote(str(marker))}; echo >> {shlex.quote(str(marker))}"


async def bash_turn(
    client: ShiroClient, fake: FakeOpenAI, command: str, text: str = "run it"
) -> dict[str, Any]:
    fake.script += [Step(ToolCall("bash", {"command": command}, call_id="call_b")), Step(Text("done"))]
    client.decisions = ["once"]
    result: dict[str, Any] = await client.call("shiro/chat", {"text": text})
    return result


async def test_a_repositorys_shiro_settings_hooks_never_run_before_the_user_trusts_them(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran.jsonl"
    settings(workspace / ".shiro/settings.json", {"PreToolUse": group(recorder(marker), "Bash")})
    listing = await client.call("shiro/hooks/list")
    [hook] = listing["hooks"]
    assert hook["trusted"] is False and hook["runs"] is False and hook["scope"] == "project"
    assert hook["command"] == recorder(marker) and hook["source"] == ".shiro/settings.json"
    result = await bash_turn(client, fake, "echo untrusted")
    assert not marker.exists()
    assert any("1 hook(s) you have not trusted" in n for n in notices(client, result["taskId"]))
    listing = await client.call("shiro/hooks/trust", {"ids": [hook["id"]], "trusted": True})
    assert listing["hooks"][0]["runs"] is True
    await bash_turn(client, fake, "echo trusted")
    event = json.loads(marker.read_text().splitlines()[0])
    assert event["hook_event_name"] == "PreToolUse" and event["tool_name"] == "bash"
    assert event["tool_input"] == {"command": "echo trusted"} and event["cwd"] == str(workspace)
    # editing the trusted entry makes it a stranger again
    settings(workspace / ".shiro/settings.json", {"PreToolUse": group(recorder(marker) + " ", "Bash")})
    assert (await client.call("shiro/hooks/list"))["hooks"][0]["trusted"] is False
    await bash_turn(client, fake, "echo edited")
    assert len(marker.read_text().splitlines()) == 1


async def test_a_trusted_hook_blocks_bash_and_its_reason_reaches_the_model(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    refuse = "echo 'curl is not allowed here: use the vendored client' >&2; exit 2"
    settings(workspace / ".shiro/settings.json", {"PreToolUse": group(refuse, "Bash")})
    await client.call("shiro/hooks/trust", {"ids": ["all"], "trusted": True})
    result = await bash_turn(client, fake, "curl -o fetched.html example.invalid && touch fetched-marker")
    assert client.approvals == []  # blocked before anyone was asked
    assert not (workspace / "fetched-marker").exists()
    assert tool_messages(model_bodies(fake)[1]) == ["curl is not allowed here: use the vendored client"]
    assert any("blocked bash: curl is not allowed" in n for n in notices(client, result["taskId"]))


async def test_the_users_own_hooks_run_without_the_provider_key_and_add_context(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path, tmp_path: Path
) -> None:
    env_file = tmp_path / "hook-env.txt"
    context = json.dumps({"hookSpecificOutput": {"additionalContext": "formatter ran: 0 files changed"}})
    settings(
        home / "settings.json",
        {
            "PostToolUse": group(f"env > {shlex.quote(str(env_file))}; echo {shlex.quote(context)}", "Bash"),
            "UserPromptSubmit": group("echo 'the deploy freeze lasts until Friday'"),
            "SessionStart": group("echo 'branch: release-7'", "startup"),
        },
    )
    await bash_turn(client, fake, "echo hi", text="tidy the module")
    first, second = model_bodies(fake)
    prompt = next(m["content"] for m in first["messages"] if m["role"] == "user")
    assert "branch: release-7" in prompt and "the deploy freeze lasts until Friday" in prompt
    assert prompt.index("branch: release-7") < prompt.index("tidy the module") < prompt.index("deploy freeze")
    [output] = tool_messages(second)
    assert "formatter ran: 0 files changed" in output
    env = env_file.read_text()
    assert KEY not in env and "OPENAI_API_KEY" not in env
    assert f"CLAUDE_PROJECT_DIR={workspace}" in env
    history = await client.call("shiro/history")
    assert history["prompts"][-1] == "tidy the module"


async def test_a_prompt_hook_blocks_the_prompt_before_the_model_sees_it(
    client: ShiroClient, fake: FakeOpenAI, home: Path
) -> None:
    settings(home / "settings.json", {"UserPromptSubmit": group("echo 'no ticket number given' >&2; exit 2")})
    result = await client.call("shiro/chat", {"text": "change the billing code"})
    assert result["stopReason"] == "done" and model_bodies(fake) == []
    assert any(
        "blocked this prompt" in n and "no ticket number given" in n
        for n in notices(client, result["taskId"])
    )


async def test_a_stop_hook_sends_the_model_back_once_then_lets_it_stop(
    client: ShiroClient, fake: FakeOpenAI, home: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "stop.jsonl"
    script = (
        f'event=$(cat); echo "$event" >> {shlex.quote(str(seen))}; '
        """case "$event" in *'"stop_hook_active": true'*) exit 0;; esac; """
        'echo \'{"decision": "block", "reason": "the changelog entry is missing"}\''
    )
    settings(home / "settings.json", {"Stop": group(script)})
    fake.script += [Step(Text("finished")), Step(Text("added the changelog entry"))]
    result = await client.call("shiro/chat", {"text": "wrap up"})
    assert result["stopReason"] == "done"
    second = model_bodies(fake)[1]
    assert second["messages"][-1]["content"] == "the changelog entry is missing"
    events = [json.loads(line) for line in seen.read_text().splitlines() if line.strip()]
    assert [e["stop_hook_active"] for e in events] == [False, True]
    assert events[0]["last_assistant_message"] == "finished"


async def test_a_hook_that_hangs_is_stopped_and_the_turn_goes_on(
    client: ShiroClient, fake: FakeOpenAI, home: Path, workspace: Path
) -> None:
    settings(home / "settings.json", {"PreToolUse": group("sleep 30", "bash", timeout=1)})
    result = await bash_turn(client, fake, "touch after-the-hook")
    assert result["stopReason"] == "done" and (workspace / "after-the-hook").exists()
    assert any("did not finish within 1 s" in n for n in notices(client, result["taskId"]))


@pytest.mark.parametrize("trusted", [False])
async def test_restricted_mode_runs_no_hook_at_all(
    client: ShiroClient, fake: FakeOpenAI, home: Path, tmp_path: Path, trusted: bool
) -> None:
    marker = tmp_path / "ran.jsonl"
    settings(home / "settings.json", {"UserPromptSubmit": group(recorder(marker))})
    listing = await client.call("shiro/hooks/list")
    assert listing["restricted"] is True and listing["hooks"][0]["runs"] is False
    fake.script.append(Step(Text("read only here")))
    result = await client.call("shiro/chat", {"text": "look around"})
    assert result["stopReason"] == "done" and not marker.exists()
    assert any("restricted mode" in n for n in notices(client, result["taskId"]))
