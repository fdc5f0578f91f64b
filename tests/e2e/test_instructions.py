"""Project instructions of every kind peers use reach the system prompt, labelled; nested AGENTS.md; /init."""

from __future__ import annotations

from pathlib import Path

import pytest

from chat_helpers import model_bodies, system_prompt_of
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.fixtures import options
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI) -> dict[str, object]:
    return options(home, fake)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


async def test_every_file_kind_reaches_the_system_prompt_labelled(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    write(workspace / "AGENTS.md", "agents: run make check")
    write(workspace / "CLAUDE.md", "claude: prefer small diffs")
    write(workspace / ".github" / "copilot-instructions.md", "copilot: tabs not spaces")
    write(workspace / ".cursorrules", "cursor: no semicolons")
    write(workspace / ".clinerules" / "01-style.md", "cline: snake_case")
    write(workspace / ".clinerules" / "02-tests.md", "cline: pytest only")
    write(workspace / "big" / "x.txt", "")
    fake.script.append(Step(Text("ok")))
    await client.call("shiro/chat", {"text": "hello"})
    prompt = system_prompt_of(model_bodies(fake)[0])
    for label, text in [
        ("AGENTS.md", "agents: run make check"),
        ("CLAUDE.md", "claude: prefer small diffs"),
        (".github/copilot-instructions.md", "copilot: tabs not spaces"),
        (".cursorrules", "cursor: no semicolons"),
        (".clinerules/01-style.md", "cline: snake_case"),
        (".clinerules/02-tests.md", "cline: pytest only"),
    ]:
        assert f"--- {label} ---\n{text}" in prompt
    assert prompt.index("Project instructions") < prompt.index("--- AGENTS.md ---")


async def test_a_single_clinerules_file_and_the_cap(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    write(workspace / ".clinerules", "one file of rules")
    write(workspace / "AGENTS.md", "A" * 20_000)
    fake.script.append(Step(Text("ok")))
    await client.call("shiro/chat", {"text": "hello"})
    prompt = system_prompt_of(model_bodies(fake)[0])
    assert "--- .clinerules ---\none file of rules" in prompt
    assert "A" * 12_000 in prompt and "A" * 12_001 not in prompt
    assert "the file has 20000 characters, the first 12000 are shown" in prompt


async def test_nested_agents_md_joins_once_the_turn_works_there_and_the_nearest_comes_last(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    write(workspace / "AGENTS.md", "root rule: use tabs")
    write(workspace / "pkg" / "AGENTS.md", "pkg rule: use 2 spaces")
    write(workspace / "pkg" / "sub" / "AGENTS.md", "sub rule: use 4 spaces")
    write(workspace / "pkg" / "sub" / "mod.py", "x = 1\n")
    write(workspace / "other" / "AGENTS.md", "other rule: never shown")
    fake.script += [
        Step(ToolCall("read_file", {"path": "pkg/sub/mod.py"}, call_id="c1")),
        Step(Text("done")),
    ]
    await client.call("shiro/chat", {"text": "look at mod.py"})
    first, second = (system_prompt_of(b) for b in model_bodies(fake))
    assert "root rule" in first and "pkg rule" not in first and "sub rule" not in first
    assert second.index("--- AGENTS.md ---") < second.index("--- pkg/AGENTS.md ---")
    assert second.index("--- pkg/AGENTS.md ---") < second.index("--- pkg/sub/AGENTS.md ---")
    assert "other rule" not in second
    assert "the one nearest to the file you are working on wins" in second


async def test_init_writes_agents_md_through_a_normal_approved_turn(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    write(workspace / "README.md", "# demo\nrun `make test`\n")
    fake.script += [
        Step(ToolCall("read_file", {"path": "README.md"}, call_id="c1")),
        Step(
            ToolCall(
                "write_file", {"path": "AGENTS.md", "content": "# Agents\nRun `make test`.\n"}, call_id="c2"
            )
        ),
        Step(Text("Wrote AGENTS.md")),
    ]
    client.decisions = ["once"]
    result = await client.call("shiro/chat", {"text": "/init"})
    assert result["stopReason"] == "done"
    user = model_bodies(fake)[0]["messages"][-1]["content"]
    assert "Write an AGENTS.md at the root of this workspace" in user
    assert [a["toolName"] for a in client.approvals] == ["write_file"]
    assert (workspace / "AGENTS.md").read_text() == "# Agents\nRun `make test`.\n"
    fake.script.append(Step(Text("ok")))
    await client.call("shiro/chat", {"text": "next"})
    assert "--- AGENTS.md ---\n# Agents\nRun `make test`." in system_prompt_of(model_bodies(fake)[-1])
