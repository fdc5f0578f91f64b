"""What the model is told of the user's undos: a code-only restore counts, said once per session;
a restore that also rewinds the chat does not (the model no longer remembers those changes)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from shiro_lsp.checkpoints.recorder import TurnChanges
from shiro_lsp.checkpoints.review import ChatSession, Checkpoints
from shiro_lsp.messages import Message
from shiro_lsp.state.checkpoints import CheckpointStore, RestoreMode


def written(tmp_path: Path) -> tuple[Checkpoints, TurnChanges, list[Message]]:
    workspace, state = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    checkpoints = Checkpoints(CheckpointStore(state / "checkpoints"), workspace, "p", state)
    turn = checkpoints.turn("s1", "t1", "write it", 0)

    async def call() -> None:
        watch = await turn.before("bash", {"command": "..."})
        (workspace / "f.txt").write_text("new\n")
        await turn.after(watch)

    asyncio.run(call())
    turn.finish()
    return (
        checkpoints,
        turn,
        [{"role": "user", "content": "write it"}, {"role": "assistant", "content": "ok"}],
    )


def restored(checkpoints: Checkpoints, turn: TurnChanges, chat: list[Message], mode: RestoreMode) -> None:
    assert turn.checkpoint is not None
    checkpoints.restore("s1", turn.checkpoint.id, mode, ChatSession(lambda: chat, lambda m: None))


def test_a_code_restore_is_told_once(tmp_path: Path) -> None:
    checkpoints, turn, chat = written(tmp_path)
    restored(checkpoints, turn, chat, "code")
    assert checkpoints.undone_note("s2") == ""
    assert "undid your changes to f.txt:" in checkpoints.undone_note("s1")
    assert checkpoints.undone_note("s1") == ""


def test_a_restore_of_the_chat_too_is_not_told(tmp_path: Path) -> None:
    checkpoints, turn, chat = written(tmp_path)
    restored(checkpoints, turn, chat, "both")
    assert checkpoints.undone_note("s1") == ""
