"""The reference's memory catalogue (spec §13 test/memory.test.ts) plus Shiro's fixes."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from shiro_lsp.errors import BadParams, ShiroError
from shiro_lsp.state.memory import MAX_ENTRIES, ProjectMemory
from shiro_lsp.state.paths import StatePaths, project_key


def memory_for(root: Path, cwd: str = "/repo/a") -> ProjectMemory:
    return ProjectMemory(StatePaths(root).memory_file(project_key(cwd)))


class Reports(list[str]):
    def __call__(self, message: str) -> None:
        self.append(message)


def test_fresh_project_renders_nothing(tmp_path: Path) -> None:
    assert memory_for(tmp_path).boot_block() == ""


def test_round_trip_through_a_second_instance(tmp_path: Path) -> None:
    memory_for(tmp_path).remember("fact", "tests run with bun test")
    assert [e.text for e in memory_for(tmp_path).entries()] == ["tests run with bun test"]


def test_per_directory_scope(tmp_path: Path) -> None:
    memory_for(tmp_path, "/repo/a").remember("fact", "only in a")
    assert memory_for(tmp_path, "/repo/b").entries() == []


def test_same_text_is_not_stored_twice(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    memory.remember("fact", "x is y")
    result = memory.remember("gotcha", "  x is y  ")
    assert result.duplicate and result.entry is None
    assert result.text == "Already recorded: x is y"
    assert len(memory.entries()) == 1


def test_empty_note_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(BadParams, match="empty"):
        memory_for(tmp_path).remember("fact", "   ")


def test_long_text_is_cut_to_400_and_the_reply_says_so(tmp_path: Path) -> None:
    result = memory_for(tmp_path).remember("fact", "y" * 2000)
    assert result.entry is not None and len(result.entry.text) == 400
    assert result.truncated and "cut to 400 characters" in result.text


def test_remember_reply_names_kind_and_count(tmp_path: Path) -> None:
    assert (
        memory_for(tmp_path).remember("command", "make test").text
        == "Remembered as command (1 stored): make test"
    )


def test_unknown_kind_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(BadParams, match="Unknown memory kind"):
        memory_for(tmp_path).remember("opinion", "x")


def test_search_requires_every_term_and_records_a_hit(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    memory.remember("fact", "columns use snake_case names")
    assert [e.text for e in memory.recall("snake_case columns").entries] == ["columns use snake_case names"]
    assert memory.recall("snake_case missing").entries == []
    assert memory.entries()[0].hits == 1


def test_hit_survives_reload(tmp_path: Path) -> None:
    memory_for(tmp_path).remember("fact", "alpha beta")
    memory_for(tmp_path).recall("alpha")
    assert memory_for(tmp_path).entries()[0].hits == 1


def test_every_match_is_counted_but_only_the_15_newest_are_returned(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    for i in range(20):
        memory.remember("fact", f"note {i} about parsing")
    found = memory.recall("parsing").entries
    assert [e.text for e in found][:2] == ["note 19 about parsing", "note 18 about parsing"]
    assert len(found) == 15
    assert all(e.hits == 1 for e in memory.entries())


def test_empty_query_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(BadParams, match="query is empty"):
        memory_for(tmp_path).recall("  ")


def test_recall_with_no_match_says_nothing_recorded(tmp_path: Path) -> None:
    assert memory_for(tmp_path).recall("zebra").text == 'Nothing recorded about "zebra".'


def test_boot_block_ranks_recalled_above_unused_with_the_exact_preamble(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    memory.remember("gotcha", "the migration must run before the seed")
    memory.remember("command", "tests run with bun test, not npm test")
    memory.recall("migration")
    assert memory.boot_block() == (
        "\nWhat you learned about this project in earlier sessions. Trust it, but verify anything\n"
        "that contradicts what you can see in the code now:\n"
        "- (gotcha) the migration must run before the seed\n"
        "- (command) tests run with bun test, not npm test"
    )


def test_boot_block_holds_the_top_20(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    for i in range(25):
        memory.remember("fact", f"fact number {i}")
    assert memory.boot_block().count("\n- ") == 20


def test_forget_by_substring(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    memory.remember("fact", "Use Postgres 16")
    memory.remember("fact", "keep this")
    assert memory.forget("postgres").text == "Forgot 1 memory."
    assert [e.text for e in memory.entries()] == ["keep this"]


def test_forget_plural_and_no_match(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    memory.remember("fact", "a one")
    memory.remember("fact", "a two")
    assert memory.forget("zzz").text == 'No memory matches "zzz".'
    assert memory.forget("a ").text == "Forgot 2 memories."


def test_forget_with_an_empty_needle_is_an_error_not_a_wipe(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    memory.remember("fact", "precious")
    with pytest.raises(BadParams):
        memory.forget("   ")
    assert len(memory.entries()) == 1


def test_corrupt_file_is_set_aside_and_reported_not_replaced(tmp_path: Path) -> None:
    reports = Reports()
    path = StatePaths(tmp_path).memory_file("k")
    path.parent.mkdir(parents=True)
    path.write_text("{ not json")
    memory = ProjectMemory(path, reporter=reports)
    assert memory.entries() == []
    aside = list(path.parent.glob("k.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_text() == "{ not json"
    assert "not valid JSON" in reports[0] and aside[0].name in reports[0]


def test_invalid_utf8_is_set_aside(tmp_path: Path) -> None:
    reports = Reports()
    path = tmp_path / "m.json"
    path.write_bytes(b'[{"text": "\xff\xfe"}]')
    assert ProjectMemory(path, reporter=reports).entries() == []
    assert "UTF-8" in reports[0]
    assert list(tmp_path.glob("m.json.corrupt-*"))


def test_a_directory_in_place_of_the_store_is_set_aside(tmp_path: Path) -> None:
    reports = Reports()
    path = tmp_path / "m.json"
    path.mkdir()
    (path / "inside").write_text("kept")
    memory = ProjectMemory(path, reporter=reports)
    memory.remember("fact", "works anyway")
    assert [e.text for e in memory.entries()] == ["works anyway"]
    (aside,) = tmp_path.glob("m.json.corrupt-*")
    assert (aside / "inside").read_text() == "kept"


def test_non_entry_values_are_skipped_and_the_original_kept(tmp_path: Path) -> None:
    reports = Reports()
    path = tmp_path / "m.json"
    good = {"id": "a", "kind": "fact", "text": "ok", "createdAt": "now", "hits": 0}
    path.write_text(json.dumps([good, {"junk": True}, 42]))
    memory = ProjectMemory(path, reporter=reports)
    assert [e.text for e in memory.entries()] == ["ok"]
    (copy,) = tmp_path.glob("m.json.corrupt-*")
    assert json.loads(copy.read_text())[1] == {"junk": True}


def test_store_is_capped_at_300_dropping_unused_oldest_first(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    memory.remember("fact", "precious recalled note")
    memory.recall("precious")
    for i in range(MAX_ENTRIES + 5):
        memory.remember("fact", f"filler {i}")
    texts = [e.text for e in memory.entries()]
    assert len(texts) == MAX_ENTRIES
    assert "precious recalled note" in texts
    assert "filler 0" not in texts and f"filler {MAX_ENTRIES + 4}" in texts


def test_listing_is_newest_first_with_recall_counts(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    assert memory.listing()[1] == "nothing remembered about this project yet"
    memory.remember("fact", "older one")
    memory.remember("decision", "newer one")
    memory.recall("older")
    assert memory.listing()[1] == "(decision) newer one\n(fact) older one  [recalled 1x]"


def test_writes_are_atomic_pretty_json(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    memory.remember("fact", "é unicode kept")
    raw = memory.path.read_text()
    assert raw.startswith("[\n  {") and "é unicode kept" in raw
    assert not list(memory.path.parent.glob(".*.tmp"))


def test_threads_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    def writer(tag: str) -> None:
        memory = memory_for(tmp_path)
        for i in range(50):
            memory.remember("fact", f"{tag} {i}")

    threads = [threading.Thread(target=writer, args=(f"t{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(memory_for(tmp_path).entries()) == 200


class ScriptedModel:
    def __init__(self, output: str) -> None:
        self.output = output
        self.calls: list[tuple[str, str]] = []

    async def __call__(self, system: str, prompt: str) -> str:
        self.calls.append((system, prompt))
        return self.output


async def test_summarize_merges_unused_and_keeps_recalled_verbatim(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    memory.remember("fact", "recalled one")
    memory.remember("fact", "unused a")
    memory.remember("fact", "unused b")
    memory.recall("recalled")
    model = ScriptedModel("[fact] merged a\n[GOTCHA] merged b\nchatter that is ignored")
    result = await memory.compact(model, gated=False)
    assert (result.before, result.after) == (3, 3)
    assert result.text == "memory compacted: 3 entries into 3"
    assert model.calls[0][1] == "[fact] unused a\n[fact] unused b"
    assert "[fact], [decision], [gotcha], or [command]" in model.calls[0][0]
    reloaded = memory_for(tmp_path).entries()
    assert [(e.kind, e.text, e.hits) for e in reloaded] == [
        ("fact", "recalled one", 1),
        ("fact", "merged a", 0),
        ("gotcha", "merged b", 0),
    ]


async def test_unparseable_model_output_leaves_memory_untouched(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    memory.remember("fact", "unused a")
    memory.remember("fact", "unused b")
    before = memory.path.read_text()
    result = await memory.compact(ScriptedModel("Sure! Here are your notes."), gated=False)
    assert result.before == result.after == 2
    assert memory.path.read_text() == before


async def test_fewer_than_two_unused_is_a_no_op(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    memory.remember("fact", "only one")
    model = ScriptedModel("[fact] x")
    result = await memory.compact(model, gated=False)
    assert result.text == "memory left as is: 1 entries, too few unused ones to merge"
    assert model.calls == []


async def test_no_model_is_an_error(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    memory.remember("fact", "a")
    memory.remember("fact", "b")
    with pytest.raises(ShiroError, match="no model"):
        await memory.compact(None, gated=False)


async def test_the_command_gate_says_so_below_60_entries(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    for i in range(59):
        memory.remember("fact", f"n{i}")
    model = ScriptedModel("[fact] x")
    result = await memory.compact(model)
    assert result.after == 59 and "compaction starts at 60" in result.text and model.calls == []
    memory.remember("fact", "n59")
    assert (await memory.compact(model)).after == 1


async def test_entries_added_during_the_model_call_are_kept(tmp_path: Path) -> None:
    memory = memory_for(tmp_path)
    memory.remember("fact", "a")
    memory.remember("fact", "b")

    async def slow_model(system: str, prompt: str) -> str:
        memory_for(tmp_path).remember("fact", "arrived meanwhile")
        return "[fact] a and b"

    await memory.compact(slow_model, gated=False)
    assert sorted(e.text for e in memory.entries()) == ["a and b", "arrived meanwhile"]
