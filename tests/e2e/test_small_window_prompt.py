"""What a local model with a small context window sees when a turn starts, through the real server.

The scripted model is a llama.cpp server (its /props report the window) answering the way
Qwen2.5-Coder does: tool calls written as ```json text. Every assertion is on the requests it got.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from chat_helpers import model_bodies, system_prompt_of
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.fixtures import options
from fakes.local_servers import LLAMACPP_MODEL, LLAMACPP_PROPS, serve
from lsp_client import ShiroClient
from shiro_lsp.context.estimate import estimate_text

pytest_plugins = ["fakes.fixtures"]

WINDOW = 16_384
FIRST_REQUEST_BUDGET = 1_500 + WINDOW // 2
"""The instructions and tools (1,500 tokens), and the workspace view's half of the window."""
CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 3


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI) -> dict[str, object]:
    serve(fake, "llamacpp")
    props = copy.deepcopy(LLAMACPP_PROPS)
    props["default_generation_settings"]["n_ctx"] = WINDOW
    fake.get_routes = {"/props": props}
    fake.chat_dialect = "llamacpp"
    return options(home, fake, apiKey=None, model=LLAMACPP_MODEL)


def fenced_call(name: str, arguments: dict[str, object]) -> str:
    return "```json\n" + json.dumps({"name": name, "arguments": arguments}, indent=2) + "\n```"


def prompt_tokens(body: dict[str, Any]) -> int:
    """The project's estimate of what a request's prompt costs (its messages and tool schemas)."""
    return estimate_text(json.dumps(body["messages"])) + estimate_text(json.dumps(body.get("tools") or []))


def user_text(body: dict[str, Any]) -> str:
    return str(next(m["content"] for m in body["messages"] if m["role"] == "user"))


