"""`shiro/notes/read|append|replace` through a real client over stdio.

Tasks are seeded in shiro.db with the public store API before the server starts, as an existing
profile would hold them (chat turns register tasks themselves).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from fakes.fixtures import options
from lsp_client import ShiroClient, start_server
from shiro_lsp.errors import CONFLICT, INVALID_PARAMS, NOT_FOUND, READ_ONLY, TOO_LARGE
from shiro_lsp.service import RESTRICTED_TEXT
from shiro_lsp.state.notes import Notes
from shiro_lsp.state.task_notes import EMPTY_HASH, note_hash

TASK = "0193a1b2-task-one"
OTHER_WORKSPACE_TASK = "0193a1b2-elsewhere"


@pytest.fixture
def seeded(workspace: Path, home: Path, tmp_path: Path) -> Notes:
    notes = Notes(str(workspace), home)
    notes.register_task(TASK, "session-1", "fix the parser")
    Notes(str(tmp_path / "other"), home).register_task(OTHER_WORKSPACE_TASK, "session-9", "elsewhere")
    return notes


@pytest.fixture
def init_options(home: Path, seeded: Notes) -> dict[str, object]:
    return options(home)


def project_md(workspace: Path) -> Path:
    return workspace / ".shiro" / "memory" / "project.md"


async def rpc_error(client: ShiroClient, method: str, params: dict[str, Any]) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await client.call(method, params)
    return caught.value


async def test_empty_read_has_the_hash_of_the_empty_string(client: ShiroClient, workspace: Path) -> None:
    assert await client.call("shiro/notes/read", {}) == {
        "project": "",
        "task": "",
        "projectHash": EMPTY_HASH,
        "taskHash": EMPTY_HASH,
        "taskId": None,
        "problems": [],
    }
    assert EMPTY_HASH == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert not project_md(workspace).exists()


async def test_project_append_merges_and_replace_needs_the_current_hash(
    client: ShiroClient, workspace: Path
) -> None:
    first = await client.call("shiro/notes/append", {"note": "Run the offline fixtures first."})
    second = await client.call("shiro/notes/append", {"scope": "project", "note": "Parser: keep ñ cases."})
    expected = "Run the offline fixtures first.\nParser: keep ñ cases."
    assert second["project"] == expected and project_md(workspace).read_text("utf-8") == expected
    assert second["projectHash"] == note_hash(expected) != first["projectHash"]

    stale = await rpc_error(
        client, "shiro/notes/replace", {"note": "lost", "expectedHash": first["projectHash"]}
    )
    assert stale.code == CONFLICT and "changed since you read them" in stale.message
    missing = await rpc_error(client, "shiro/notes/replace", {"note": "lost"})
    assert missing.code == INVALID_PARAMS and "expectedHash" in missing.message
    assert project_md(workspace).read_text("utf-8") == expected

    revised = await client.call(
        "shiro/notes/replace", {"note": "Revised.", "expectedHash": second["projectHash"].upper()}
    )
    assert revised["project"] == "Revised." and project_md(workspace).read_text() == "Revised."
    cleared = await client.call("shiro/notes/replace", {"note": "", "expectedHash": revised["projectHash"]})
    assert cleared["project"] == "" and cleared["projectHash"] == EMPTY_HASH
    assert project_md(workspace).read_text() == ""


async def test_task_notes_read_append_replace_and_clear(client: ShiroClient, seeded: Notes) -> None:
    read = await client.call("shiro/notes/read", {"scope": "task", "taskId": TASK})
    assert (read["task"], read["taskHash"], read["taskId"]) == ("", EMPTY_HASH, TASK)
    await client.call("shiro/notes/append", {"scope": "task", "taskId": TASK, "note": "Keep the regression."})
    appended = await client.call(
        "shiro/notes/append", {"scope": "task", "taskId": TASK, "note": "And the fix."}
    )
    assert appended["task"] == "Keep the regression.\nAnd the fix."
    assert appended["project"] == "" and appended["taskId"] == TASK

    stale = await rpc_error(
        client,
        "shiro/notes/replace",
        {"scope": "task", "taskId": TASK, "note": "x", "expectedHash": read["taskHash"]},
    )
    assert stale.code == CONFLICT
    cleared = await client.call(
        "shiro/notes/replace",
        {"scope": "task", "taskId": TASK, "note": "", "expectedHash": appended["taskHash"]},
    )
    assert cleared["task"] == "" and cleared["taskHash"] == EMPTY_HASH
    actions = [(e["scope"], e["action"]) for e in seeded.store.events()]
    assert actions == [("task", "append"), ("task", "append"), ("task", "clear")]


@pytest.mark.parametrize(
    ("task_id", "code", "message"),
    [
        ("../../x", INVALID_PARAMS, "is not a task id"),
        ("tasks/abc", INVALID_PARAMS, "is not a task id"),
        ("..", INVALID_PARAMS, "is not a task id"),
        ("no-such-task", NOT_FOUND, "There is no task no-such-task"),
        ("mcp", NOT_FOUND, "There is no task mcp"),
        (OTHER_WORKSPACE_TASK, NOT_FOUND, "belongs to another workspace"),
    ],
)
async def test_unknown_foreign_and_path_like_task_ids_are_rejected(
    client: ShiroClient, home: Path, task_id: str, code: int, message: str
) -> None:
    legacy = home / "tasks" / "mcp" / "memory.md"
    legacy.parent.mkdir(parents=True)
    legacy.write_text("unattributed notes")
    for method, params in (
        ("shiro/notes/read", {"scope": "task", "taskId": task_id}),
        ("shiro/notes/append", {"scope": "task", "taskId": task_id, "note": "x"}),
        ("shiro/notes/replace", {"scope": "task", "taskId": task_id, "note": "", "expectedHash": EMPTY_HASH}),
    ):
        error = await rpc_error(client, method, params)
        assert error.code == code and message in error.message
    assert legacy.read_text() == "unattributed notes"


async def test_task_scope_without_a_task_id_needs_a_current_task(client: ShiroClient) -> None:
    """No conversation has run a turn in this server yet: there is no current task."""
    read = await client.call("shiro/notes/read", {"scope": "task"})
    assert read["taskId"] is None and read["task"] == ""
    error = await rpc_error(client, "shiro/notes/append", {"scope": "task", "note": "x"})
    assert error.code == INVALID_PARAMS and "Pass taskId" in error.message


@pytest.mark.parametrize(
    ("method", "params", "expected"),
    [
        ("shiro/notes/read", {"scope": "global"}, "scope"),
        ("shiro/notes/read", {"taskId": 7}, "taskId"),
        ("shiro/notes/append", {}, "note: Field required"),
        ("shiro/notes/append", {"note": ""}, "note"),
        ("shiro/notes/append", {"note": "  \n "}, "empty"),
        ("shiro/notes/replace", {"note": "x", "expectedHash": ""}, "expectedHash"),
        ("shiro/notes/replace", {"note": None, "expectedHash": EMPTY_HASH}, "note"),
    ],
)
async def test_bad_params_are_invalid_params(
    client: ShiroClient, workspace: Path, method: str, params: dict[str, Any], expected: str
) -> None:
    error = await rpc_error(client, method, params)
    assert error.code == INVALID_PARAMS and expected in error.message
    assert not project_md(workspace).exists()


async def test_the_cap_is_16000_utf8_bytes_counting_multibyte_characters(
    client: ShiroClient, workspace: Path
) -> None:
    exactly = "é" * 7_998 + "🐱"  # 15,996 + 4 = 16,000 bytes, 7,999 characters
    assert len(exactly.encode()) == 16_000
    for scope in ("project", "task"):
        base = {"scope": scope, "taskId": TASK}
        read = await client.call("shiro/notes/read", base)
        full = await client.call(
            "shiro/notes/replace", {**base, "note": exactly, "expectedHash": read[f"{scope}Hash"]}
        )
        assert full[scope] == exactly

        over = await rpc_error(
            client,
            "shiro/notes/replace",
            {**base, "note": exactly + "a", "expectedHash": full[f"{scope}Hash"]},
        )
        assert (
            over.code == TOO_LARGE and "16,001 bytes" in over.message and "16,000-byte limit" in over.message
        )
        crossing = await rpc_error(client, "shiro/notes/append", {**base, "note": "é"})
        assert crossing.code == TOO_LARGE and "16,003 bytes" in crossing.message  # + "\n" + 2 bytes
        assert (await client.call("shiro/notes/read", base))[scope] == exactly

        shorter = "é" * 7_998 + "a"  # 15,997 bytes: "\n" + "é" brings it to exactly 16,000
        await client.call(
            "shiro/notes/replace", {**base, "note": shorter, "expectedHash": full[f"{scope}Hash"]}
        )
        topped = await client.call("shiro/notes/append", {**base, "note": "é"})
        assert len(topped[scope].encode()) == 16_000
    assert len(project_md(workspace).read_bytes()) == 16_000


async def test_an_edit_on_disk_between_read_and_replace_wins(client: ShiroClient, workspace: Path) -> None:
    read = await client.call("shiro/notes/append", {"note": "from Shiro"})
    project_md(workspace).write_text("typed in the editor", "utf-8")
    error = await rpc_error(
        client, "shiro/notes/replace", {"note": "overwrite", "expectedHash": read["projectHash"]}
    )
    assert error.code == CONFLICT
    assert project_md(workspace).read_text() == "typed in the editor"
    fresh = await client.call("shiro/notes/read", {})
    assert fresh["project"] == "typed in the editor"
    assert (await client.call("shiro/notes/append", {"note": "more"}))[
        "project"
    ] == "typed in the editor\nmore"


async def start(workspace: Path, home: Path) -> ShiroClient:
    return await start_server(workspace, home=str(home))


@pytest.mark.parametrize("scope", ["project", "task"])
async def test_two_servers_replacing_with_the_same_hash_exactly_one_wins(
    workspace: Path, home: Path, seeded: Notes, scope: str
) -> None:
    first, second = await start(workspace, home), await start(workspace, home)
    try:
        base = {"scope": scope, "taskId": TASK}
        read = await first.call("shiro/notes/append", {**base, "note": "original"})
        results = await asyncio.gather(
            *(
                client.call(
                    "shiro/notes/replace",
                    {**base, "note": f"by {name}", "expectedHash": read[f"{scope}Hash"]},
                )
                for client, name in ((first, "first"), (second, "second"), (first, "third"))
            ),
            return_exceptions=True,
        )
        final = await second.call("shiro/notes/read", base)
    finally:
        for client in (first, second):
            await client.shutdown_session()
            await client.stop()
    wins = [r for r in results if isinstance(r, dict)]
    losses = [r for r in results if isinstance(r, JsonRpcException)]
    assert len(wins) == 1 and len(losses) == 2
    assert all(loss.code == CONFLICT for loss in losses)
    assert final[scope] == wins[0][scope] and final[scope].startswith("by ")


class TestRestrictedMode:
    @pytest.fixture
    def init_options(self, home: Path, seeded: Notes) -> dict[str, object]:
        return options(home, apiKey=None, trusted=False)

    async def test_reads_work_and_writes_are_refused_with_the_reason(
        self, client: ShiroClient, workspace: Path, seeded: Notes
    ) -> None:
        seeded.append("project", "written while trusted")
        read = await client.call("shiro/notes/read", {"scope": "task", "taskId": TASK})
        assert read["project"] == "written while trusted"
        for method, params in (
            ("shiro/notes/append", {"note": "x"}),
            ("shiro/notes/append", {"scope": "task", "taskId": TASK, "note": "x"}),
            ("shiro/notes/replace", {"note": "", "expectedHash": read["projectHash"]}),
        ):
            error = await rpc_error(client, method, params)
            assert error.code == READ_ONLY and error.message == RESTRICTED_TEXT
        assert project_md(workspace).read_text() == "written while trusted"
