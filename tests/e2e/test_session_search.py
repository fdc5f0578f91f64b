"""Session search over message text (`shiro/session/list` with `query`) and `shiro/session/rename`,
through a real client over stdio, on session files (and an old index) seeded before the server starts."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from chat_helpers import eventually
from fakes.fake_openai import FakeOpenAI, Step, Text
from fakes.fixtures import options
from lsp_client import ShiroClient, start_server
from shiro_lsp.state import db

pytest_plugins = ["fakes.fixtures"]

FLAMINGO = "0193bb11-0000-7000-8000-00000000f1a0"
BUSY = "0193bb11-0000-7000-8000-00000000b059"
PLAIN = "0193bb11-0000-7000-8000-00000000a11a"
ELSEWHERE = "0193bb11-0000-7000-8000-0000000e15e0"


def messages(prompt: str, *answers: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for answer in answers:
        found.append({"role": "assistant", "content": [{"type": "text", "text": answer}]})
    return found


def session_file(home: Path, session_id: str, cwd: str, updated: str, history: list[dict[str, Any]]) -> Path:
    record = {
        "id": session_id,
        "createdAt": "2026-01-01T00:00:00.000Z",
        "updatedAt": updated,
        "cwd": cwd,
        "provider": "openai",
        "model": "gpt-5-mini",
        "title": history[0]["content"],
        "inputTokens": 10,
        "outputTokens": 5,
        "notebook": {"todos": []},
        "messages": history,
    }
    path = home / "sessions" / f"{session_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2))
    return path


def seed(home: Path, workspace: Path) -> None:
    """Four sessions; the word "flamingo" is in no title, only in assistant answers."""
    ws = str(workspace)
    session_file(
        home,
        FLAMINGO,
        ws,
        "2026-02-01T10:00:00.000Z",
        messages(
            "why does the build fail?",
            "The linker cannot find libflamingo: the flamingo package is missing from the image. "
            "Install flamingo and flamingo-dev.",
        ),
    )
    session_file(
        home,
        BUSY,
        ws,
        "2026-03-01T10:00:00.000Z",
        messages(
            "tidy the readme",
            "Done. "
            + "The readme now explains installation, configuration and upgrades in detail. " * 30
            + "(A stray flamingo emoji was removed.)",
        ),
    )
    session_file(
        home, PLAIN, ws, "2026-04-01T10:00:00.000Z", messages("rename the module", "Renamed it to core.")
    )
    session_file(
        home,
        ELSEWHERE,
        "/other/place",
        "2026-05-01T10:00:00.000Z",
        messages("hello", "a flamingo, elsewhere"),
    )


@pytest.fixture
def init_options(home: Path, workspace: Path) -> dict[str, object]:
    seed(home, workspace)
    return options(home)


async def listing(client: ShiroClient, **params: Any) -> list[dict[str, Any]]:
    result: dict[str, Any] = await client.call("shiro/session/list", params)
    return list(result["sessions"])


async def rpc_error(client: ShiroClient, method: str, params: dict[str, Any]) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await client.call(method, params)
    return caught.value


async def test_a_word_only_in_a_message_finds_the_session_best_match_first_with_a_snippet(
    client: ShiroClient,
) -> None:
    found = await listing(client, query="flamingo")
    assert [s["id"] for s in found] == [
        FLAMINGO,
        BUSY,
    ]  # four mentions in a short answer beat one in a long one
    assert all("flamingo" not in s["title"] for s in found)
    assert "flamingo" in found[0]["snippet"] and "\n" not in found[0]["snippet"]
    assert found[0]["title"] == "why does the build fail?" and found[0]["messageCount"] == 2
    everywhere = await listing(client, query="flamingo", allWorkspaces=True)
    assert {s["id"] for s in everywhere} == {FLAMINGO, BUSY, ELSEWHERE}


async def test_every_word_must_match_each_also_as_a_prefix(client: ShiroClient) -> None:
    assert [s["id"] for s in await listing(client, query="flamin linker")] == [FLAMINGO]
    assert [s["id"] for s in await listing(client, query="FLAMINGO readme")] == [BUSY]
    assert await listing(client, query="flamingo walrus") == []


async def test_a_query_is_text_never_search_syntax_and_blank_means_no_filter(client: ShiroClient) -> None:
    for typed in ['flamingo"', '"flamingo', "(flamingo*)", "flamingo:", "-flamingo", "^flamingo +"]:
        assert FLAMINGO in [s["id"] for s in await listing(client, query=typed)], typed
    for typed in ["NEAR(flamingo", "flamingo OR readme", "title:flamingo"]:  # operators are words too
        assert await listing(client, query=typed) == [], typed
    assert await listing(client, query="?!") == []
    unfiltered = await listing(client, query="   ")
    assert [s["id"] for s in unfiltered] == [PLAIN, BUSY, FLAMINGO] and all(
        "snippet" not in s for s in unfiltered
    )
    error = await rpc_error(client, "shiro/session/list", {"query": "x" * 501})
    assert error.code == -32602 and "query" in error.message


async def test_a_deleted_session_is_no_longer_found(client: ShiroClient) -> None:
    assert len(await listing(client, query="flamingo")) == 2
    assert await client.call("shiro/session/delete", {"id": FLAMINGO}) == {"deleted": True}
    assert [s["id"] for s in await listing(client, query="flamingo")] == [BUSY]


async def test_a_session_saved_by_this_server_is_found_by_its_new_text(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    seed(home, workspace)
    fake.script += [Step(Text("The capybara is the largest rodent."))]
    client = await start_server(
        workspace, home=str(home), apiKey="sk-test", baseUrl=fake.base_url, api="chat"
    )
    try:
        assert await listing(client, query="capybara") == []  # indexes the seeded sessions first
        await client.call("shiro/chat", {"text": "which rodent is largest?"})
        live = (await client.call("shiro/session/save"))["id"]
        found = await listing(client, query="capybara")
        assert [s["id"] for s in found] == [live] and "capybara" in found[0]["snippet"]
    finally:
        await client.shutdown_session()
        await client.stop()


def old_index(home: Path) -> None:
    """A version 2 shiro.db (before search) that already lists every seeded session, with the
    directory marked unchanged since, so only the lazy text backfill can make search work."""
    path = home / "shiro.db"
    connection = sqlite3.connect(path, isolation_level=None)
    db.migrate(connection, path, target=2)
    for file in sorted((home / "sessions").glob("*.json")):
        record = json.loads(file.read_text())
        info = file.stat()
        connection.execute(
            "INSERT INTO sessions (id, cwd, title, created_at, updated_at, message_count, model, "
            "input_tokens, output_tokens, cost_usd, file_mtime_ns, file_size) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, NULL, ?, ?)",
            (
                record["id"],
                record["cwd"],
                record["title"],
                record["createdAt"],
                record["updatedAt"],
                len(record["messages"]),
                record["model"],
                info.st_mtime_ns,
                info.st_size,
            ),
        )
    directory = home / "sessions"
    os.utime(directory, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    signature = f"{directory.stat().st_ino}:{directory.stat().st_mtime_ns}"
    connection.execute("INSERT INTO meta (key, value) VALUES ('sessions_dir_signature', ?)", (signature,))
    connection.close()


async def test_an_index_built_before_search_is_upgraded_and_its_sessions_become_searchable(
    tmp_path: Path,
) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    seed(home, workspace)
    old_index(home)
    client = await start_server(workspace, home=str(home), apiKey="sk-test")
    try:
        assert [s["id"] for s in await listing(client)] == [PLAIN, BUSY, FLAMINGO]
        assert [s["id"] for s in await listing(client, query="flamingo")] == [FLAMINGO, BUSY]
    finally:
        await client.shutdown_session()
        await client.stop()
    connection = sqlite3.connect(home / "shiro.db")
    assert db.schema_version(connection) == db.SCHEMA_VERSION == 3
    assert connection.execute("SELECT count(*) FROM sessions WHERE text_indexed = 1").fetchone()[0] == 4
    connection.close()
    (backup,) = home.glob("shiro.db.v2-*.bak")
    copy = sqlite3.connect(backup)
    assert db.schema_version(copy) == 2 and copy.execute("SELECT count(*) FROM sessions").fetchone()[0] == 4
    copy.close()


async def test_rename_survives_restart_and_resume_and_is_searchable(tmp_path: Path, fake: FakeOpenAI) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    seed(home, workspace)
    started = options(home, fake, maxRetries=None)
    client = await start_server(workspace, **started)
    try:
        renamed = await client.call(
            "shiro/session/rename", {"id": FLAMINGO[:-3], "title": "  Linker: libflamingo  "}
        )
        assert renamed["id"] == FLAMINGO and renamed["title"] == "Linker: libflamingo"
        assert renamed["updatedAt"] == "2026-02-01T10:00:00.000Z"  # the listing order is kept
        assert [s["title"] for s in await listing(client)] == [
            "rename the module",
            "tidy the readme",
            "Linker: libflamingo",
        ]
        assert [s["id"] for s in await listing(client, query="libflamingo")] == [FLAMINGO]
        # The live session can be renamed before its first message; the name is saved with it.
        live = (await client.call("shiro/session/current"))["id"]
        assert (await client.call("shiro/session/rename", {"id": live, "title": "Scratch"}))[
            "title"
        ] == "Scratch"
        await eventually(
            lambda: any(n["title"] == "Scratch" for n in client.notifications["shiro/session/changed"])
        )
        fake.script += [Step(Text("Hi."))]
        await client.call("shiro/chat", {"text": "say hi"})
        assert (await client.call("shiro/session/save"))["saved"] is True
    finally:
        await client.shutdown_session()
        await client.stop()
    on_disk = json.loads((home / "sessions" / f"{FLAMINGO}.json").read_text())
    assert on_disk["title"] == on_disk["customTitle"] == "Linker: libflamingo"
    assert on_disk["messages"][0]["content"] == "why does the build fail?"

    client = await start_server(workspace, **started)
    try:
        titles = {s["id"]: s["title"] for s in await listing(client)}
        assert titles[FLAMINGO] == "Linker: libflamingo" and titles[live] == "Scratch"
        resumed = await client.call("shiro/session/resume", {"id": FLAMINGO})
        assert resumed["session"]["title"] == "Linker: libflamingo"
        fake.script += [Step(Text("Still linking."))]
        await client.call("shiro/chat", {"text": "and now?"})
        assert (await client.call("shiro/session/save"))["saved"] is True
        assert (await client.call("shiro/session/current"))["title"] == "Linker: libflamingo"
    finally:
        await client.shutdown_session()
        await client.stop()
    on_disk = json.loads((home / "sessions" / f"{FLAMINGO}.json").read_text())
    assert on_disk["title"] == "Linker: libflamingo" and len(on_disk["messages"]) == 4


@pytest.mark.parametrize(
    ("params", "code", "expected"),
    [
        ({"id": "../shiro.db", "title": "x"}, -32602, "is not a session id"),
        ({"id": "0193ffff", "title": "x"}, -32001, 'No session matching "0193ffff"'),
        ({"id": "0193bb11-0000-7000-8000-00000000", "title": "x"}, -32602, "matches more than one session"),
        ({"id": FLAMINGO, "title": "   "}, -32602, "cannot be empty"),
        ({"id": FLAMINGO, "title": "two\nlines"}, -32602, "one line of text"),
        ({"id": FLAMINGO, "title": "x" * 201}, -32602, "at most 200 characters; this one has 201"),
        ({"id": FLAMINGO}, -32602, "title"),
    ],
)
async def test_rename_bad_input_is_a_clear_error_and_nothing_changes(
    client: ShiroClient, home: Path, params: dict[str, Any], code: int, expected: str
) -> None:
    before = (home / "sessions" / f"{FLAMINGO}.json").read_bytes()
    error = await rpc_error(client, "shiro/session/rename", params)
    assert error.code == code and expected in error.message
    assert (home / "sessions" / f"{FLAMINGO}.json").read_bytes() == before
    assert [s["title"] for s in await listing(client)][-1] == "why does the build fail?"
