"""Reviewable edits and checkpoints through the real server over stdio, against the scripted model.

Every workspace here is a plain folder (not a git repository) unless a test says otherwise.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from chat_helpers import eventually, model_bodies
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.fixtures import options
from lsp_client import SERVER_COMMAND, ShiroClient, initialize, make_client

pytest_plugins = ["fakes.fixtures"]

ALLOW_ALL = {
    "write_file": "allow",
    "edit_file": "allow",
    "multi_edit": "allow",
    "apply_patch": "allow",
    "move_file": "allow",
    "delete_file": "allow",
    "bash": "allow",
}


@pytest.fixture
def permissions() -> dict[str, Any]:
    return ALLOW_ALL


EXTRA: dict[str, object] = {"model": "gpt-5", "approvalTimeoutMs": 5000}


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI, permissions: dict[str, Any]) -> dict[str, object]:
    return options(home, fake, permissions, **EXTRA)


async def turn(client: ShiroClient, fake: FakeOpenAI, text: str, *calls: ToolCall) -> dict[str, Any]:
    fake.script += [Step(call) for call in calls] + [Step(Text("done"))]
    result: dict[str, Any] = await client.call("shiro/chat", {"text": text})
    assert result["stopReason"] == "done", result
    return result


def tool_events(client: ShiroClient, task_id: str, kind: str) -> list[dict[str, Any]]:
    return [e for e in client.events(task_id) if e["type"] == kind]


async def rpc_error(client: ShiroClient, method: str, params: dict[str, Any]) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await client.call(method, params)
    return caught.value


THREE_REGIONS = "".join(f"line {i}\n" for i in range(1, 31))


def edited_three_regions() -> str:
    lines = THREE_REGIONS.splitlines(keepends=True)
    lines[1] = "line 2 changed\n"
    lines[14] = "line 15 changed\n"
    lines[27] = "line 28 changed\n"
    return "".join(lines)


# --- edit, review, undo --------------------------------------------------------------------------


@pytest.mark.parametrize("permissions", [{}])
async def test_an_edit_is_previewed_diffed_listed_and_undone(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, permissions: dict[str, Any]
) -> None:
    (workspace / "app.py").write_text("def main():\n    return 1\n")
    client.decisions = ["once"]
    result = await turn(
        client,
        fake,
        "return 2",
        ToolCall("edit_file", {"path": "app.py", "oldString": "return 1", "newString": "return 2"}, "c1"),
    )
    (approval,) = client.approvals
    assert approval["preview"] == {
        "path": "app.py",
        "before": "def main():\n    return 1\n",
        "after": "def main():\n    return 2\n",
        "from": None,
        "binary": False,
        "additions": 1,
        "deletions": 1,
    }
    (card,) = tool_events(client, result["taskId"], "tool-result")
    assert "-    return 1\n+    return 2\n" in card["diff"]
    assert card["files"] == [
        {
            "path": "app.py",
            "status": "modified",
            "from": None,
            "additions": 1,
            "deletions": 1,
            "reviewed": False,
            "binary": False,
        }
    ]
    await eventually(lambda: bool(client.notifications["shiro/changes/changed"]))
    (changed,) = client.notifications["shiro/changes/changed"]
    assert changed["taskId"] == result["taskId"] and [f["path"] for f in changed["files"]] == ["app.py"]
    assert await client.call("shiro/changes", {}) == changed

    diff = await client.call("shiro/changes/diff", {"path": "app.py"})
    assert diff["before"] == "def main():\n    return 1\n" and diff["after"] == "def main():\n    return 2\n"
    assert [h["header"] for h in diff["hunks"]] == ["@@ -2 +2 @@"]

    undone = await client.call("shiro/changes/undo", {"path": "app.py"})
    assert undone == {"path": "app.py", "undone": True, "conflict": None}
    assert (workspace / "app.py").read_text() == "def main():\n    return 1\n"
    (row,) = (await client.call("shiro/changes", {}))["files"]
    assert row["reviewed"] is True and row["additions"] == 0


@pytest.mark.parametrize("permissions", [{}])
async def test_the_approval_and_the_tool_card_count_an_edit_the_same(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, permissions: dict[str, Any]
) -> None:
    """One line added among several: the approval card and the tool card's row both say +1 -0 (the
    edit's own snippets, "line 3" -> "line 3\nline 3b", would count +2 -1 as a diff of their own)."""
    (workspace / "notes.txt").write_text("".join(f"line {i}\n" for i in range(1, 7)))
    client.decisions = ["once"]
    edit = {"path": "notes.txt", "oldString": "line 3", "newString": "line 3\nline 3b"}
    result = await turn(client, fake, "add a line", ToolCall("edit_file", edit, "c1"))
    (approval,) = client.approvals
    asked = (approval["preview"]["additions"], approval["preview"]["deletions"])
    (card,) = tool_events(client, result["taskId"], "tool-result")
    (row,) = card["files"]
    assert asked == (row["additions"], row["deletions"]) == (1, 0)