async def test_the_first_request_of_a_16k_window_fits_its_budget_with_the_named_file(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "calc.py").write_text(CALC)
    (workspace / "util.py").write_text("HELPERS = []\n")  # named nowhere, small enough to be shown
    (workspace / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    fake.script += [Step(Text("add subtracts; it should return a + b.")), Step(Text("It should add."))]
    await client.call("shiro/chat", {"text": "Why does test_calc.py fail? Fix add in calc.py."})
    body = model_bodies(fake)[0]  # (the second: sent back once to write the fix it only described)
    assert prompt_tokens(body) <= FIRST_REQUEST_BUDGET
    text = user_text(body)
    # each file in the form the model is asked to write one out in, the named ones first
    assert text.startswith("test_calc.py\n```\nfrom calc import add\n")
    assert f"\n\ncalc.py\n```\n{CALC}```" in text
    assert "\n\nutil.py\n```\nHELPERS = []\n```" in text
    assert text.index("\n\ncalc.py\n```") < text.index("\n\nutil.py\n```")
    assert text.endswith("\n\nWhy does test_calc.py fail? Fix add in calc.py.")  # the request comes last
    # the whole workspace is shown: no tools are sent (reading could tell nothing more), files are written out
    assert "tools" not in body
    rules = system_prompt_of(body).split("Rules:\n", 1)[1]
    assert rules.startswith(
        "- Once you understand the request, decide which files must change, then write out"
    )
    assert "its path alone on one line, then its entire new content in a fenced code block" in rules


async def test_the_view_is_bounded_and_never_holds_a_secret(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    for n in range(120):
        (workspace / f"module_{n:03}.py").write_text(f"VALUE = {n}\n")
    (workspace / "big.py").write_text(
        "".join(f"line_{n} = {n}  # padding padding padding\n" for n in range(5000))
    )
    (workspace / "settings.py").write_text(f'API_KEY = "{KEY}"\nDEBUG = True\n')
    (workspace / ".env").write_text(f"OPENAI_API_KEY={KEY}\n")
    (workspace / "config").mkdir()
    (workspace / "config" / "credentials.json").write_text(json.dumps({"key": KEY}))
    (workspace / "ignored.log").write_text("noise\n")
    (workspace / ".gitignore").write_text("*.log\n")
    fake.script.append(Step(Text("Done.")))
    prompt = "Read big.py, settings.py, .env and config/credentials.json and module_000.py."
    await client.call("shiro/chat", {"text": prompt})
    (body,) = model_bodies(fake)
    assert prompt_tokens(body) <= FIRST_REQUEST_BUDGET
    text = user_text(body)
    listed = text.split("Other files, with their main definitions:\n", 1)[1].split("\n\n", 1)[0]
    assert "module_119.py:\nVALUE = 119" in listed  # the map of the files not named
    assert "ignored.log" not in text and ".env" not in listed
    offered = {t["function"]["name"] for t in body["tools"]}  # not all shown: the tools to look further
    assert {"read_file", "list_dir", "grep", "bash"} <= offered and len(offered) <= 8
    assert not {"edit_file", "write_file", "todo_write"} & offered  # files are written out
    assert "big.py has 5001 lines, too many to show whole." in text and "\nbig.py\n```" not in text
    assert KEY not in json.dumps(body) and "DEBUG = True" in text  # the value is cut, the file is shown
    assert "module_001.py\n```" not in text  # a workspace too big to list whole shows only named files
    assert ".env\n```" not in text and "credentials.json\n```" not in text


async def test_steps_of_a_turn_and_the_next_turn_keep_the_prompt_prefix(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "calc.py").write_text(CALC)
    fake.script += [
        Step(Text(fenced_call("read_file", {"path": "calc.py"}))),
        Step(Text("add subtracts.")),
        Step(Text("mul multiplies.")),
    ]
    await client.call("shiro/chat", {"text": "What is wrong in calc.py?"})
    await client.call("shiro/chat", {"text": "And mul?"})
    first, second, third = model_bodies(fake)
    for before, after in ((first, second), (second, third)):
        assert json.dumps(after.get("tools")) == json.dumps(before.get("tools"))
        assert json.dumps(after["messages"][: len(before["messages"])]) == json.dumps(before["messages"])
    assert "calc.py\n```\n" in user_text(first)


async def test_a_call_that_changed_files_shows_the_model_the_diff(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "calc.py").write_text(CALC)
    fake.script += [
        Step(Text(fenced_call("read_file", {"path": "calc.py"}))),
        Step(Text(fenced_call("edit_file", {"path": "calc.py", "oldString": "a - b", "newString": "a + b"}))),
        Step(Text(fenced_call("bash", {"command": "cp calc.py new.py && printf 'x = 1\\n' > new.py"}))),
        Step(Text("Fixed.")),
    ]
    client.decisions = ["once", "once"]
    await client.call("shiro/chat", {"text": "Fix add in calc.py."})
    after_read, after_edit, after_bash = (json.dumps(b["messages"][-1]) for b in model_bodies(fake)[1:])
    assert "What this changed" not in after_read
    assert (
        "What this changed:" in after_edit
        and "-    return a - b" in after_edit
        and "+    return a + b" in after_edit
    )
    assert "What this changed:" in after_bash and "+x = 1" in after_bash


async def test_a_remember_mid_turn_leaves_the_system_prompt_as_it_was(
    client: ShiroClient, fake: FakeOpenAI
) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"shiro": {"contextWindow": 200_000}})
    )
    fake.script += [
        Step(Text(fenced_call("remember", {"kind": "fact", "text": "The tests run with make check."}))),
        Step(Text("Noted.")),
    ]
    await client.call("shiro/chat", {"text": "Remember that the tests run with make check."})
    first, second = model_bodies(fake)
    assert system_prompt_of(second) == system_prompt_of(first)


EXAMPLE_PHRASE = re.compile(r"\b(e\.g\.|for example|for instance|such as)", re.IGNORECASE)
QUOTED = re.compile(r"`([^`\n]+)`|\"([^\"\n]+)\"|'([^'\n]+)'")
VALUE_LIKE = re.compile(r"[\w*]\.[A-Za-z]{1,4}\b|\w\(|/\*|\*\*/")
"""A file name, a call or a path glob: what a small model copies from an example."""
FORMAT_NOTATION = frozenset({"--- a/path", "+++ b/path", "--- /dev/null", "+++ /dev/null"})


