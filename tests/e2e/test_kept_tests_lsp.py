"""Once the check failed, the tests that were there are kept: a small model shown a failure rewrites
them to agree with its code. Through the real server over stdio, with a scripted model that writes
files out the way Qwen2.5-Coder-1.5B does, and a configured check command that really runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.fixtures import options
from fakes.local_servers import LLAMACPP_MODEL, serve
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]

STUB = "def pages(sheets):\n    pass\n"
WRONG = "def pages(sheets):\n    return sheets * 2\n"
RIGHT = "def pages(sheets):\n    return sheets * 4\n"
TESTS = (
    "from booklet import pages\n\n\n"
    "def test_one_sheet_folds_into_four_pages():\n    assert pages(1) == 4\n\n\n"
    'if __name__ == "__main__":\n    test_one_sheet_folds_into_four_pages()\n'
)
TESTS_BENT = TESTS.replace("== 4", "== 2").replace("four", "two")
CHECK = "python3 test_booklet.py"


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI) -> dict[str, object]:
    serve(fake, "llamacpp")
    fake.chat_dialect = "llamacpp"
    return options(home, fake, model=LLAMACPP_MODEL, approvalTimeoutMs=5000, checkCommand=CHECK)


def listing(path: str, content: str) -> Step:
    return Step(Text(f"{path}\n```python\n{content}```\n\n{path} is done.", chunks=2))


async def chat(client: ShiroClient, text: str) -> list[dict[str, Any]]:
    client.decisions = ["always"] * 10
    result = await client.call("shiro/chat", {"text": text})
    return list(client.events(result["taskId"]))


async def test_after_a_failed_check_the_tests_already_there_are_not_rewritten(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "booklet.py").write_text(STUB)
    (workspace / "test_booklet.py").write_text(TESTS)
    bend = ToolCall("write_file", {"path": "test_booklet.py", "content": TESTS_BENT}, call_id="t1")
    fix = ToolCall("write_file", {"path": "booklet.py", "content": RIGHT}, call_id="t2")
    fake.script += [listing("booklet.py", WRONG), Step(bend), Step(fix)]  # a model that calls natively
    fake.script += [Step(Text("pages() counts four pages a sheet."))]
    events = await chat(
        client, "Fill in pages() in booklet.py: how many pages a number of folded sheets makes."
    )
    assert (workspace / "test_booklet.py").read_text() == TESTS
    assert (workspace / "booklet.py").read_text() == RIGHT
    denied = [e for e in events if e["type"] == "tool-denied"]
    assert [e["name"] for e in denied] == ["write_file"]
    assert "holds the tests" in denied[0]["reason"] and "change the code" in denied[0]["reason"]
    told = [e["text"] for e in events if e["type"] == "notice" and "kept test_booklet.py" in e["text"]]
    assert told == [
        f"Shiro kept test_booklet.py as it was: after `{CHECK}` failed, the model tried to change the tests "
        "instead of the code. If the tests are what is wrong, say so in a new message."
    ]
    ran = [e["input"]["command"] for e in events if e["type"] == "tool-call" and e["name"] == "bash"]
    assert ran == [CHECK, CHECK]


async def test_a_reply_that_begins_to_write_out_kept_tests_is_cut_there_and_sent_back(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "booklet.py").write_text(STUB)
    (workspace / "test_booklet.py").write_text(TESTS)
    rewrite = f"The test is wrong.\n\ntest_booklet.py\n```python\n{TESTS_BENT * 20}```\n"
    fake.script += [listing("booklet.py", WRONG), Step(Text(rewrite, chunks=40))]
    fake.script += [listing("booklet.py", RIGHT), Step(Text("pages() counts four pages a sheet."))]
    events = await chat(client, "Fill in pages() in booklet.py; test_booklet.py tests it.")
    assert (workspace / "test_booklet.py").read_text() == TESTS
    assert (workspace / "booklet.py").read_text() == RIGHT
    assert not [e for e in events if e["type"] == "tool-denied"]
    notices = [e["text"] for e in events if e["type"] == "notice"]
    assert "The model began to write out tests Shiro keeps as they are; Shiro cut its reply there." in notices
    third = fake.bodies("/chat/completions")[2]["messages"]
    assert third[-2]["content"].startswith("The test is wrong.")  # kept up to the listing
    assert "test_booklet.py\n```" not in json.dumps(third[-2])
    assert third[-1]["content"] == (
        "Your reply was cut where it began to write out test_booklet.py: it holds the tests, which stay as "
        f"they are. Change the code so that `{CHECK}` passes."
    )


async def test_tests_the_turn_began_with_may_change_again_after_a_failed_check(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "booklet.py").write_text(WRONG)
    (workspace / "test_booklet.py").write_text(TESTS)
    fake.script += [
        listing("test_booklet.py", TESTS.replace("== 4", "== 3")),
        listing("test_booklet.py", TESTS_BENT),
    ]
    fake.script += [Step(Text("The test expects two pages a sheet now."))]
    events = await chat(client, "test_booklet.py expects the wrong count: a sheet makes two pages here.")
    assert (workspace / "test_booklet.py").read_text() == TESTS_BENT
    assert not [e for e in events if e["type"] == "tool-denied"]
    ran = [e["input"]["command"] for e in events if e["type"] == "tool-call" and e["name"] == "bash"]
    assert ran == [CHECK, CHECK]