async def test_undo_of_one_hunk_of_three_keeps_the_other_two(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "long.txt").write_text(THREE_REGIONS)
    await turn(
        client, fake, "edit", ToolCall("write_file", {"path": "long.txt", "content": edited_three_regions()})
    )
    diff = await client.call("shiro/changes/diff", {"path": "long.txt"})
    assert [h["header"] for h in diff["hunks"]] == ["@@ -2 +2 @@", "@@ -15 +15 @@", "@@ -28 +28 @@"]
    assert await client.call("shiro/changes/undo", {"path": "long.txt", "hunks": [1]}) == {
        "path": "long.txt",
        "undone": True,
        "conflict": None,
    }
    text = (workspace / "long.txt").read_text()
    assert "line 2 changed\n" in text and "line 28 changed\n" in text
    assert "line 15\n" in text and "line 15 changed" not in text
    (row,) = (await client.call("shiro/changes", {}))["files"]
    assert (row["additions"], row["deletions"], row["reviewed"]) == (2, 2, False)
    error = await rpc_error(client, "shiro/changes/undo", {"path": "long.txt", "hunks": [5]})
    assert error.code == -32602 and "hunk 5" in error.message


async def test_keep_marks_files_reviewed(client: ShiroClient, fake: FakeOpenAI, workspace: Path) -> None:
    await turn(
        client,
        fake,
        "two files",
        ToolCall("write_file", {"path": "a.txt", "content": "a\n"}, "c1"),
        ToolCall("write_file", {"path": "b.txt", "content": "b\n"}, "c2"),
    )
    assert await client.call("shiro/changes/keep", {"path": "a.txt"}) == {"kept": 1}
    rows = {f["path"]: f for f in (await client.call("shiro/changes", {}))["files"]}
    assert rows["a.txt"]["reviewed"] and not rows["b.txt"]["reviewed"]
    assert rows["a.txt"]["status"] == "added"
    assert await client.call("shiro/changes/keep", {}) == {"kept": 1}
    assert (workspace / "a.txt").read_text() == "a\n"


async def test_a_file_the_user_edited_since_is_a_conflict_and_keeps_their_bytes(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "conf.txt").write_text("original\n")
    result = await turn(
        client, fake, "change it", ToolCall("write_file", {"path": "conf.txt", "content": "by the agent\n"})
    )
    (workspace / "conf.txt").write_text("by the user\n")
    undone = await client.call("shiro/changes/undo", {"path": "conf.txt"})
    assert undone["undone"] is False and "conf.txt" in undone["conflict"]
    (checkpoint,) = (await client.call("shiro/checkpoint/list", {}))["checkpoints"]
    assert checkpoint["taskId"] == result["taskId"] and checkpoint["prompt"] == "change it"
    restored = await client.call("shiro/checkpoint/restore", {"id": checkpoint["id"], "mode": "code"})
    assert restored["conflicts"] == ["conf.txt"] and restored["restored"] == []
    assert (workspace / "conf.txt").read_text() == "by the user\n"


# --- the new tools -------------------------------------------------------------------------------

PATCH_OK_THEN_FAIL = """--- a/one.txt
+++ b/one.txt
@@ -1,3 +1,3 @@
 alpha
-beta
+BETA
 gamma
--- a/two.txt
+++ b/two.txt
@@ -1,2 +1,2 @@
 one
-two
+TWO
@@ -10,2 +10,2 @@
 not in the file
-at all
+really
"""


