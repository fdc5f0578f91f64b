"""Issue 20, Robustness: a jail refusal raised by change tracking is a tool error, and the turn goes on.

A directory swapped for a symlink between a tool's write and the checkpoint's look after it (what a
symlink-swap race does) makes the real checkpoint refuse the path. The turn used to end with
"Internal error: Path escapes workspace"; now the call that met it is a tool error, the step's other
calls keep their results, and nothing outside the workspace is touched.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from test_turn import make_turn

from fakes.scripted_client import Call, Reply, ScriptedClient
from shiro_lsp.agent import events as ev
from shiro_lsp.agent.loop import Turn
from shiro_lsp.checkpoints.recorder import TurnChanges
from shiro_lsp.checkpoints.review import Checkpoints
from shiro_lsp.state.checkpoints import CheckpointStore


class SwappedAfterTheWrite(TurnChanges):
    """The real turn recorder; ``dir`` is a symlink out of the workspace while it looks after a call."""

    def __init__(self, owner: Checkpoints, outside: Path) -> None:
        super().__init__(owner.files, "s", "t", "go", 0)
        self.outside = outside

    async def after(self, watch: Any, prepare: str | None = None) -> Any:
        link, parked = self.files.workspace / "dir", self.files.workspace / "dir_real"
        os.rename(link, parked)
        os.symlink(self.outside, link)
        try:
            return await super().after(watch, prepare)
        finally:
            os.unlink(link)
            os.rename(parked, link)


async def test_a_jail_refusal_in_the_checkpoint_after_a_call_is_not_the_end_of_the_turn(
    tmp_path: Path,
) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    (workspace / "dir").mkdir(parents=True)
    outside.mkdir()
    (workspace / "dir" / "a.txt").write_text("before\n")
    client = ScriptedClient(
        Reply(
            calls=[
                Call("move_file", {"from": "dir/a.txt", "to": "dir/b.txt"}, "w1"),
                Call("read_file", {"path": "dir/b.txt"}, "r1"),
            ]
        ),
        Reply("done"),
    )
    turn, history, emitted, _ = make_turn(workspace, client, decisions=["once"])
    state = tmp_path / "state"
    owner = Checkpoints(CheckpointStore(state / "checkpoints"), workspace, "p", state)
    turn = Turn(
        dataclasses.replace(turn.setup, changes=SwappedAfterTheWrite(owner, outside)), history, emitted.append
    )

    outcome = await turn.run("write it")

    assert outcome.stop_reason == "done", [e for e in emitted if isinstance(e, ev.Failed)]
    assert (workspace / "dir" / "b.txt").read_text() == "before\n"  # the write itself went through
    results = {
        part["toolCallId"]: part for m in history.messages if m["role"] == "tool" for part in m["content"]
    }
    assert set(results) == {"w1", "r1"}
    assert "before" in str(results["r1"]["output"])
    assert list(outside.iterdir()) == []
    notices = [e.text for e in emitted if isinstance(e, ev.Notice)]
    assert any("dir/a.txt" in n for n in notices), notices  # the user hears the change was not recorded
