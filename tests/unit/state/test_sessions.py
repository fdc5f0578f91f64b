"""Session records, the store and its index, the live session, autosave and the manager, on real files."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from shiro_lsp.errors import BadParams, NotFound, ShiroError
from shiro_lsp.state.autosave import Autosave
from shiro_lsp.state.paths import StatePaths
from shiro_lsp.state.sessions import (
    LiveSession,
    MessageCache,
    SessionFormatError,
    SessionManager,
    SessionRecord,
    SessionStore,
    decode_record,
    encode_record,
    export_markdown,
)
from shiro_lsp.state.todos import Todo
from shiro_lsp.usage import Usage

WORKSPACE = "/home/me/project"


def conversation(n: int, tag: str = "") -> list[dict[str, Any]]:
    """A realistic history: user text, assistant tool call, tool result, assistant text."""
    messages: list[dict[str, Any]] = []
    for i in range(n):
        turn = i % 4
        if turn == 0:
            messages.append({"role": "user", "content": f"{tag}question {i}: why does the test fail?"})
        elif turn == 1:
            messages.append(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "reasoning", "text": "look at the file"},
                        {
                            "type": "tool-call",
                            "toolCallId": f"c{i}",
                            "toolName": "read_file",
                            "input": {"path": "a.py"},
                        },
                    ],
                }
            )
        elif turn == 2:
            messages.append(
                {
                    "role": "tool",
                    "content": [
                        {
                            "type": "tool-result",
                            "toolCallId": f"c{i - 1}",
                            "toolName": "read_file",
                            "output": {"type": "text", "value": "def f():\n    return 1  # ```"},
                        }
                    ],
                }
            )
        else:
            messages.append({"role": "assistant", "content": [{"type": "text", "text": f"answer {i} ✓"}]})
    return messages


def reference_file(
    directory: Path,
    session_id: str,
    *,
    cwd: str = WORKSPACE,
    updated: str = "2026-01-02T03:04:05.000Z",
    messages: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> Path:
    """A session file exactly as the reference writes it (pretty JSON, 2 spaces)."""
    msgs = conversation(4) if messages is None else messages
    record = {
        "id": session_id,
        "createdAt": "2026-01-01T00:00:00.000Z",
        "updatedAt": updated,
        "cwd": cwd,
        "provider": "openai",
        "model": "gpt-5",
        "title": msgs[0]["content"] if msgs and isinstance(msgs[0]["content"], str) else "untitled",
        "inputTokens": 1200,
        "outputTokens": 340,
        "costUsd": 0.0049,
        "notebook": {"todos": [{"content": "find the bug", "status": "in_progress"}]},
        "messages": msgs,
        **extra,
    }
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{session_id}.json"
    path.write_text(json.dumps(record, indent=2))
    return path


@pytest.fixture
def paths(tmp_path: Path) -> StatePaths:
    return StatePaths(tmp_path / "state")


@pytest.fixture
def reports() -> list[str]:
    return []


@pytest.fixture
def store(paths: StatePaths, reports: list[str]) -> SessionStore:
    return SessionStore(paths, reports.append)


def record(session_id: str, *, cwd: str = WORKSPACE, n: int = 4, tag: str = "") -> SessionRecord:
    return SessionRecord(
        id=session_id,
        created_at="2026-01-01T00:00:00.000Z",
        updated_at="2026-01-01T00:00:00.000Z",
        cwd=cwd,
        provider="openai",
        model="gpt-5",
        title="",
        input_tokens=10,
        output_tokens=5,
        cost_usd=None,
        todos=[Todo("step", "pending")],
        messages=conversation(n, tag),
    )


# --- the record ----------------------------------------------------------------------------------


def test_record_round_trips_through_the_file_format_with_reference_field_names() -> None:
    original = record("0193ab2c-0000-7000-8000-000000000001", n=6)
    data = b"".join(encode_record(original))
    value = json.loads(data)
    assert list(value) == [
        "id",
        "createdAt",
        "updatedAt",
        "cwd",
        "provider",
        "model",
        "title",
        "inputTokens",
        "outputTokens",
        "notebook",
        "messages",
    ]
    assert value["notebook"] == {"todos": [{"content": "step", "status": "pending"}]}
    assert decode_record(data) == original
    assert "✓" in data.decode("utf-8")  # readable, not \u-escaped


def test_a_lone_surrogate_in_a_message_still_writes_valid_json() -> None:
    bad = SessionRecord(
        "x1", "t", "t", "/", "openai", "m", "t", messages=[{"role": "user", "content": "a\udc80b"}]
    )
    parsed = json.loads(b"".join(encode_record(bad)))
    assert parsed["messages"][0]["content"] == "a\udc80b"


def test_an_empty_record_is_valid_json() -> None:
    empty = SessionRecord("x1", "t", "t", "/", "openai", "m", "untitled")
    assert json.loads(b"".join(encode_record(empty)))["messages"] == []


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        ({"messages": "hello"}, '"messages" must be a list'),
        ({"messages": [{"content": "no role"}]}, "messages[0] is not a message"),
        ({"id": 7}, '"id" must be text'),
        ({"inputTokens": "12"}, '"inputTokens" must be a whole number'),
        ({"outputTokens": True}, '"outputTokens" must be a whole number'),
        ({"costUsd": "cheap"}, '"costUsd" must be a number'),
        ({"notebook": []}, '"notebook" must be an object'),
    ],
)
def test_a_wrong_schema_is_refused_naming_the_field(change: dict[str, Any], complaint: str) -> None:
    value = record("x1").to_json() | change
    with pytest.raises(SessionFormatError) as caught:
        SessionRecord.from_json(value)
    assert complaint in caught.value.message


def test_missing_id_is_refused() -> None:
    value = record("x1").to_json()
    del value["id"]
    with pytest.raises(SessionFormatError, match='"id" must be text'):
        SessionRecord.from_json(value)


def test_invalid_todos_in_a_saved_notebook_are_dropped_leniently() -> None:
    value = record("x1").to_json() | {"notebook": {"todos": [{"content": "ok", "status": "done"}, {"x": 1}]}}
    assert SessionRecord.from_json(value).todos == [Todo("ok", "done")]


# --- the store and its index ---------------------------------------------------------------------


def test_save_stamps_updated_at_and_title_and_load_returns_it(store: SessionStore) -> None:
    saved = store.save(record("a1"))
    assert saved.updated_at != "2026-01-01T00:00:00.000Z" and saved.updated_at.endswith("Z")
    assert saved.title == "question 0: why does the test fail?"
    assert store.load("a1") == saved


def test_list_is_newest_first_filtered_by_workspace_and_limited(store: SessionStore) -> None:
    for i in range(5):
        store.save(record(f"a{i}"))
    store.save(record("other", cwd="/elsewhere"))
    listed = store.list(cwd=WORKSPACE, limit=3)
    assert [s.id for s in listed] == ["a4", "a3", "a2"]
    assert listed[0].message_count == 4 and listed[0].input_tokens == 10
    assert {s.id for s in store.list(limit=100)} == {"a0", "a1", "a2", "a3", "a4", "other"}


def test_listing_reads_the_index_not_the_files(store: SessionStore, paths: StatePaths) -> None:
    store.save(record("a1"))
    store.list()
    path = paths.sessions_dir / "a1.json"
    # Same size and mtime, different bytes: a listing that parsed files would now fail.
    info = path.stat()
    path.write_bytes(b"x" * info.st_size)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    os.utime(paths.sessions_dir, ns=(0, 0))  # an old, settled directory
    store.list()
    os.utime(paths.sessions_dir, ns=(0, 0))
    assert [s.title for s in store.list()] == ["question 0: why does the test fail?"]


def test_a_file_the_index_does_not_know_is_picked_up(store: SessionStore, paths: StatePaths) -> None:
    store.save(record("a1"))
    assert [s.id for s in store.list()] == ["a1"]
    reference_file(
        paths.sessions_dir, "0193ab2c-aaaa-7000-8000-000000000000", updated="2099-01-01T00:00:00.000Z"
    )
    listed = store.list()
    assert [s.id for s in listed] == ["0193ab2c-aaaa-7000-8000-000000000000", "a1"]
    assert listed[0].cost_usd == 0.0049 and listed[0].message_count == 4


def test_a_file_changed_in_place_is_reindexed(store: SessionStore, paths: StatePaths) -> None:
    store.save(record("a1"))
    store.list()
    reference_file(paths.sessions_dir, "a1", messages=conversation(8, "edited "))
    assert store.list()[0].title == "edited question 0: why does the test fail?"


def test_a_missing_index_is_rebuilt_from_the_files(paths: StatePaths, reports: list[str]) -> None:
    first = SessionStore(paths, reports.append)
    for i in range(3):
        first.save(record(f"a{i}"))
    paths.database.unlink()
    for suffix in ("-wal", "-shm"):
        Path(str(paths.database) + suffix).unlink(missing_ok=True)
    again = SessionStore(paths, reports.append)
    assert [s.id for s in again.list()] == ["a2", "a1", "a0"]


def test_an_index_row_whose_file_was_removed_disappears(store: SessionStore, paths: StatePaths) -> None:
    store.save(record("a1"))
    store.save(record("a2"))
    (paths.sessions_dir / "a1.json").unlink()
    assert [s.id for s in store.list()] == ["a2"]


def test_a_corrupt_file_is_skipped_reported_once_and_left_alone(
    store: SessionStore, paths: StatePaths, reports: list[str]
) -> None:
    store.save(record("a1"))
    broken = paths.sessions_dir / "b2.json"
    broken.write_bytes(b'{"id": "b2", "messages": [')
    wrong = reference_file(paths.sessions_dir, "c3", messages=[{"content": "no role"}])
    wrong_bytes = wrong.read_bytes()
    assert [s.id for s in store.list()] == ["a1"]
    assert len(reports) == 2
    assert any("b2.json" in r and "not valid JSON" in r for r in reports)
    assert any("c3.json" in r and "messages[0]" in r for r in reports)
    store.list()
    assert len(reports) == 2
    assert broken.read_bytes() == b'{"id": "b2", "messages": [' and wrong.read_bytes() == wrong_bytes
    with pytest.raises(SessionFormatError, match="left as it is"):
        store.load("b2")


def test_a_file_whose_id_does_not_match_its_name_is_skipped(
    store: SessionStore, paths: StatePaths, reports: list[str]
) -> None:
    path = reference_file(paths.sessions_dir, "d4")
    path.rename(paths.sessions_dir / "e5.json")
    assert store.list() == []
    assert "e5.json" in reports[0] and "does not match its name" in reports[0]


def test_temp_files_and_strange_names_are_ignored(store: SessionStore, paths: StatePaths) -> None:
    store.save(record("a1"))
    (paths.sessions_dir / ".a1.json.123.tmp").write_text("{")
    (paths.sessions_dir / "notes.txt").write_text("hi")
    (paths.sessions_dir / "we ird.json").write_text("{")
    assert [s.id for s in store.list()] == ["a1"]


def test_resolve_full_id_unique_prefix_ambiguity_and_unknown(store: SessionStore) -> None:
    store.save(record("0193ab2c-1111-7000-8000-000000000000"))
    store.save(record("0193ab2c-2222-7000-8000-000000000000"))
    store.save(record("0193ff00-3333-7000-8000-000000000000"))
    assert store.resolve("0193ab2c-1111-7000-8000-000000000000") == "0193ab2c-1111-7000-8000-000000000000"
    assert store.resolve("0193ff") == "0193ff00-3333-7000-8000-000000000000"
    with pytest.raises(BadParams) as caught:
        store.resolve("0193ab2c")
    assert "matches more than one session" in caught.value.message
    assert caught.value.data == {
        "candidates": ["0193ab2c-2222-7000-8000-000000000000", "0193ab2c-1111-7000-8000-000000000000"]
    }
    with pytest.raises(NotFound, match='No session matching "0200"'):
        store.resolve("0200")


@pytest.mark.parametrize("bad", ["../x", "..", "a/b", "/etc/passwd", "", "a.json", "a b", "-x"])
def test_path_like_ids_are_refused(store: SessionStore, bad: str) -> None:
    with pytest.raises(BadParams, match="is not a session id"):
        store.resolve(bad)
    with pytest.raises(BadParams):
        store.load(bad)
    with pytest.raises(BadParams):
        store.delete(bad)


def test_delete_removes_file_and_row(store: SessionStore, paths: StatePaths) -> None:
    store.save(record("a1"))
    store.save(record("a2"))
    assert store.delete("a1") is True
    assert not (paths.sessions_dir / "a1.json").exists()
    assert [s.id for s in store.list()] == ["a2"]
    with pytest.raises(NotFound):
        store.load("a1")


def test_a_sessions_path_that_is_a_file_is_a_clear_error_and_is_left_alone(
    store: SessionStore, paths: StatePaths
) -> None:
    paths.root.mkdir(parents=True)
    paths.sessions_dir.write_text("my notes")
    with pytest.raises(ShiroError, match="it is not a folder"):
        store.list()
    with pytest.raises(ShiroError, match="it is not a folder"):
        store.save(record("a1"))
    assert paths.sessions_dir.read_text() == "my notes"


def test_an_unreadable_index_is_reported_left_alone_and_listing_still_works(
    paths: StatePaths, reports: list[str]
) -> None:
    reference_file(paths.sessions_dir, "a1")
    paths.database.write_bytes(b"this is not a database" * 100)
    store = SessionStore(paths, reports.append)
    assert [s.id for s in store.list()] == ["a1"]
    assert "could not be opened" in reports[0]
    assert paths.database.read_bytes() == b"this is not a database" * 100
    store.save(record("a2"))
    assert [s.id for s in store.list()] == ["a2", "a1"]


def test_the_index_schema_is_versioned(store: SessionStore, paths: StatePaths) -> None:
    store.save(record("a1"))
    with sqlite3.connect(paths.database) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] >= 1
        assert connection.execute("SELECT message_count FROM sessions").fetchone()[0] == 4


# --- the live session ----------------------------------------------------------------------------


def test_every_mutation_of_the_live_session_calls_on_change() -> None:
    calls: list[int] = []
    live = LiveSession.fresh(cwd=WORKSPACE, provider="openai", model="gpt-5")
    live.on_change = lambda: calls.append(len(live.messages))
    live.append({"role": "user", "content": "hi"})
    live.append({"role": "assistant", "content": "a"}, {"role": "user", "content": "b"})
    live.replace([{"role": "user", "content": "x" * 70}])
    live.add_usage(Usage(100, 20, cost_usd=None))
    live.add_usage(Usage(50, 10, cost_usd=0.25))
    live.add_usage(Usage(1, 1, cost_usd=None))
    live.set_todos([Todo("a", "in_progress")])
    assert calls == [1, 3, 1, 1, 1, 1, 1]
    assert live.title == "x" * 60 + "..."
    assert (live.input_tokens, live.output_tokens, live.cost_usd) == (151, 31, None)  # unpriced runs: unknown
    snapshot = live.to_record()
    live.append({"role": "assistant", "content": "later"})
    assert len(snapshot.messages) == 1 and snapshot.todos == [Todo("a", "in_progress")]


def test_unpriced_usage_keeps_cost_unknown_and_ids_are_uuid7() -> None:
    live = LiveSession.fresh(cwd=WORKSPACE, provider="openai", model="local")
    live.add_usage(Usage(10, 10, cost_usd=None))
    assert live.cost_usd is None
    assert live.id[14] == "7" and len(live.id) == 36
    other = LiveSession.fresh(cwd=WORKSPACE, provider="openai", model="local")
    assert other.id > live.id and other.grants == set() and other.grants is not live.grants


# --- autosave ------------------------------------------------------------------------------------


async def test_autosave_debounces_a_burst_into_one_write() -> None:
    writes: list[int] = []
    state = {"n": 0}
    autosave: Autosave[int] = Autosave(
        snapshot=lambda: state["n"], write=lambda n: writes.append(n) or n, delay=0.05
    )
    for i in range(1, 11):
        state["n"] = i
        autosave.poke()
        await asyncio.sleep(0.001)
    await asyncio.sleep(0.2)
    assert writes == [10]


async def test_autosave_does_not_wait_forever_while_changes_keep_coming() -> None:
    writes: list[int] = []
    state = {"n": 0}
    autosave: Autosave[int] = Autosave(
        snapshot=lambda: state["n"], write=lambda n: writes.append(n) or n, delay=0.05, max_delay=0.1
    )
    for i in range(1, 40):
        state["n"] = i
        autosave.poke()
        await asyncio.sleep(0.01)
    assert writes, "a steady stream of changes must still be saved"
    await autosave.flush()
    assert writes[-1] == 39 and writes == sorted(writes)


async def test_autosave_reports_a_failure_once_and_retries_on_the_next_change() -> None:
    errors: list[Exception] = []
    attempts: list[int] = []

    def write(n: int) -> int:
        attempts.append(n)
        if len(attempts) < 3:
            raise OSError("disk full")
        return n

    autosave: Autosave[int] = Autosave(snapshot=lambda: 1, write=write, on_error=errors.append, delay=0.01)
    autosave.poke()
    await autosave.flush()
    autosave.poke()
    await autosave.flush()
    assert len(errors) == 1 and autosave.dirty
    assert await autosave.flush() is True and not autosave.dirty


def test_flush_sync_writes_without_a_loop_and_never_writes_nothing() -> None:
    writes: list[int | None] = []
    value: dict[str, int | None] = {"v": None}
    autosave: Autosave[int] = Autosave(snapshot=lambda: value["v"], write=lambda n: writes.append(n) or n)
    autosave.poke()
    assert autosave.flush_sync() is False
    value["v"] = 3
    autosave.poke()
    assert autosave.flush_sync() is True and writes == [3]
    assert autosave.flush_sync() is False


# --- the manager ---------------------------------------------------------------------------------


def manager(paths: StatePaths, reports: list[str], cwd: str = WORKSPACE) -> SessionManager:
    return SessionManager(
        SessionStore(paths, reports.append),
        cwd=cwd,
        provider="openai",
        model=lambda: "gpt-5",
        reporter=reports.append,
    )


async def test_an_empty_session_is_never_written(paths: StatePaths, reports: list[str]) -> None:
    sessions = manager(paths, reports)
    outcome = await sessions.save()
    assert outcome.saved is False and outcome.reason == "Nothing to save: this session has no messages yet."
    new = await sessions.new()
    assert new.previous is None
    await sessions.flush()
    sessions.flush_sync()
    assert not paths.sessions_dir.exists() or not list(paths.sessions_dir.glob("*.json"))


async def test_autosave_writes_after_a_change_and_notifies(paths: StatePaths, reports: list[str]) -> None:
    sessions = manager(paths, reports)
    seen: list[int] = []
    sessions.on_changed = lambda live: seen.append(len(live.messages))
    sessions.current.append(*conversation(2))
    for _ in range(200):
        if seen:
            break
        await asyncio.sleep(0.05)
    assert seen == [2]
    path = paths.sessions_dir / f"{sessions.current.id}.json"
    assert len(json.loads(path.read_text())["messages"]) == 2


async def test_new_and_clear_keep_the_old_session_and_start_a_new_id(
    paths: StatePaths, reports: list[str]
) -> None:
    sessions = manager(paths, reports)
    first = sessions.current
    first.append(*conversation(3))
    first.set_todos([Todo("t", "done")])
    cleared = await sessions.clear()
    assert (
        cleared.previous is not None
        and cleared.previous.id == first.id
        and cleared.previous.message_count == 3
    )
    assert cleared.session.id != first.id and cleared.session.message_count == 0
    assert sessions.current.tasks.todos == [] and sessions.current.input_tokens == 0
    kept = json.loads((paths.sessions_dir / f"{first.id}.json").read_text())
    assert len(kept["messages"]) == 3 and kept["notebook"]["todos"] == [{"content": "t", "status": "done"}]
    await sessions.flush()
    assert len(json.loads((paths.sessions_dir / f"{first.id}.json").read_text())["messages"]) == 3


async def test_resume_restores_everything_and_the_next_save_writes_that_record(
    paths: StatePaths, reports: list[str]
) -> None:
    sid = "0193ab2c-0000-7000-8000-00000000abcd"
    reference_file(paths.sessions_dir, sid, cwd="/somewhere/else", messages=conversation(6))
    sessions = manager(paths, reports)
    sessions.current.append({"role": "user", "content": "unrelated work"})
    sessions.current.set_todos([Todo("unrelated", "pending")])
    sessions.current.add_usage(Usage(999, 999, cost_usd=9.0))
    live = await sessions.resume("0193ab2c")
    assert live.id == sid and len(live.messages) == 6
    assert live.tasks.todos == [Todo("find the bug", "in_progress")]
    assert (live.input_tokens, live.output_tokens, live.cost_usd) == (1200, 340, 0.0049)
    live.append({"role": "user", "content": "and now?"})
    live.add_usage(Usage(100, 10, cost_usd=0.001))
    await sessions.save()
    saved = json.loads((paths.sessions_dir / f"{sid}.json").read_text())
    assert saved["createdAt"] == "2026-01-01T00:00:00.000Z" and saved["cwd"] == "/somewhere/else"
    assert saved["inputTokens"] == 1300 and saved["outputTokens"] == 350
    assert saved["costUsd"] == pytest.approx(0.0059)
    assert saved["notebook"]["todos"] == [{"content": "find the bug", "status": "in_progress"}]
    assert len(saved["messages"]) == 7
    # The session we left was saved first, with its own task list and counters.
    (previous,) = [s for s in await sessions.list(all_workspaces=True) if s.id != sid]
    assert previous.title == "unrelated work" and previous.input_tokens == 999


async def test_resume_latest_picks_the_newest_session_of_this_workspace(
    paths: StatePaths, reports: list[str]
) -> None:
    reference_file(paths.sessions_dir, "a1", updated="2026-03-01T00:00:00.000Z")
    reference_file(paths.sessions_dir, "a2", updated="2026-04-01T00:00:00.000Z")
    reference_file(paths.sessions_dir, "b1", cwd="/other", updated="2026-05-01T00:00:00.000Z")
    sessions = manager(paths, reports)
    assert (await sessions.resume(latest=True)).id == "a2"
    elsewhere = manager(paths, reports, cwd="/nowhere")
    with pytest.raises(NotFound, match="No saved session for this workspace"):
        await elsewhere.resume(latest=True)
    with pytest.raises(BadParams):
        await elsewhere.resume()


async def test_a_failed_save_keeps_the_live_session_instead_of_switching(
    paths: StatePaths, reports: list[str]
) -> None:
    sessions = manager(paths, reports)
    live = sessions.current
    live.append(*conversation(2))
    paths.root.mkdir(parents=True)
    paths.sessions_dir.write_text("squatter")
    with pytest.raises(ShiroError, match="not a folder"):
        await sessions.new()
    assert sessions.current is live and len(live.messages) == 2


async def test_branch_copies_history_up_to_a_message(paths: StatePaths, reports: list[str]) -> None:
    sessions = manager(paths, reports)
    sessions.current.append(*conversation(8))
    sessions.current.set_todos([Todo("keep me", "pending")])
    sessions.current.add_usage(Usage(10, 10, cost_usd=0.5))
    branch = await sessions.branch(None, 3)
    assert branch.id != sessions.current.id and branch.message_count == 4
    copy = json.loads((paths.sessions_dir / f"{branch.id}.json").read_text())
    assert copy["messages"] == conversation(8)[:4] and copy["cwd"] == WORKSPACE
    assert copy["notebook"]["todos"] == [{"content": "keep me", "status": "pending"}]
    assert copy["inputTokens"] == 0 and "costUsd" not in copy
    whole = await sessions.branch(branch.id[:13], None)
    assert whole.message_count == 4
    with pytest.raises(BadParams, match="past the end"):
        await sessions.branch(None, 8)


async def test_export_json_and_markdown(paths: StatePaths, reports: list[str]) -> None:
    sessions = manager(paths, reports)
    sessions.current.append(*conversation(4))
    exported = json.loads(await sessions.export(None, "json"))
    assert exported["id"] == sessions.current.id and exported["messages"] == conversation(4)
    markdown = await sessions.export(sessions.current.id[:20], "markdown")
    assert markdown.startswith("# question 0: why does the test fail?\n")
    assert "### User" in markdown and "**Tool call** `read_file`" in markdown
    # The tool output holds ``` so the fence around it must be longer.
    assert "````\ndef f():\n    return 1  # ```\n````" in markdown


def test_markdown_lists_tasks_and_cost() -> None:
    text = export_markdown(record("a1"))
    assert "## Tasks\n\n- [ ] step" in text and "- tokens: 10 in / 5 out" in text


async def test_delete_refuses_the_live_session_and_removes_others(
    paths: StatePaths, reports: list[str]
) -> None:
    sessions = manager(paths, reports)
    reference_file(paths.sessions_dir, "a1")
    sessions.current.append(*conversation(2))
    await sessions.save()
    with pytest.raises(ShiroError, match="live session"):
        await sessions.delete(sessions.current.id)
    assert await sessions.delete("a1") is True
    assert [s.id for s in await sessions.list()] == [sessions.current.id]


def test_the_message_cache_writes_what_the_session_holds_now(store: SessionStore, paths: StatePaths) -> None:
    cache = MessageCache()
    first = record("a1", n=3)
    store.save(first, cache)
    grown = replace(first, messages=[*first.messages, {"role": "user", "content": "more"}])
    store.save(grown, cache)
    assert store.load("a1").messages == grown.messages
    rewritten = replace(first, messages=[{"role": "user", "content": "summary"}, *first.messages[2:]])
    store.save(rewritten, cache)
    assert store.load("a1").messages == rewritten.messages
    assert b"".join(encode_record(rewritten, cache)) == b"".join(encode_record(rewritten))
