"""Bash checkpoints in a git repository through the real server over stdio, with the watcher that
keeps git's listing between turns: what later turns' commands did to tracked, untracked, ignored
and git-managed files is recorded and put back by a checkpoint restore, and git is left alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_checkpoints_lsp import git, init_options, permissions, turn

from fakes.fake_openai import FakeOpenAI, ToolCall
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]
__all__ = ["init_options", "permissions"]  # fixtures


def make_repo(workspace: Path) -> None:
    git(workspace, "init", "-q")
    (workspace / ".gitignore").write_text("build/\nvendor/\n*.log\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("greeting = 'hello world'\n")
    (workspace / "src" / "old.py").write_text("obsolete = True\n")
    (workspace / "dirty.txt").write_text("committed\n")
    (workspace / "other.txt").write_text("committed\n")
    (workspace / "vendor").mkdir()
    (workspace / "vendor" / "patched.txt").write_text("vendored\n")
    git(workspace, "add", "-A")
    git(workspace, "add", "-f", "vendor/patched.txt")
    git(workspace, "commit", "-qm", "init")


async def bash(client: ShiroClient, fake: FakeOpenAI, command: str) -> None:
    await turn(client, fake, command, ToolCall("bash", {"command": command}))


async def latest(client: ShiroClient) -> dict[str, Any]:
    checkpoint: dict[str, Any] = (await client.call("shiro/checkpoint/list", {}))["checkpoints"][0]
    return checkpoint


async def test_later_turns_sed_rm_new_and_ignored_files_come_back_on_restore(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    make_repo(workspace)
    await bash(client, fake, "ls")  # the first bash turn: a whole git status, and the watch
    (workspace / "dirty.txt").write_text("the user's edit\n")  # between turns, in the editor
    status = git(workspace, "status", "--porcelain")
    await bash(
        client,
        fake,
        "sed -i s/world/there/ src/app.py && rm src/old.py && echo draft > notes.md "
        "&& mkdir -p build/out && echo artefact > build/out/a.bin && echo x > run.log "
        "&& echo patched >> vendor/patched.txt && echo bash >> dirty.txt",
    )
    rows = {f["path"]: f["status"] for f in (await client.call("shiro/changes", {}))["files"]}
    assert rows == {
        "dirty.txt": "modified",
        "notes.md": "added",
        "src/app.py": "modified",
        "src/old.py": "deleted",
        "vendor/patched.txt": "modified",  # tracked, though its folder is ignored
    }  # build/out/a.bin and run.log are git-ignored: not recorded

    checkpoint = await latest(client)
    restored = await client.call("shiro/checkpoint/restore", {"id": checkpoint["id"], "mode": "code"})
    assert restored["conflicts"] == [] and len(restored["restored"]) == 5
    assert (workspace / "src" / "app.py").read_text() == "greeting = 'hello world'\n"
    assert (workspace / "src" / "old.py").read_text() == "obsolete = True\n"
    assert (workspace / "dirty.txt").read_text() == "the user's edit\n"  # the user's, not the commit's
    assert (workspace / "vendor" / "patched.txt").read_text() == "vendored\n"
    assert not (workspace / "notes.md").exists()
    assert (workspace / "build" / "out" / "a.bin").read_text() == "artefact\n"  # left alone
    assert (workspace / "run.log").read_text() == "x\n"
    assert git(workspace, "status", "--porcelain") == status  # and git's index and HEAD are untouched


async def test_a_command_that_runs_git_checkout_and_stash_is_put_back(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    make_repo(workspace)
    await bash(client, fake, "ls")
    (workspace / "dirty.txt").write_text("uncommitted edit\n")
    (workspace / "other.txt").write_text("another edit\n")
    await bash(client, fake, "git checkout -- dirty.txt && git stash -q")
    assert (workspace / "dirty.txt").read_text() == "committed\n"
    assert (workspace / "other.txt").read_text() == "committed\n"
    rows = {f["path"]: f["status"] for f in (await client.call("shiro/changes", {}))["files"]}
    assert rows == {"dirty.txt": "modified", "other.txt": "modified"}
    restored = await client.call(
        "shiro/checkpoint/restore", {"id": (await latest(client))["id"], "mode": "code"}
    )
    assert sorted(restored["restored"]) == ["dirty.txt", "other.txt"] and restored["conflicts"] == []
    assert (workspace / "dirty.txt").read_text() == "uncommitted edit\n"
    assert (workspace / "other.txt").read_text() == "another edit\n"

    # The index changed under the watch (the stash): the next turn still sees what its command did.
    await bash(client, fake, "sed -i s/edit/change/ other.txt && rm dirty.txt")
    restored = await client.call(
        "shiro/checkpoint/restore", {"id": (await latest(client))["id"], "mode": "code"}
    )
    assert sorted(restored["restored"]) == ["dirty.txt", "other.txt"] and restored["conflicts"] == []
    assert (workspace / "dirty.txt").read_text() == "uncommitted edit\n"
    assert (workspace / "other.txt").read_text() == "another edit\n"