def example_values(text: str) -> list[str]:
    found = [m.group(0) for m in EXAMPLE_PHRASE.finditer(text)]
    for match in QUOTED.finditer(text):
        quoted = next(group for group in match.groups() if group is not None)
        if VALUE_LIKE.search(quoted) and quoted not in FORMAT_NOTATION:
            found.append(quoted)
    return found


@pytest.mark.parametrize("window", [8_192, 200_000])
async def test_no_prompt_or_tool_description_holds_an_example_value(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, window: int
) -> None:
    (workspace / ".git").mkdir()  # git tools offered too
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"shiro": {"contextWindow": window, "toolCallFormat": "text"}}
        )
    )
    fake.script += [Step(Text("a")), Step(Text("b"))]
    await client.call("shiro/chat", {"text": "hello"})
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"shiro": {"toolCallFormat": "native"}})
    )
    await client.call("shiro/chat", {"text": "hello again"})
    text_body, native_body = model_bodies(fake)
    seen = system_prompt_of(text_body) + system_prompt_of(native_body) + json.dumps(native_body["tools"])
    assert "<tools>" in system_prompt_of(text_body) and "grep" in seen
    assert example_values(seen) == []


async def test_a_small_window_samples_greedy_unless_a_temperature_is_set(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    fake.script += [Step(Text("Hello.")), Step(Text("Hello again.")), Step(Text("And again."))]
    await client.call("shiro/chat", {"text": "Say hello."})
    for settings in ({"contextWindow": 200_000}, {"temperature": 0.7}):
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"shiro": settings})
        )
        await client.call("shiro/chat", {"text": "Say hello again."})
    small, large, configured = model_bodies(fake)
    assert small["temperature"] == 0
    assert "temperature" not in large  # a large window keeps the server's default
    assert configured["temperature"] == 0.7


async def test_a_small_model_sent_back_is_sampled_once_unless_a_temperature_is_set(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    """Greedy, a small model answers a reminder as it answered before, word for word: the step after
    Shiro sent it back is sampled; the steps after that are greedy again."""
    looping = "".join(f"    assert clamp({n}, 0, {n}) == {n}\n" for n in range(200))  # cut, then sent back
    fake.script += [Step(Text(looping, chunks=50)), Step(Text("Done.")), Step(Text("Hello."))]
    await client.call("shiro/chat", {"text": "Cover clamp with asserts."})
    await client.call("shiro/chat", {"text": "Say hello."})
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"shiro": {"temperature": 0.2}})
    )
    fake.script += [Step(Text(looping, chunks=50)), Step(Text("Done."))]
    await client.call("shiro/chat", {"text": "Cover clamp with asserts."})
    sent = [body["messages"][-1]["content"] for body in model_bodies(fake)]
    assert "kept repeating" in sent[1] and "kept repeating" in sent[4]  # sent back both times
    assert [body["temperature"] for body in model_bodies(fake)] == [0, 0.7, 0, 0.2, 0.2]


async def test_a_model_that_calls_natively_is_offered_the_file_tools_from_its_next_turn(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "calc.py").write_text(CALC)
    fake.script += [
        Step(ToolCall("read_file", {"path": "calc.py"}, call_id="r1")),
        Step(Text("add subtracts.")),
        Step(Text("Sure.")),
        Step(Text("Sure.")),  # sent back once: nothing was changed
    ]
    await client.call("shiro/chat", {"text": "What is wrong in calc.py?"})
    await client.call("shiro/chat", {"text": "Then fix it."})
    first, _, next_turn, _ = model_bodies(fake)
    assert "tools" not in first  # the whole workspace was shown
    assert {"edit_file", "write_file"} <= {t["function"]["name"] for t in next_turn["tools"]}
    assert "fenced code block" not in system_prompt_of(next_turn)
