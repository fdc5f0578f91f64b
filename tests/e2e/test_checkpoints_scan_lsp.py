"""More checkpoints through the real server over stdio: bash turns in a plain folder with the
watcher (a user's edit between turns, a new directory tree, a symlink), two edits of one file in a
turn, and an approval preview of a file too large to show."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_checkpoints_lsp import ALLOW_ALL, init_options, permissions, tool_events, turn

from fakes.fake_openai import FakeOpenAI, ToolCall
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]
__all__ = ["init_options", "permissions"]  # fixtures


async def test_a_bash_turn_after_a_user_edit_makes_a_tree_and_a_symlink(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\n")
    await turn(client, fake, "look", ToolCall("bash", {"command": "ls"}))
    (workspace / "a.txt").write_text("the user's line\n")  # between the turns, in the editor
    result = await turn(
        client,
        fake,
        "generate",
        ToolCall(
            "bash",
            {
                "command": "sed -i s/user/bash/ a.txt && mkdir -p gen/sub && echo made > gen/sub/out.txt "
                "&& ln -s a.txt link"
            },
        ),
    )
    (card,) = tool_events(client, result["taskId"], "tool-result")
    assert [f["path"] for f in card["files"]] == ["a.txt", "gen/sub/out.txt"]
    rows = {f["path"]: f["status"] for f in (await client.call("shiro/changes", {}))["files"]}
    assert rows == {"a.txt": "modified", "gen/sub/out.txt": "added"}
    checkpoint = (await client.call("shiro/checkpoint/list", {}))["checkpoints"][0]
    assert any(note.startswith("link: a symbolic link") for note in checkpoint["notCovered"])

    restored = await client.call("shiro/checkpoint/restore", {"id": checkpoint["id"], "mode": "code"})
    assert restored["restored"] == ["a.txt", "gen/sub/out.txt"] and restored["conflicts"] == []
    assert (workspace / "a.txt").read_text() == "the user's line\n"  # the user's edit, not the original
    assert not (workspace / "gen" / "sub" / "out.txt").exists()
    assert (workspace / "link").is_symlink()  # not recorded, as the checkpoint said


async def test_two_edits_of_one_file_in_a_turn_undo_to_the_first_bytes(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "m.py").write_text("A = 1\nB = 2\n")
    result = await turn(
        client,
        fake,
        "bump both",
        ToolCall("edit_file", {"path": "m.py", "oldString": "A = 1", "newString": "A = 10"}, "e1"),
        ToolCall("edit_file", {"path": "m.py", "oldString": "B = 2", "newString": "B = 20"}, "e2"),
        ToolCall("write_file", {"path": "new.txt", "content": "fresh\n"}, "w1"),
    )
    first, second, third = tool_events(client, result["taskId"], "tool-result")
    assert "-A = 1\n+A = 10\n" in first["diff"] and "+B = 20" not in first["diff"]
    assert "-B = 2\n+B = 20\n" in second["diff"]  # each card shows its own call's change
    assert third["files"][0]["status"] == "added"
    rows = {
        f["path"]: (f["additions"], f["deletions"]) for f in (await client.call("shiro/changes", {}))["files"]
    }
    assert rows == {"m.py": (2, 2), "new.txt": (1, 0)}
    for path in ("m.py", "new.txt"):
        assert (await client.call("shiro/changes/undo", {"path": path}))["undone"] is True
    assert (workspace / "m.py").read_text() == "A = 1\nB = 2\n" and not (workspace / "new.txt").exists()


@pytest.mark.parametrize("permissions", [{**ALLOW_ALL, "write_file": "ask"}])
async def test_a_file_too_large_to_preview_gets_a_note(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, permissions: dict[str, Any]
) -> None:
    content = "x" * 80 + "\n"
    big = content * 8000  # 648,000 bytes
    client.decisions = ["once"]
    await turn(client, fake, "write it", ToolCall("write_file", {"path": "big.txt", "content": big}))
    (approval,) = client.approvals
    preview = approval["preview"]
    assert preview["binary"] is True and preview["before"] is None
    assert "too large to preview" in preview["after"] and len(preview["after"]) < 200
    assert (workspace / "big.txt").read_text() == big


async def test_a_turns_own_counts_stay_when_a_later_turn_edits_the_file(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "m.py").write_text("A = 1\nB = 2\n")
    first = await turn(
        client,
        fake,
        "one",
        ToolCall("edit_file", {"path": "m.py", "oldString": "A = 1", "newString": "A = 10"}),
    )
    await turn(
        client,
        fake,
        "two",
        ToolCall("edit_file", {"path": "m.py", "oldString": "B = 2", "newString": "B = 20\nC = 3"}),
    )
    (row,) = (await client.call("shiro/changes", {"taskId": first["taskId"]}))["files"]
    assert (row["additions"], row["deletions"]) == (3, 2)  # the first turn's checkpoint vs the file now
    assert (row["turnAdditions"], row["turnDeletions"]) == (1, 1)  # what the first turn itself did
    (latest,) = (await client.call("shiro/changes", {}))["files"]
    assert (latest["turnAdditions"], latest["turnDeletions"]) == (2, 1)
