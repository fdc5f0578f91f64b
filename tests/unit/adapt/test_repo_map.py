"""The repository map: definitions found with tree-sitter, ranked by references, rendered in a budget."""

from __future__ import annotations

import os
from pathlib import Path

from shiro_lsp.adapt.repo_map import (
    MapLimits,
    RepoMap,
    file_tags,
    outline,
    pagerank,
    ranked,
    render,
    repo_map_of,
)

LEDGER = '''"""Ledger entries."""

from dataclasses import dataclass


@dataclass
class Entry:
    amount: int

    def signed(self, debit: bool) -> int:
        return -self.amount if debit else self.amount


def balance_of(entries: list[Entry]) -> int:
    return sum(entry.signed(False) for entry in entries)
'''
REPORT = """from ledger import Entry, balance_of


def monthly_report(entries: list[Entry]) -> str:
    return f"total {balance_of(entries)}"
"""
AUDIT = """from ledger import balance_of


def audit_trail(rows):
    return [balance_of(rows)]


def unused_helper():
    return 3
"""
WIDGETS_TS = """export interface Sprocket { teeth: number }

export function spin(s: Sprocket): number {
  return s.teeth * 2;
}

export class Gearbox {
  shift(level: number): Sprocket { return new Sprocket(); }
}
"""
CLIENT_JS = """const { spin } = require("./widgets");

function rotateAll(list) {
  return list.map((s) => spin(s));
}

module.exports = { rotateAll };
"""


def project(root: Path) -> Path:
    (root / "ledger.py").write_text(LEDGER)
    (root / "report.py").write_text(REPORT)
    (root / "audit.py").write_text(AUDIT)
    (root / "web").mkdir()
    (root / "web" / "widgets.ts").write_text(WIDGETS_TS)
    (root / "web" / "client.js").write_text(CLIENT_JS)
    (root / "NOTES.md").write_text("Some notes.\n")
    return root


def test_python_definitions_carry_their_signature_and_class() -> None:
    tags = file_tags("ledger.py", LEDGER, "python")
    names = {d.name: d for d in tags.definitions}
    assert set(names) == {"Entry", "signed", "balance_of"}
    assert names["signed"].header == ("    def signed(self, debit: bool) -> int:",)
    assert names["signed"].parent == names["Entry"].line
    assert names["Entry"].start == names["Entry"].line - 1  # the decorator is part of it
    assert "Entry" in file_tags("report.py", REPORT, "python").references  # imported names count


def test_typescript_and_javascript_definitions_and_references() -> None:
    ts = file_tags("web/widgets.ts", WIDGETS_TS, "typescript")
    assert {d.name for d in ts.definitions} >= {"Sprocket", "spin", "Gearbox", "shift"}
    spin = next(d for d in ts.definitions if d.name == "spin")
    assert spin.header == ("export function spin(s: Sprocket): number {",)
    assert "spin" in file_tags("web/client.js", CLIENT_JS, "javascript").references


def test_the_most_referenced_definition_ranks_first(tmp_path: Path) -> None:
    scan = RepoMap(project(tmp_path)).scan()
    order = [(rel, d.name) for rel, d in ranked(scan) if d is not None]
    assert order.index(("ledger.py", "balance_of")) < order.index(("audit.py", "unused_helper"))
    assert [rel for rel, d in ranked(scan) if d is None][-1:] == ["NOTES.md"]  # no definitions: last


def test_the_rank_leans_toward_what_the_user_named(tmp_path: Path) -> None:
    scan = RepoMap(project(tmp_path)).scan()
    plain = [d.name for _, d in ranked(scan) if d is not None]
    toward_client = [d.name for _, d in ranked(scan, {"web/client.js"}, {"spin"}) if d is not None]
    assert toward_client.index("spin") < toward_client.index("balance_of")
    assert plain.index("spin") > plain.index("balance_of")
    toward_audit = [rel for rel, _ in ranked(scan, files={"audit.py"})]
    assert toward_audit[0] == "ledger.py"  # what the named file uses


