"""What a small model (16k window) sees of a real-sized repository on its first request:
`shiro-lsp run --json --yolo` against a scripted llama.cpp server."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from fakes.fake_openai import FakeOpenAI, Step, Text
from fakes.local_servers import LLAMACPP_MODEL, serve

pytest_plugins = ["fakes.fixtures"]

SURVEY = '''"""Survey adjustments."""

from survey.units import to_metres


def traverse_closure(legs: list[tuple[float, float]]) -> float:
    east = sum(dx for dx, _ in legs)
    north = sum(dy for _, dy in legs)
    return to_metres((east**2 + north**2) ** 0.5)
'''


@pytest.fixture
def local(fake: FakeOpenAI) -> FakeOpenAI:
    serve(fake, "llamacpp")
    fake.chat_dialect = "llamacpp"
    return fake


def repository(root: Path) -> Path:
    """A survey package of 70 modules, docs and locale folders, the function the user names deep in it."""
    package = root / "survey"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "units.py").write_text("def to_metres(feet: float) -> float:\n    return feet * 0.3048\n")
    (package / "adjust.py").write_text(SURVEY)
    for n in range(60):
        (package / f"station_{n:02}.py").write_text(
            f"from survey.units import to_metres\n\n\ndef station_{n:02}_height(raw):\n    return to_metres(raw)\n"
        )
    for lang in ("de", "fr", "ja", "pt", "es"):
        (root / "locale" / lang).mkdir(parents=True)
        (root / "locale" / lang / "messages.po").write_text('msgid "closure"\nmsgstr ""\n')
    (root / "docs").mkdir()
    (root / "docs" / "index.md").write_text("# Survey\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_adjust.py").write_text(
        "from survey.adjust import traverse_closure\n\n\ndef test_square():\n"
        "    assert traverse_closure([(1, 0), (0, 1), (-1, 0), (0, -1)]) == 0\n"
    )
    return root


async def run(fake: FakeOpenAI, workspace: Path, home: Path, prompt: str) -> list[dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHIRO_"))}
    env |= {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "x", "SHIRO_MODEL": LLAMACPP_MODEL}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "shiro_lsp", "run", "--json", "--yolo", "--workspace", str(workspace)),
        *("--home", str(home), "-p", prompt),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode() + out.decode()
    return [json.loads(line) for line in out.decode().splitlines()]


async def test_a_function_named_in_a_large_repository_reaches_the_first_request(
    local: FakeOpenAI, tmp_path: Path
) -> None:
    workspace = repository(tmp_path / "ws")
    local.script += [Step(Text("It sums the legs and converts the misclosure to metres."))]
    await run(local, workspace, tmp_path / "state", "How does traverse_closure report its result?")
    (first,) = local.bodies("/chat/completions")
    sent = first["messages"][-1]["content"]
    assert "survey/adjust.py\n```\n" + SURVEY.rstrip("\n") + "\n```" in sent  # the file, whole
    assert "tests/test_adjust.py\n```" in sent  # and its test
    assert "survey/units.py:\ndef to_metres(feet: float) -> float:" in sent  # the map of the rest
    assert "msgstr" not in sent and sent.index("survey/adjust.py") < sent.index("How does traverse_closure")