async def test_apply_patch_whose_second_file_fails_changes_nothing(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "one.txt").write_text("alpha\nbeta\ngamma\n")
    (workspace / "two.txt").write_text("one\ntwo\nthree\n")
    result = await turn(client, fake, "patch", ToolCall("apply_patch", {"patch": PATCH_OK_THEN_FAIL}, "p1"))
    (error,) = tool_events(client, result["taskId"], "tool-error")
    assert "hunk 2 of two.txt" in error["error"] and "Nothing was changed" in error["error"]
    assert (workspace / "one.txt").read_text() == "alpha\nbeta\ngamma\n"
    assert (workspace / "two.txt").read_text() == "one\ntwo\nthree\n"
    assert "hunk 2 of two.txt" in json.dumps(model_bodies(fake)[1])
    assert (await client.call("shiro/changes", {}))["files"] == []


async def test_apply_patch_across_two_files_applies_both_and_undoes(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "one.txt").write_text("alpha\nbeta\ngamma\n")
    (workspace / "two.txt").write_text("one\ntwo\nthree\n")
    patch = PATCH_OK_THEN_FAIL.split("@@ -10,2")[0]
    patch += "--- /dev/null\n+++ b/new/three.txt\n@@ -0,0 +1,1 @@\n+fresh\n"
    result = await turn(client, fake, "patch", ToolCall("apply_patch", {"patch": patch}, "p1"))
    (card,) = tool_events(client, result["taskId"], "tool-result")
    assert [f["path"] for f in card["files"]] == ["one.txt", "two.txt", "new/three.txt"]
    assert (workspace / "one.txt").read_text() == "alpha\nBETA\ngamma\n"
    assert (workspace / "two.txt").read_text() == "one\nTWO\nthree\n"
    assert (workspace / "new" / "three.txt").read_text() == "fresh\n"
    (checkpoint,) = (await client.call("shiro/checkpoint/list", {}))["checkpoints"]
    restored = await client.call("shiro/checkpoint/restore", {"id": checkpoint["id"], "mode": "code"})
    assert restored["restored"] == ["new/three.txt", "one.txt", "two.txt"]
    assert not (workspace / "new" / "three.txt").exists()
    assert (workspace / "one.txt").read_text() == "alpha\nbeta\ngamma\n"