def test_the_rendering_fits_the_budget_and_shows_paths_then_signatures(tmp_path: Path) -> None:
    scan = RepoMap(project(tmp_path)).scan()
    entries = ranked(scan)
    text = render(scan, entries, 60)
    assert len(text) // 4 <= 60 and "ledger.py:\n" in text
    assert "def balance_of(entries: list[Entry]) -> int:" in text
    assert "return" not in text  # signatures, never bodies
    assert render(scan, entries, 10_000).count("\n") > text.count("\n")
    assert "ledger.py" not in render(scan, entries, 10_000, skip={"ledger.py"})
    assert render(scan, entries, 0) == ""


def test_the_walk_honours_ignore_files_secrets_and_skips_tool_folders(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / ".gitignore").write_text("generated/\n")
    (root / "generated").mkdir()
    (root / "generated" / "big.py").write_text("def generated_thing():\n    pass\n")
    (root / ".env").write_text("TOKEN=hunter2\n")
    (root / "venv").mkdir()
    (root / "venv" / "pyvenv.cfg").write_text("home = /usr\n")
    (root / "venv" / "lib.py").write_text("def vendored():\n    pass\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "dep.js").write_text("function dep() {}\n")
    files = RepoMap(root).scan().files
    assert "ledger.py" in files
    assert not [rel for rel in files if rel.startswith(("generated/", "venv/", "node_modules/", ".env"))]


def test_binaries_and_huge_files_are_listed_not_parsed(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "blob.py").write_bytes(b"def x():\x00\n")
    (root / "huge.py").write_text("def big_one():\n    pass\n" + "# filler\n" * 2000)
    scan = RepoMap(root, MapLimits(parse_bytes=10_000)).scan()
    assert {"blob.py", "huge.py"} <= set(scan.files)
    assert "huge.py" not in scan.tags and "blob.py" not in {
        rel for rel, t in scan.tags.items() if t.definitions
    }


def test_out_of_time_the_files_are_listed_and_the_scan_says_it_is_partial(tmp_path: Path) -> None:
    scan = RepoMap(project(tmp_path), MapLimits(seconds=0)).scan()
    assert "ledger.py" in scan.files and not scan.tags and not scan.complete


def test_a_later_scan_reuses_the_tags_of_unchanged_files(tmp_path: Path) -> None:
    root = project(tmp_path)
    repo_map = RepoMap(root)
    repo_map.scan()
    ledger = root / "ledger.py"
    stat = ledger.stat()
    same_size = LEDGER.replace("balance_of", "balance_XY")  # same length
    ledger.write_text(same_size)
    os.utime(ledger, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    kept = repo_map.scan()  # same mtime and size: the cached tags
    assert "balance_of" in {d.name for d in kept.tags["ledger.py"].definitions}
    os.utime(ledger, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    fresh = repo_map.scan()
    assert "balance_XY" in {d.name for d in fresh.tags["ledger.py"].definitions}
    (root / "audit.py").unlink()
    assert "audit.py" not in repo_map.scan().files


def test_an_outline_leaves_out_helpers_inside_functions() -> None:
    source = "def outer():\n    def inner():\n        pass\n    return inner\n\n\nclass K:\n    def m(self):\n        pass\n"
    assert outline(file_tags("k.py", source, "python")) == "def outer():\nclass K:\n    def m(self):"


def test_pagerank_follows_the_links_and_the_personal_jump() -> None:
    links = {"a": {"c": 1.0}, "b": {"c": 1.0}}
    rank = pagerank(["a", "b", "c"], links, {})
    assert rank["c"] > rank["a"] == rank["b"]
    assert abs(sum(rank.values()) - 1) < 1e-6
    leaning = pagerank(["a", "b", "c"], links, {"a": 1.0})
    assert leaning["a"] > leaning["b"]


def test_one_folder_has_one_map_however_its_path_is_written(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "ws")
    assert (
        repo_map_of(tmp_path / "ws") is repo_map_of(tmp_path / "link") is repo_map_of(tmp_path / "ws" / ".")
    )
