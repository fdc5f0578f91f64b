"""The headless front door against a real model server (llama.cpp's llama-server, Ollama, ...).

Skipped unless ``SHIRO_REAL_MODEL_URL`` names an OpenAI-compatible base URL (``make test-real``
says how to start one). ``SHIRO_REAL_MODEL`` picks the model (default: the first one the server
lists). On CPU a step takes minutes; the timeouts here are generous on purpose.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from shiro_lsp.providers.models import list_endpoint_models

URL = os.environ.get("SHIRO_REAL_MODEL_URL", "")
pytestmark = [
    pytest.mark.skipif(
        not URL,
        reason="no real model server: set SHIRO_REAL_MODEL_URL=http://127.0.0.1:8091/v1 (see `make test-real`)",
    ),
    pytest.mark.timeout(1800),
]


async def model_id() -> str:
    if os.environ.get("SHIRO_REAL_MODEL"):
        return os.environ["SHIRO_REAL_MODEL"]
    listing = await list_endpoint_models(URL, None)
    assert listing.error is None, listing.error
    assert listing.models, f"{URL} lists no models"
    return listing.models[0].id


async def headless(
    workspace: Path, home: Path, prompt: str, *args: str
) -> tuple[int, list[dict[str, object]]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHIRO_"))}
    env |= {"OPENAI_BASE_URL": URL, "SHIRO_MODEL": await model_id()}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "shiro_lsp", "run", "--json", "--workspace", str(workspace), "--home", str(home),
        *args, "-p", prompt,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(process.communicate(), 1700)
    return process.returncode or 0, [json.loads(line) for line in out.decode().splitlines() if line.strip()]


async def test_a_real_model_reads_a_file_through_a_tool(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("The launch code is 4417.\n")
    code, events = await headless(
        workspace,
        tmp_path / "state",
        "Read the file notes.txt with the read_file tool and tell me the launch code.",
    )
    assert code == 0, events
    results = [e for e in events if e["type"] == "tool-result" and e["name"] == "read_file"]
    assert results, f"no read_file ran: {events}"
    answer = "".join(str(e["text"]) for e in events if e["type"] == "text")
    assert '"name"' not in answer, "a tool call was shown as the answer"
    done = events[-1]
    assert done["type"] == "done"


async def test_a_real_model_ends_its_turn(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    code, events = await headless(workspace, tmp_path / "state", "What is the capital of France? One word.")
    assert code == 0 and events[-1]["type"] == "done", events
    assert "paris" in "".join(str(e["text"]) for e in events if e["type"] == "text").lower()