async def test_delete_file_comes_back_with_its_bytes_and_mode(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    script = workspace / "run.sh"
    script.write_bytes(b"#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    result = await turn(client, fake, "remove it", ToolCall("delete_file", {"path": "run.sh"}))
    assert not script.exists()
    (row,) = (await client.call("shiro/changes", {"taskId": result["taskId"]}))["files"]
    assert row["status"] == "deleted" and row["deletions"] == 2
    assert (await client.call("shiro/changes/diff", {"path": "run.sh"}))["after"] is None
    assert (await client.call("shiro/changes/undo", {"path": "run.sh"}))["undone"] is True
    assert script.read_bytes() == b"#!/bin/sh\necho hi\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


async def test_move_file_is_one_moved_row_and_undoes(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "old.txt").write_text("content\n")
    await turn(client, fake, "rename", ToolCall("move_file", {"from": "old.txt", "to": "sub/new.txt"}))
    assert (workspace / "sub" / "new.txt").read_text() == "content\n" and not (workspace / "old.txt").exists()
    (row,) = (await client.call("shiro/changes", {}))["files"]
    assert (row["path"], row["status"], row["from"]) == ("sub/new.txt", "moved", "old.txt")
    assert (await client.call("shiro/changes/undo", {"path": "sub/new.txt"}))["undone"] is True
    assert (workspace / "old.txt").read_text() == "content\n" and not (workspace / "sub" / "new.txt").exists()


@pytest.mark.parametrize("permissions", [{}])
async def test_a_deny_reason_reaches_the_model(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, permissions: dict[str, Any]
) -> None:
    (workspace / "keep.txt").write_text("mine\n")
    client.decisions = [{"decision": "deny", "reason": "use tabs, not spaces"}]
    result = await turn(client, fake, "delete", ToolCall("delete_file", {"path": "keep.txt"}))
    (approval,) = client.approvals
    assert approval["preview"]["before"] == "mine\n" and approval["preview"]["after"] is None
    (denied,) = tool_events(client, result["taskId"], "tool-denied")
    assert denied["reason"] == "User denied this tool call. Their reason: use tabs, not spaces"
    assert "use tabs, not spaces" in json.dumps(model_bodies(fake)[1])
    assert (workspace / "keep.txt").read_text() == "mine\n"


# --- bash, restore, redo -------------------------------------------------------------------------


async def test_bash_sed_and_rm_are_put_back_by_restore_and_redone(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("hello world\n")
    (workspace / "b.txt").write_text("to be removed\n")
    (workspace / "ignored.log").write_text("log\n")
    (workspace / ".gitignore").write_text("*.log\n")
    result = await turn(
        client,
        fake,
        "clean up",
        ToolCall("bash", {"command": "sed -i s/world/there/ a.txt && rm b.txt && echo x >> ignored.log"}),
    )
    assert (workspace / "a.txt").read_text() == "hello there\n" and not (workspace / "b.txt").exists()
    (card,) = tool_events(client, result["taskId"], "tool-result")
    assert [f["path"] for f in card["files"]] == ["a.txt", "b.txt"]
    assert "-hello world\n+hello there\n" in card["diff"]
    rows = {f["path"]: f["status"] for f in (await client.call("shiro/changes", {}))["files"]}
    assert rows == {"a.txt": "modified", "b.txt": "deleted"}

    (checkpoint,) = (await client.call("shiro/checkpoint/list", {}))["checkpoints"]
    assert any("not watched" in note for note in checkpoint["notCovered"]) or checkpoint["notCovered"] == []
    restored = await client.call("shiro/checkpoint/restore", {"id": checkpoint["id"], "mode": "code"})
    assert restored["restored"] == ["a.txt", "b.txt"] and restored["conflicts"] == []
    assert (workspace / "a.txt").read_text() == "hello world\n"
    assert (workspace / "b.txt").read_text() == "to be removed\n"
    assert (workspace / "ignored.log").read_text() == "log\nx\n"  # git-ignored: not tracked

    redone = await client.call("shiro/checkpoint/restore", {"id": restored["redoId"], "mode": "code"})
    assert redone["restored"] == ["a.txt", "b.txt"]
    assert (workspace / "a.txt").read_text() == "hello there\n" and not (workspace / "b.txt").exists()
    kinds = [c["kind"] for c in (await client.call("shiro/checkpoint/list", {}))["checkpoints"]]
    assert kinds == ["redo", "redo", "turn"]


async def test_restore_and_redo_say_which_files_they_deleted_and_which_they_wrote_again(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "kept.txt").write_text("one\n")
    (workspace / "old.txt").write_text("old\n")
    await turn(
        client,
        fake,
        "change, create, delete",
        ToolCall("write_file", {"path": "kept.txt", "content": "two\n"}, "c1"),
        ToolCall("write_file", {"path": "new.txt", "content": "new\n"}, "c2"),
        ToolCall("delete_file", {"path": "old.txt"}, "c3"),
    )
    (checkpoint,) = (await client.call("shiro/checkpoint/list", {}))["checkpoints"]
    restored = await client.call("shiro/checkpoint/restore", {"id": checkpoint["id"], "mode": "code"})
    assert restored["restored"] == ["kept.txt", "new.txt", "old.txt"]
    assert (restored["deleted"], restored["created"]) == (["new.txt"], ["old.txt"])
    assert not (workspace / "new.txt").exists() and (workspace / "old.txt").read_text() == "old\n"

    redone = await client.call("shiro/checkpoint/restore", {"id": restored["redoId"], "mode": "code"})
    assert redone["restored"] == ["kept.txt", "new.txt", "old.txt"]
    assert (redone["deleted"], redone["created"]) == (["old.txt"], ["new.txt"])
    assert (workspace / "new.txt").read_text() == "new\n" and not (workspace / "old.txt").exists()


async def test_restore_chat_drops_that_turn_and_later_ones_and_redo_brings_them_back(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    await turn(client, fake, "first", ToolCall("write_file", {"path": "one.txt", "content": "1\n"}))
    second = await turn(client, fake, "second", ToolCall("write_file", {"path": "two.txt", "content": "2\n"}))
    await turn(client, fake, "third", ToolCall("write_file", {"path": "three.txt", "content": "3\n"}))
    listed = (await client.call("shiro/checkpoint/list", {}))["checkpoints"]
    assert [c["prompt"] for c in listed] == ["third", "second", "first"]
    target = next(c for c in listed if c["taskId"] == second["taskId"])
    restored = await client.call("shiro/checkpoint/restore", {"id": target["id"], "mode": "both"})
    assert restored["restored"] == ["three.txt", "two.txt"] and restored["messagesRemoved"] == 8
    assert (workspace / "one.txt").exists() and not (workspace / "two.txt").exists()
    await client.call("shiro/session/save")
    session_file = home / "sessions" / f"{second['sessionId']}.json"
    saved = json.loads(session_file.read_text())
    users = [m["content"] for m in saved["messages"] if m["role"] == "user"]
    assert users == ["first"]

    await client.call("shiro/checkpoint/restore", {"id": restored["redoId"], "mode": "both"})
    await client.call("shiro/session/save")
    saved = json.loads(session_file.read_text())
    assert [m["content"] for m in saved["messages"] if m["role"] == "user"] == ["first", "second", "third"]
    assert (workspace / "two.txt").read_text() == "2\n" and (workspace / "three.txt").read_text() == "3\n"


async def test_binary_files_are_recorded_and_restored_byte_for_byte(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    blob = bytes(range(256)) * 40
    (workspace / "image.bin").write_bytes(blob)
    await turn(
        client,
        fake,
        "overwrite",
        ToolCall("bash", {"command": "head -c 3000 /dev/zero > image.bin && printf '\\x00\\x01' > new.bin"}),
    )
    rows = {f["path"]: f for f in (await client.call("shiro/changes", {}))["files"]}
    assert rows["image.bin"]["binary"] and rows["image.bin"]["status"] == "modified"
    assert rows["new.bin"]["status"] == "added"
    diff = await client.call("shiro/changes/diff", {"path": "image.bin"})
    assert diff["binary"] is True and "10240 bytes" in diff["before"] and diff["hunks"] == []
    error = await rpc_error(client, "shiro/changes/undo", {"path": "image.bin", "hunks": [0]})
    assert "binary" in error.message
    (checkpoint,) = (await client.call("shiro/checkpoint/list", {}))["checkpoints"]
    await client.call("shiro/checkpoint/restore", {"id": checkpoint["id"], "mode": "code"})
    assert (workspace / "image.bin").read_bytes() == blob and not (workspace / "new.bin").exists()


async def test_a_ten_thousand_file_workspace(client: ShiroClient, fake: FakeOpenAI, workspace: Path) -> None:
    for d in range(100):
        folder = workspace / f"pkg{d:03}"
        folder.mkdir()
        for f in range(100):
            (folder / f"m{f:03}.py").write_text(f"VALUE = {d * 100 + f}\n")
    await turn(client, fake, "bump", ToolCall("bash", {"command": "sed -i s/4242/0/ pkg042/m042.py"}))
    (row,) = (await client.call("shiro/changes", {}))["files"]
    assert row["path"] == "pkg042/m042.py" and (row["additions"], row["deletions"]) == (1, 1)
    (checkpoint,) = (await client.call("shiro/checkpoint/list", {}))["checkpoints"]
    restored = await client.call("shiro/checkpoint/restore", {"id": checkpoint["id"], "mode": "code"})
    assert restored["restored"] == ["pkg042/m042.py"]
    assert (workspace / "pkg042" / "m042.py").read_text() == "VALUE = 4242\n"


async def test_a_git_repository_is_left_alone(client: ShiroClient, fake: FakeOpenAI, workspace: Path) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (workspace / "x.txt").write_text("x\n")
    await turn(client, fake, "edit", ToolCall("bash", {"command": "echo y > x.txt"}))
    assert sorted(p.name for p in (workspace / ".git").iterdir()) == ["HEAD"]
    (row,) = (await client.call("shiro/changes", {}))["files"]
    assert row["path"] == "x.txt"


def git(workspace: Path, *args: str) -> str:
    import subprocess

    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


async def test_in_a_git_repository_bash_changes_come_back_and_git_is_untouched(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    git(workspace, "init", "-q")
    (workspace / "tracked.txt").write_text("committed\n")
    (workspace / "gone.txt").write_text("also committed\n")
    (workspace / "dirty.txt").write_text("committed\n")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "init")
    (workspace / "dirty.txt").write_text("uncommitted edit\n")
    (workspace / "untracked.txt").write_text("not in git\n")
    head = git(workspace, "rev-parse", "HEAD")
    status = git(workspace, "status", "--porcelain")
    await turn(
        client,
        fake,
        "mess",
        ToolCall(
            "bash",
            {
                "command": "sed -i s/committed/changed/ tracked.txt && rm gone.txt && "
                "echo more >> dirty.txt && echo more >> untracked.txt && echo new > fresh.txt"
            },
        ),
    )
    rows = {f["path"]: f["status"] for f in (await client.call("shiro/changes", {}))["files"]}
    assert rows == {
        "dirty.txt": "modified",
        "fresh.txt": "added",
        "gone.txt": "deleted",
        "tracked.txt": "modified",
        "untracked.txt": "modified",
    }
    (checkpoint,) = (await client.call("shiro/checkpoint/list", {}))["checkpoints"]
    restored = await client.call("shiro/checkpoint/restore", {"id": checkpoint["id"], "mode": "code"})
    assert restored["conflicts"] == [] and len(restored["restored"]) == 5
    assert (workspace / "tracked.txt").read_text() == "committed\n"
    assert (workspace / "gone.txt").read_text() == "also committed\n"
    assert (workspace / "dirty.txt").read_text() == "uncommitted edit\n"
    assert (workspace / "untracked.txt").read_text() == "not in git\n"
    assert not (workspace / "fresh.txt").exists()
    assert git(workspace, "rev-parse", "HEAD") == head and git(workspace, "status", "--porcelain") == status
    assert git(workspace, "stash", "list") == ""


# --- restart, resume, delete ---------------------------------------------------------------------


async def start(workspace: Path, home: Path, fake: FakeOpenAI) -> ShiroClient:
    client = make_client()
    await client.start_io(*SERVER_COMMAND)
    await initialize(client, workspace, **options(home, fake, ALLOW_ALL, **EXTRA))
    return client


async def stop(client: ShiroClient) -> None:
    await client.shutdown_session()
    await client.stop()


async def test_checkpoints_survive_a_restart_and_a_resume_and_go_with_the_session(
    fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    (workspace / "keep.txt").write_text("before\n")
    first = await start(workspace, home, fake)
    try:
        result = await turn(
            first, fake, "edit", ToolCall("write_file", {"path": "keep.txt", "content": "after\n"})
        )
        await first.call("shiro/session/save")
    finally:
        await stop(first)

    second = await start(workspace, home, fake)
    try:
        assert (await second.call("shiro/checkpoint/list", {}))["checkpoints"] == []  # a fresh session
        await second.call("shiro/session/resume", {"id": result["sessionId"]})
        (checkpoint,) = (await second.call("shiro/checkpoint/list", {}))["checkpoints"]
        assert checkpoint["taskId"] == result["taskId"]
        diff = await second.call("shiro/changes/diff", {"path": "keep.txt"})
        assert (diff["before"], diff["after"]) == ("before\n", "after\n")
        await second.call("shiro/checkpoint/restore", {"id": checkpoint["id"], "mode": "code"})
        assert (workspace / "keep.txt").read_text() == "before\n"
        await second.call("shiro/session/new")
        checkpoints = home / "checkpoints" / result["sessionId"]
        assert checkpoints.is_dir()
        await second.call("shiro/session/delete", {"id": result["sessionId"]})
        assert not checkpoints.exists()
        blobs = home / "checkpoints" / "blobs"
        assert sorted(p.name for p in blobs.rglob("*") if p.is_file()) == []
    finally:
        await stop(second)


async def test_bad_requests_are_clear(client: ShiroClient, fake: FakeOpenAI, workspace: Path) -> None:
    assert await client.call("shiro/changes", {}) == {"taskId": None, "checkpointId": None, "files": []}
    error = await rpc_error(client, "shiro/changes/diff", {"path": "nothing.txt"})
    assert error.code == -32001 and "No turn" in error.message
    error = await rpc_error(client, "shiro/checkpoint/restore", {"id": "nope", "mode": "code"})
    assert error.code == -32001
    error = await rpc_error(client, "shiro/checkpoint/restore", {"id": "x", "mode": "all"})
    assert error.code == -32602
    await turn(client, fake, "edit", ToolCall("write_file", {"path": "a.txt", "content": "a\n"}))
    error = await rpc_error(client, "shiro/changes/diff", {"path": "../outside.txt"})
    assert error.code == -32602 and "escapes" in error.message
    assert os.path.exists(workspace / "a.txt")
