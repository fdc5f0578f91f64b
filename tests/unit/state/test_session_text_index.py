"""The session text index (state/sessions/search.py) through ``SessionStore``: lazy, resumable, exact."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from shiro_lsp.state.paths import StatePaths
from shiro_lsp.state.sessions import SessionRecord, SessionStore, search

WORKSPACE = "/home/me/project"


def record(session_id: str, *texts: str, title: str | None = None) -> SessionRecord:
    messages: list[dict[str, Any]] = [{"role": "user", "content": texts[0]}]
    messages += [{"role": "assistant", "content": [{"type": "text", "text": t}]} for t in texts[1:]]
    return SessionRecord(
        id=session_id,
        created_at="2026-01-01T00:00:00.000Z",
        updated_at="2026-01-01T00:00:00.000Z",
        cwd=WORKSPACE,
        provider="openai",
        model="gpt-5",
        title="",
        messages=messages,
        custom_title=title,
    )


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(StatePaths(tmp_path / "state"))


def ids(store: SessionStore, query: str) -> list[str]:
    return [hit.summary.id for hit in store.search(query, cwd=WORKSPACE)]


def test_only_user_and_assistant_text_is_indexed_and_a_given_title_too(store: SessionStore) -> None:
    saved = record("s1", "fix the parser", "done", title="Parser work")
    tool = {"role": "tool", "content": [{"type": "tool-result", "toolName": "bash", "output": "okapi"}]}
    store.save(replace(saved, messages=[*saved.messages, tool]))
    assert ids(store, "parser") == ["s1"] and ids(store, "parser work") == ["s1"]
    assert ids(store, "okapi") == []  # tool output (file contents, command output) is not searched


def test_an_interrupted_backfill_keeps_what_it_did_and_resumes(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(3):
        store.save(record(f"s{n}", f"question {n} about walruses"))
    connection = sqlite3.connect(store.database)
    connection.execute("UPDATE sessions SET text_indexed = 0")  # as right after the migration
    connection.execute("DELETE FROM session_text")
    connection.commit()

    real = search.store_text
    calls = 0

    def dies_on_the_second(*args: Any) -> bool:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise KeyboardInterrupt  # the process stops mid-backfill
        return real(*args)

    monkeypatch.setattr(search, "store_text", dies_on_the_second)
    with pytest.raises(KeyboardInterrupt):
        store.index_pending_text()
    assert connection.execute("SELECT count(*) FROM sessions WHERE text_indexed = 1").fetchone()[0] == 1
    assert connection.execute("SELECT count(*) FROM sessions").fetchone()[0] == 3
    monkeypatch.setattr(search, "store_text", real)
    assert store.index_pending_text() == 2
    assert sorted(ids(store, "walruses")) == ["s0", "s1", "s2"]
    connection.close()


def test_a_changed_file_is_reindexed_and_the_old_text_is_gone(store: SessionStore) -> None:
    store.save(record("s1", "about otters"))
    assert ids(store, "otters") == ["s1"]
    path = store.path_of("s1")
    value = json.loads(path.read_text())
    value["messages"][0]["content"] = "about beavers"
    path.write_text(json.dumps(value) + "\n")
    assert ids(store, "beavers") == ["s1"] and ids(store, "otters") == []


def test_a_text_index_row_is_written_only_for_the_file_version_it_was_read_from(
    store: SessionStore,
) -> None:
    store.save(record("s1", "about otters"))
    connection = store._db()
    (_, mtime, size), *_ = search.pending(connection)
    stale = record("s1", "an older version")
    assert search.store_text(connection, stale, (mtime - 1, size)) is False
    assert search.pending(connection) != []
    assert ids(store, "otters") == ["s1"] and ids(store, "older") == []


@pytest.mark.parametrize(
    ("typed", "expression"),
    [
        ("flamingo", '"flamingo"*'),
        ("  two words ", '"two"* "words"*'),
        ('a"b NEAR(c)', '"a"* "b"* "NEAR"* "c"*'),
        ("?!", None),
        ("", None),
    ],
)
def test_what_a_person_types_becomes_quoted_prefix_words(typed: str, expression: str | None) -> None:
    assert search.match_expression(typed) == expression
