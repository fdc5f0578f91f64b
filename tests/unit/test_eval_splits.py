"""The held-out split, the wordings and the grouped table: no model, no network."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from eval import splits, wording
from eval.report import by_group, compare, table
from eval.sets import SETS, all_tasks, load
from eval.taskset import Task

FROZEN = sorted((Path(splits.__file__).parent / "results").glob("heldout-frozen-*.txt"))
TASKS = all_tasks()


def test_every_task_is_listed_once_and_by_the_rule() -> None:
    data = splits.load()
    listed = [
        (s, name) for s, entry in data["sets"].items() for split in splits.SPLITS for name in entry[split]
    ]
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted((t.set, t.name) for t in TASKS), "python -m eval --write-splits"
    for s, entry in data["sets"].items():
        for split in splits.SPLITS:
            assert all(splits.by_rule(s, name) == split for name in entry[split])


def test_task_names_are_unique_across_the_sets() -> None:
    names = [t.name for t in TASKS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("set_name", [s for s in SETS if any(t.set == s for t in TASKS)])
def test_about_a_third_of_each_set_is_held_out(set_name: str) -> None:
    entry = splits.load()["sets"][set_name]
    share = len(entry["heldout"]) / (len(entry["heldout"]) + len(entry["dev"]))
    assert 0.25 <= share <= 0.42


def test_the_split_is_the_one_frozen_before_tuning() -> None:
    assert FROZEN, "eval/results/heldout-frozen-*.txt is missing"
    frozen = splits.frozen_hashes(FROZEN[0].read_text())
    assert {"own", "exercism", "repos"} <= set(frozen)
    data = splits.load()
    for set_name, digest in frozen.items():
        assert splits.set_hash(data["sets"][set_name]) == digest, (
            f"the {set_name} split moved after the freeze"
        )
    assert set(data["sets"]) <= set(frozen), "a set in splits.json was never frozen"


def test_a_moved_task_breaks_the_frozen_hash() -> None:
    entry = {k: list(v) for k, v in splits.load()["sets"]["own"].items()}
    entry["dev"].append(entry["heldout"].pop())
    assert splits.set_hash(entry) != splits.frozen_hashes(FROZEN[0].read_text())["own"]


def test_new_tasks_are_appended_by_the_rule_and_listed_ones_never_move() -> None:
    listed = {"rule": splits.RULE, "sets": {"own": {"dev": ["b"], "heldout": ["a"]}}}
    new = [Task(n, Path("."), "p", "change", "python", False, []) for n in ("a", "b", *map(str, range(30)))]
    out = splits.updated(new, listed)["sets"]["own"]
    assert "a" in out["heldout"] and "b" in out["dev"]
    assert all(splits.by_rule("own", n) == s for s in splits.SPLITS for n in out[s] if n not in "ab")


def test_held_out_tasks_run_only_when_asked_for() -> None:
    own = load(["own"])
    data = splits.load()
    held = [t for t in own if splits.split_of("own", t.name, data) == "heldout"]
    dev = splits.select(own, "dev", named=False)
    assert dev and not set(t.name for t in dev) & {t.name for t in held}
    assert {t.name for t in splits.select(own, "heldout", named=False)} == {t.name for t in held}
    assert len(splits.select(own, "all", named=False)) == len(own)
    with pytest.raises(SystemExit, match="held out"):
        splits.select(held[:1], "dev", named=True)


def _task(name: str = "t", key: str = "", **placeholders: str) -> Task:
    return Task(
        name,
        Path("."),
        "original",
        "change",
        "python",
        False,
        [],
        placeholders=placeholders,
        paraphrase_key=key,
    )


def test_paraphrases_rotate_from_run_to_run_and_fill_the_placeholders() -> None:
    task = _task("exercism-x", "exercism", stub="x.py", tests="x_test.py", instructions="instructions.md")
    texts = {"exercism": ["one {stub}", "two {tests}", "three {instructions} {other}"]}
    seen = [wording.wordings("paraphrased", task, run) for run in (1, 2, 3, 4)]
    assert sorted(w[0] for w in seen[:3]) == ["p1", "p2", "p3"] and seen[3] == seen[0]
    assert wording.wordings("all", task, 1) == ["original", "p1", "p2", "p3"]
    assert wording.prompt(task, "p1", texts) == "one x.py"
    assert wording.prompt(task, "p3", texts) == "three instructions.md {other}"
    assert wording.prompt(task, "original", {}) == "original"


def test_one_run_of_paraphrased_prompts_mixes_the_three() -> None:
    tasks = [_task(f"task-{i}") for i in range(12)]
    assert {wording.wordings("paraphrased", t, 1)[0] for t in tasks} == {"p1", "p2", "p3"}


def test_missing_paraphrases_are_named_before_a_run() -> None:
    with pytest.raises(SystemExit, match="missing for own:nowhere-task"):
        wording.check_available([_task("nowhere-task")], "p2")
    with pytest.raises(SystemExit, match="no paraphrase p2 for 'nowhere-task'"):
        wording.prompt(_task("nowhere-task"), "p2", {"nowhere-task": ["only one"]})


def _record(task: str, passed: bool, **extra: Any) -> dict[str, Any]:
    record = {
        "harness": "shiro", "task": task, "run": 1, "passed": passed, "wall_s": 10.0, "timed_out": False,
        "first_prompt_tokens": 100, "prompt_tokens": 100, "later_prompt_tokens": 0, "later_cached_tokens": 0,
        "requests": 1, "tool_calls": 1, "final_answer": True, "echoed_tool_response": False,
        "echoed_prompt": [], "copied_examples": [],
    }  # fmt: skip
    return record | extra


def test_the_table_shows_dev_held_out_and_paraphrase_rows_apart() -> None:
    data = splits.load()["sets"]["own"]
    dev, held = data["dev"][0], data["heldout"][0]
    records = [
        _record(dev, True, set="own", split="dev"),
        _record(held, False, set="own", split="heldout", wall_s=130.0),
        _record(dev, False, set="own", split="dev", wording="p2", duplicated_files=["a.py"]),
        _record("exercism-leap", True, set="exercism", split="dev", wording="p1"),
    ]
    grouped = by_group(records)
    rows = [line.split("|")[1:-1] for line in grouped.splitlines()[2:]]
    cells = [[c.strip() for c in row] for row in rows]
    assert [c[:3] for c in cells] == [
        ["own", "dev", "original"], ["own", "dev", "paraphrased"], ["own", "heldout", "original"],
        ["exercism", "dev", "paraphrased"],
    ]  # fmt: skip
    assert cells[1][8] == "1" and cells[2][9] == "1"  # duplicated files; turns over 120 s
    text = table(records, {"split": "all", "report_only": True})
    assert "REPORT ONLY" in text and f"{held} (held out)" in text and f"{dev} [paraphrased]" in text


def test_an_old_record_without_the_new_fields_is_split_as_splits_json_says() -> None:
    held = splits.load()["sets"]["own"]["heldout"][0]
    text = table([_record(held, True)], {})
    assert "REPORT ONLY" in text and "| own " in text


def test_the_deltas_against_an_earlier_run_keep_the_rows_apart_too() -> None:
    dev = splits.load()["sets"]["own"]["dev"][0]
    old = {"records": [_record(dev, False, set="own", split="dev")]}
    new = {
        "records": [_record(dev, True, set="own", split="dev"), _record(dev, True, split="dev", wording="p1")]
    }
    text = compare(old, new)
    assert "| own | dev   | original    | shiro   | 0%       | 100%     | +100%" in text
    assert "| own | dev   | paraphrased | shiro   | —        | 100%" in text
