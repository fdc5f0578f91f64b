"""Plain-file task notes (`<state>/tasks/<taskId>/memory.md`) and hostile files, through the server.

Nothing outside the state root is read, nothing blocks, nothing on disk is changed or lost.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from fakes.fixtures import options
from lsp_client import ShiroClient
from shiro_lsp.errors import CONFLICT
from shiro_lsp.state.notes import Notes
from shiro_lsp.state.task_notes import EMPTY_HASH, note_hash

TASK = "task-legacy"


@pytest.fixture
def seeded(workspace: Path, home: Path) -> Notes:
    notes = Notes(str(workspace), home)
    notes.register_task(TASK, "session-1", "an older turn")
    return notes


@pytest.fixture
def init_options(home: Path, seeded: Notes) -> dict[str, object]:
    return options(home, apiKey=None)


@pytest.fixture
def legacy(home: Path) -> Path:
    path = home / "tasks" / TASK / "memory.md"
    path.parent.mkdir(parents=True)
    return path


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "memory.md").write_text("SECRET outside the state root")
    return outside


async def read_task(client: ShiroClient) -> dict[str, Any]:
    result: dict[str, Any] = await client.call("shiro/notes/read", {"scope": "task", "taskId": TASK})
    return result


async def test_legacy_note_is_read_until_the_first_native_edit(client: ShiroClient, legacy: Path) -> None:
    legacy.write_text("written by an older tool\n", "utf-8")
    read = await read_task(client)
    assert read["task"] == "written by an older tool\n" and read["problems"] == []
    appended = await client.call("shiro/notes/append", {"scope": "task", "taskId": TASK, "note": "native"})
    assert appended["task"] == "written by an older tool\nnative"
    legacy.write_text("edited later by hand", "utf-8")
    assert (await read_task(client))["task"] == "written by an older tool\nnative"
    assert legacy.read_text() == "edited later by hand"


async def test_a_cleared_native_note_stays_empty(client: ShiroClient, legacy: Path) -> None:
    legacy.write_text("old notes", "utf-8")
    read = await read_task(client)
    assert read["taskHash"] == note_hash("old notes")
    cleared = await client.call(
        "shiro/notes/replace", {"scope": "task", "taskId": TASK, "note": "", "expectedHash": read["taskHash"]}
    )
    assert cleared["task"] == ""
    again = await read_task(client)
    assert again["task"] == "" and again["taskHash"] == EMPTY_HASH
    assert legacy.read_text() == "old notes"


async def assert_reported_and_kept(client: ShiroClient, expected: str, forbidden: str = "SECRET") -> None:
    read = await read_task(client)
    assert read["task"] == "" and forbidden not in str(read)
    assert len(read["problems"]) == 1 and expected in read["problems"][0]
    with pytest.raises(JsonRpcException) as caught:
        await client.call("shiro/notes/append", {"scope": "task", "taskId": TASK, "note": "would hide it"})
    assert caught.value.code == CONFLICT and expected in caught.value.message
    assert "will not write over notes it cannot read" in caught.value.message
    with pytest.raises(JsonRpcException):
        await client.call(
            "shiro/notes/replace", {"scope": "task", "taskId": TASK, "note": "", "expectedHash": EMPTY_HASH}
        )
    assert (await read_task(client))["problems"] == read["problems"]


async def test_a_symlinked_legacy_file_is_not_followed(
    client: ShiroClient, legacy: Path, secret: Path
) -> None:
    legacy.symlink_to(secret / "memory.md")
    await assert_reported_and_kept(client, "is a symbolic link")
    assert legacy.is_symlink() and (secret / "memory.md").read_text() == "SECRET outside the state root"


async def test_a_symlinked_task_folder_is_not_followed(client: ShiroClient, home: Path, secret: Path) -> None:
    folder = home / "tasks" / TASK
    folder.parent.mkdir(parents=True)
    folder.symlink_to(secret, target_is_directory=True)
    await assert_reported_and_kept(client, f"tasks/{TASK} is a symbolic link")


async def test_a_symlinked_tasks_folder_is_not_followed(
    client: ShiroClient, home: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / TASK).mkdir(parents=True)
    (elsewhere / TASK / "memory.md").write_text("SECRET")
    home.mkdir(exist_ok=True)
    (home / "tasks").symlink_to(elsewhere, target_is_directory=True)
    await assert_reported_and_kept(client, "tasks is a symbolic link")


async def test_a_fifo_never_blocks(client: ShiroClient, legacy: Path) -> None:
    os.mkfifo(legacy)
    await assert_reported_and_kept(client, "not a regular file")


async def test_a_one_gigabyte_file_is_reported_not_read(client: ShiroClient, legacy: Path) -> None:
    with legacy.open("wb") as handle:
        handle.truncate(1 << 30)  # sparse
    await assert_reported_and_kept(client, "1,073,741,824 bytes, over the 16,000-byte limit")
    assert legacy.stat().st_size == 1 << 30


async def test_non_utf8_bytes_are_reported_and_kept(client: ShiroClient, legacy: Path) -> None:
    legacy.write_bytes(b"caf\xe9 notes")
    await assert_reported_and_kept(client, "not valid UTF-8")
    assert legacy.read_bytes() == b"caf\xe9 notes"


async def test_a_legacy_folder_of_no_known_task_is_left_alone(client: ShiroClient, home: Path) -> None:
    stray = home / "tasks" / "mcp" / "memory.md"
    stray.parent.mkdir(parents=True)
    stray.write_text("unattributed")
    await client.call("shiro/notes/append", {"scope": "task", "taskId": TASK, "note": "mine"})
    assert stray.read_text() == "unattributed"
    assert sorted(p.name for p in (home / "tasks").iterdir()) == ["mcp"]


class TestHostileProjectFile:
    async def test_a_project_md_symlink_out_of_the_workspace_is_refused(
        self, client: ShiroClient, workspace: Path, secret: Path
    ) -> None:
        memory = workspace / ".shiro" / "memory"
        memory.mkdir(parents=True)
        (memory / "project.md").symlink_to(secret / "memory.md")
        read = await client.call("shiro/notes/read", {})
        assert read["project"] == "" and "SECRET" not in str(read)
        assert "symbolic link" in read["problems"][0]
        with pytest.raises(JsonRpcException) as caught:
            await client.call("shiro/notes/append", {"note": "x"})
        assert caught.value.code == CONFLICT
        assert (secret / "memory.md").read_text() == "SECRET outside the state root"

    async def test_a_symlinked_shiro_folder_is_refused(
        self, client: ShiroClient, workspace: Path, tmp_path: Path
    ) -> None:
        target = tmp_path / "elsewhere"
        target.mkdir()
        (workspace / ".shiro").symlink_to(target, target_is_directory=True)
        with pytest.raises(JsonRpcException) as caught:
            await client.call("shiro/notes/append", {"note": "x"})
        assert caught.value.code == CONFLICT and ".shiro is a symbolic link" in caught.value.message
        assert list(target.iterdir()) == []

    async def test_a_fifo_project_md_never_blocks(self, client: ShiroClient, workspace: Path) -> None:
        memory = workspace / ".shiro" / "memory"
        memory.mkdir(parents=True)
        os.mkfifo(memory / "project.md")
        read = await client.call("shiro/notes/read", {})
        assert "not a regular file" in read["problems"][0]
