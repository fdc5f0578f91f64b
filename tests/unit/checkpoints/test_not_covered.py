"""What a restore may put back, over more than one turn, on real files with the real scanner:
a file whose earlier bytes a turn did not record, or that the user saved while a turn ran, is
never written or removed by a restore that reaches back to it (issue 20, "Checkpoints")."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from shiro_lsp.checkpoints import scan
from shiro_lsp.checkpoints.recorder import TurnChanges
from shiro_lsp.checkpoints.review import ChatSession, Checkpoints
from shiro_lsp.messages import Message
from shiro_lsp.state.checkpoints import CheckpointStore


def service(tmp_path: Path) -> tuple[Checkpoints, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    state = tmp_path / "state"
    return Checkpoints(CheckpointStore(state / "checkpoints"), workspace, "p", state), workspace


def bash_turn(checkpoints: Checkpoints, number: int, command: Callable[[], object]) -> TurnChanges:
    """One turn whose one bash call does ``command`` (the scan around it is the real one)."""
    turn = checkpoints.turn("s1", f"t{number}", f"turn {number}", number * 2)

    async def call() -> None:
        watch = await turn.before("bash", {"command": "..."})
        command()
        await turn.after(watch)

    asyncio.run(call())
    turn.finish()
    return turn


def restore(checkpoints: Checkpoints, turn: TurnChanges) -> tuple[list[str], list[str], list[str]]:
    assert turn.checkpoint is not None
    chat: list[Message] = []
    outcome = checkpoints.restore("s1", turn.checkpoint.id, "code", ChatSession(lambda: chat, chat.extend))
    return outcome.restored, outcome.conflicts, outcome.not_covered


def test_a_turn_without_the_earlier_bytes_is_not_covered_and_a_later_one_that_has_them_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "MAX_FILE_BYTES", 1000)
    checkpoints, ws = service(tmp_path)
    (ws / "f.txt").write_bytes(b"x" * 2000)  # over the (patched) limit: its bytes are not recorded
    first = bash_turn(checkpoints, 1, lambda: (ws / "f.txt").write_text("small\n"))
    second = bash_turn(checkpoints, 2, lambda: (ws / "f.txt").write_text("smaller\n"))

    assert restore(checkpoints, second) == (["f.txt"], [], [])  # recorded: put back
    assert (ws / "f.txt").read_text() == "small\n"
    assert restore(checkpoints, first) == ([], [], ["f.txt"])  # never truncated or removed
    assert (ws / "f.txt").read_text() == "small\n"


def test_a_users_save_in_a_later_turn_keeps_an_earlier_restore_off_the_file(tmp_path: Path) -> None:
    checkpoints, ws = service(tmp_path)
    first = bash_turn(checkpoints, 1, lambda: (ws / "n.txt").write_text("the agent's\n"))

    def the_user_saves_while_a_command_runs() -> None:
        (ws / "n.txt").write_text("the user's\n")
        checkpoints.saved_by_user(str(ws / "n.txt"))
        (ws / "other.txt").write_text("the command's\n")

    second = bash_turn(checkpoints, 2, the_user_saves_while_a_command_runs)
    assert second.checkpoint is not None and second.checkpoint.files["n.txt"].by_user

    assert restore(checkpoints, second) == (["other.txt"], [], ["n.txt"])  # the command's file goes
    assert restore(checkpoints, first) == ([], [], ["n.txt"])  # the user's save is in the run: theirs
    assert (ws / "n.txt").read_text() == "the user's\n" and not (ws / "other.txt").exists()
