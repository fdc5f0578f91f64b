"""Every turn ends with what came of it as Shiro saw it (issue 34): `shiro-lsp run --json`'s done event
carries the files changed and the outcome, and a turn asked to change files that changed none says so.

The scripted model answers in llama-server's dialect the way Qwen2.5-Coder-1.5B did in a real panel:
asked for a fix, it wrote the file out unchanged and said the script should now work.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.local_servers import LLAMACPP_MODEL, serve

pytest_plugins = ["fakes.fixtures"]

LEDGER = 'ENTRIES = [{"amount": 3}, {}]\n\nprint(sum(entry["amount"] for entry in ENTRIES))\n'
UNCHANGED = f"ledger.py\n```python\n{LEDGER}```\n\nAfter making this change, the ledger.py script should work correctly."


async def run(fake: FakeOpenAI, workspace: Path, home: Path, prompt: str, model: str) -> list[dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHIRO_"))}
    env |= {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "x", "SHIRO_MODEL": model}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "shiro_lsp", "run", "--json", "--yolo", "--workspace", str(workspace),
        "--home", str(home), "-p", prompt,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode() + out.decode()
    return [json.loads(line) for line in out.decode().splitlines()]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "ledger.py").write_text(LEDGER)
    return path


async def test_a_fix_claimed_with_no_file_changed_is_said_and_in_the_done_event(
    fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    serve(fake, "llamacpp")
    fake.chat_dialect = "llamacpp"
    fake.script += [Step(Text(UNCHANGED, chunks=2)) for _ in range(4)]
    prompt = "python3 ledger.py raises KeyError: 'amount' for an entry without one. Use 0 then."
    events = await run(fake, workspace, tmp_path / "state", prompt, LLAMACPP_MODEL)
    done = events[-1]
    assert done["type"] == "done" and done["outcome"] == "unchanged" and done["changedFiles"] == []
    notice = events[-2]
    assert notice["type"] == "notice"
    assert notice["text"].startswith(
        "The answer says the code was changed, but no file was changed in this turn."
    )
    assert "ran `python3 ledger.py` (exit 1)" in notice["text"]
    assert (workspace / "ledger.py").read_text() == LEDGER


async def test_a_question_is_answered_with_no_notice_and_a_change_lists_its_file(
    fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    fake.script += [
        Step(Text("It prints the sum of the amounts; the second entry has none, so it raises KeyError.")),
        Step(
            ToolCall(
                "edit_file",
                {"path": "ledger.py", "oldString": 'entry["amount"]', "newString": 'entry.get("amount", 0)'},
            )
        ),
        Step(Text("I have updated ledger.py and summary.py.")),
    ]
    events = await run(fake, workspace, tmp_path / "state", "What does ledger.py print?", "gpt-5")
    assert events[-1]["outcome"] == "answered" and not [e for e in events if e["type"] == "notice"]
    events = await run(
        fake, workspace, tmp_path / "state", "Make ledger.py count a missing amount as 0.", "gpt-5"
    )
    assert (events[-1]["outcome"], events[-1]["changedFiles"]) == ("changed", ["ledger.py"])
    (notice,) = [e["text"] for e in events if e["type"] == "notice"]
    assert notice == "The answer says summary.py was changed, but this turn changed only ledger.py."
