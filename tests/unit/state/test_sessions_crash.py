"""Crash safety: SIGKILL a real process at random moments during 200 autosaves of a growing session."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from shiro_lsp.state.paths import StatePaths
from shiro_lsp.state.sessions import SessionStore

TOTAL = 200
WORKSPACE = "/crash/workspace"

CHILD = r"""
import asyncio, sys
from pathlib import Path
from shiro_lsp.errors import NotFound
from shiro_lsp.state.paths import StatePaths
from shiro_lsp.state.sessions import SessionManager, SessionStore

def message(i):
    role = "user" if i % 2 == 0 else "assistant"
    return {"role": role, "content": f"message {i} " + "lorem ipsum dolor " * (40 + i)}

async def main(root, total):
    sessions = SessionManager(
        SessionStore(StatePaths(Path(root))), cwd=WORKSPACE, provider="openai",
        model=lambda: "gpt-5", autosave_delay=0.001,
    )
    try:
        live = await sessions.resume(latest=True)
    except NotFound:
        live = sessions.current
    saved = asyncio.Event()
    sessions.on_changed = lambda session: saved.set()
    print("ready", len(live.messages), flush=True)
    for i in range(len(live.messages), total):
        saved.clear()
        live.append(message(i))
        await saved.wait()  # one autosave per change
        print("saved", i + 1, flush=True)
    print("done", flush=True)

WORKSPACE = sys.argv[3]
asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


def message(i: int) -> dict[str, Any]:
    role = "user" if i % 2 == 0 else "assistant"
    return {"role": role, "content": f"message {i} " + "lorem ipsum dolor " * (40 + i)}


def check_every_file_holds_a_prefix(root: Path, seed: int) -> int:
    files = list((root / "sessions").glob("*.json")) if (root / "sessions").exists() else []
    assert len(files) <= 1, f"seed {seed}: one session only, found {files}"
    if not files:
        return 0
    value = json.loads(files[0].read_bytes())  # must parse: never a torn file
    messages = value["messages"]
    assert messages == [message(i) for i in range(len(messages))], f"seed {seed}: not a prefix"
    assert value["cwd"] == WORKSPACE and value["title"].startswith("message 0 ")
    listed = SessionStore(StatePaths(root)).list(cwd=WORKSPACE)
    assert [s.message_count for s in listed] == [len(messages)], f"seed {seed}: index out of step"
    return len(messages)


def run_child(root: Path, kill_after: float | None) -> tuple[int, str]:
    process = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), str(TOTAL), WORKSPACE],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    assert first.startswith("ready"), (first, process.stderr.read() if process.stderr else "")
    if kill_after is not None:
        time.sleep(kill_after)
        os.kill(process.pid, signal.SIGKILL)
    output, errors = process.communicate(timeout=60)
    assert kill_after is not None or process.returncode == 0, errors
    return process.returncode, first + output


@pytest.mark.slow
def test_sigkill_during_autosaves_never_leaves_a_torn_or_mixed_file(tmp_path: Path) -> None:
    seed = random.SystemRandom().randrange(1 << 30)
    rng = random.Random(seed)
    root = tmp_path / "state"
    kills = 0
    saved = 0
    while kills < 8 and saved < TOTAL:
        returncode, output = run_child(root, kill_after=rng.uniform(0.0, 0.4))
        if returncode == -signal.SIGKILL:
            kills += 1
        now = check_every_file_holds_a_prefix(root, seed)
        assert now >= saved, f"seed {seed}: the session went back from {saved} to {now} messages"
        reported = [int(line.split()[1]) for line in output.splitlines() if line.startswith("saved")]
        if reported:
            assert now >= reported[-1], f"seed {seed}: a save the child saw complete was lost"
        saved = now
    assert kills >= 1, f"seed {seed}: no run was killed mid-way"
    run_child(root, kill_after=None)
    assert check_every_file_holds_a_prefix(root, seed) == TOTAL
