"""The reference's history catalogue (spec §6.1 test/history.test.ts)."""

from __future__ import annotations

import json
from pathlib import Path

from shiro_lsp.state.history import PromptHistory


def history(root: Path, key: str = "a") -> PromptHistory:
    return PromptHistory(root / f"{key}.json")


def test_fresh_is_empty(tmp_path: Path) -> None:
    assert history(tmp_path).load() == []


def test_round_trip_keeps_order(tmp_path: Path) -> None:
    for prompt in ["one", "two"]:
        history(tmp_path).append(prompt)
    assert history(tmp_path).load() == ["one", "two"]


def test_per_directory_scope(tmp_path: Path) -> None:
    history(tmp_path, "a").append("x")
    assert history(tmp_path, "b").load() == []


def test_immediate_repeat_stored_once_non_adjacent_kept(tmp_path: Path) -> None:
    h = history(tmp_path)
    for prompt in ["a", "a", "b", "a"]:
        h.append(prompt)
    assert h.load() == ["a", "b", "a"]


def test_blanks_ignored_and_text_trimmed(tmp_path: Path) -> None:
    h = history(tmp_path)
    h.append("   ")
    h.append("  spaced  ")
    assert h.load() == ["spaced"]


def test_capped_at_200(tmp_path: Path) -> None:
    h = history(tmp_path)
    for i in range(210):
        h.append(f"p{i}")
    loaded = h.load()
    assert len(loaded) == 200 and loaded[0] == "p10" and loaded[-1] == "p209"


def test_corrupt_file_reads_empty_and_is_kept_aside(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("oops")
    assert history(tmp_path).load() == []
    assert list(tmp_path.glob("a.json.corrupt-*"))


def test_non_strings_filtered(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(["ok", 42, None, "also ok"]))
    assert history(tmp_path).load() == ["ok", "also ok"]
