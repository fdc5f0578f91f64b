"""A repository's files never choose what runs in a workspace the user has not trusted (issue 33).

Through the real server over stdio, with a scripted model that answers the way
Qwen2.5-Coder-1.5B does (a file written out as text, a small window from llama.cpp's /props): Shiro
runs the project's test runner itself after a change, but only where the workspace is trusted; the
runner is found from the repository's files, so in an untrusted workspace it is never chosen (there
restricted mode refuses every write and command as well: the two guards are independent).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.fake_openai import FakeOpenAI, Step, Text
from fakes.fixtures import options
from fakes.local_servers import LLAMACPP_MODEL, serve
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]

SHELF = "def shelf_height(boxes):\n    return sum(boxes)\n"
SHELF_WITH_GAP = "def shelf_height(boxes, gap=1):\n    return sum(boxes) + gap * max(len(boxes) - 1, 0)\n"
SHELF_TEST = "from shelf import shelf_height\n\n\ndef test_empty():\n    assert shelf_height([]) == 0\n"


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI, trusted: bool) -> dict[str, object]:
    serve(fake, "llamacpp")
    fake.chat_dialect = "llamacpp"
    return options(home, fake, model=LLAMACPP_MODEL, approvalTimeoutMs=5000, trusted=trusted)


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted", "untrusted"])
async def test_the_detected_test_runner_runs_only_in_a_trusted_workspace(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, trusted: bool
) -> None:
    (workspace / "pytest.ini").write_text("[pytest]\n")
    (workspace / "shelf.py").write_text(SHELF)
    (workspace / "test_shelf.py").write_text(SHELF_TEST)
    reply = f"shelf.py\n```python\n{SHELF_WITH_GAP}```\n\nshelf.py adds a gap between boxes now."
    fake.script += [Step(Text(reply, chunks=2)), Step(Text(reply, chunks=2)), Step(Text("Done."))]
    client.decisions = ["once"] * 3
    result = await client.call("shiro/chat", {"text": "Leave a gap of one between the boxes on a shelf."})
    events = client.events(result["taskId"])
    ran = [e["input"].get("command") for e in events if e["type"] == "tool-call" and e["name"] == "bash"]
    if trusted:
        assert (workspace / "shelf.py").read_text() == SHELF_WITH_GAP
        assert ran == ["python3 -m pytest -q"]  # the project's tests, run by Shiro after the change
        return
    # restricted mode: the write is refused, and no command the repository's files point at runs
    assert (workspace / "shelf.py").read_text() == SHELF
    assert ran == [] and client.approvals == []
    assert any("restricted mode" in e.get("reason", "") for e in events if e["type"] == "tool-denied")
