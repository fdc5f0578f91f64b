"""The runner wires a set, a split and a wording end to end: a stand-in for the Shiro CLI (no model)
writes into the workspace it is given, and the record says what ran, how it was worded and what it left.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from eval import splits, wording
from eval.runner import run_all, work_base
from eval.sets import load

STAND_IN = """
import json, shutil, sys
from pathlib import Path
args = sys.argv[1:]
ws = Path(args[args.index("--workspace") + 1])
prompt = args[args.index("-p") + 1]
solution = Path(sys.argv[0]).with_name("solution")
for path in solution.rglob("*"):
    if path.is_file():
        text = path.read_text()
        (ws / path.relative_to(solution)).write_text(text * int(Path(sys.argv[0]).with_name("copies").read_text()))
with open(Path(sys.argv[0]).with_name("workspaces"), "a") as seen:
    seen.write(str(ws) + "\\n")
print(json.dumps({"type": "text", "text": "done: " + prompt}))
"""


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "bin" / "shiro-lsp"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\n{STAND_IN}")
    script.chmod(0o755)
    monkeypatch.setenv("EVAL_SHIRO_CMD", str(script))
    return script


def _run(
    task_name: str, stand_in: Path, copies: int, choice: str, runs: int, tmp_path: Path
) -> list[dict[str, object]]:
    task = load(["own"], [task_name])[0]
    solution = stand_in.with_name("solution")
    if not solution.exists():
        solution.mkdir()
        for path in task.solution.rglob("*"):
            if path.is_file():
                (solution / path.relative_to(task.solution)).write_text(path.read_text())
    stand_in.with_name("copies").write_text(str(copies))
    records = run_all(
        [task], ["shiro"], runs, "http://127.0.0.1:9/v1", "m", 60, tmp_path / "logs", wording_choice=choice
    )
    return [r.__dict__ for r in records]


def test_a_solved_task_is_recorded_with_its_set_split_and_paraphrase(stand_in: Path, tmp_path: Path) -> None:
    name = "fix-average-bug"
    assert splits.split_of("own", name) == "dev"
    records = _run(name, stand_in, 1, "paraphrased", 3, tmp_path)
    assert [r["passed"] for r in records] == [True, True, True]
    assert sorted(str(r["wording"]) for r in records) == ["p1", "p2", "p3"]
    assert {(r["set"], r["split"]) for r in records} == {("own", "dev")}
    texts = wording.load_paraphrases("own")[name]
    stdout = [json.loads((Path(str(r["log_dir"])) / "stdout").read_text())["text"] for r in records]
    assert sorted(stdout) == sorted("done: " + t for t in texts)
    assert all(r["duplicated_files"] == [] for r in records)


def test_a_listing_written_twice_is_counted_as_a_duplicated_file(stand_in: Path, tmp_path: Path) -> None:
    records = _run("fix-crashing-report", stand_in, 2, "original", 1, tmp_path)
    assert records[0]["duplicated_files"] == ["report.py"] and records[0]["wording"] == "original"


def test_every_sweep_copies_the_workspace_to_the_same_path(
    stand_in: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVAL_WORK_DIR", str(tmp_path / "work"))
    _run("fix-average-bug", stand_in, 1, "original", 1, tmp_path)
    _run("fix-average-bug", stand_in, 1, "original", 1, tmp_path)
    seen = stand_in.with_name("workspaces").read_text().split()
    assert seen == [str(tmp_path / "work" / "ws")] * 2  # the prompt that names it is the same bytes
    assert not (tmp_path / "work").exists()  # nothing left behind


def test_a_sweep_running_beside_another_works_in_a_folder_of_its_own(tmp_path: Path) -> None:
    with work_base(tmp_path / "work") as first:
        (first / "kept").write_text("the first sweep's")
        with work_base(tmp_path / "work") as second:
            assert second != first and second.is_dir()
        assert (first / "kept").read_text() == "the first sweep's"
