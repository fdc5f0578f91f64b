"""Dev and held-out tasks: a third of every set is held out, to report on and never to tune on.

A task is held out when ``int(sha256("<set>/<task name>"), 16) % 3 == 0``: deterministic, blind to
what the task asks, and stable when tasks are added. ``eval/splits.json`` is the written record; once
frozen (its hashes in ``eval/results/heldout-frozen-*.txt``, checked by the unit tests) a task never
moves, and a task added later is appended by the same rule (``python -m eval --write-splits``).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from eval.taskset import Task

SPLITS_FILE = Path(__file__).resolve().parent / "splits.json"
SPLITS = ("dev", "heldout")
CHOICES = ("dev", "heldout", "all")
RULE = 'held out when int(sha256("<set>/<task name>"), 16) % 3 == 0'


def by_rule(set_name: str, name: str) -> str:
    digest = hashlib.sha256(f"{set_name}/{name}".encode()).hexdigest()
    return "heldout" if int(digest, 16) % 3 == 0 else "dev"


def load(path: Path = SPLITS_FILE) -> dict[str, Any]:
    if not path.is_file():
        return {"rule": RULE, "sets": {}}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def split_of(set_name: str, name: str, data: dict[str, Any] | None = None) -> str:
    """The task's split as written in splits.json (by the rule when it is not listed yet)."""
    sets = (load() if data is None else data).get("sets", {})
    for split in SPLITS:
        if name in sets.get(set_name, {}).get(split, []):
            return split
    return by_rule(set_name, name)


def updated(tasks: list[Task], data: dict[str, Any]) -> dict[str, Any]:
    """The record with every task listed: the ones listed keep their split, new ones go by the rule."""
    sets: dict[str, dict[str, list[str]]] = {
        s: {k: list(v) for k, v in splits.items()} for s, splits in data.get("sets", {}).items()
    }
    for task in tasks:
        entry = sets.setdefault(task.set, {"dev": [], "heldout": []})
        if not any(task.name in entry.get(s, []) for s in SPLITS):
            entry.setdefault(by_rule(task.set, task.name), []).append(task.name)
    for entry in sets.values():
        for split in SPLITS:
            entry[split] = sorted(entry.get(split, []))
    return {"rule": RULE, "sets": dict(sorted(sets.items()))}


def write(data: dict[str, Any], path: Path = SPLITS_FILE) -> None:
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def select(tasks: list[Task], split: str, named: bool) -> list[Task]:
    """The tasks of one split. Held-out tasks run only when asked for (``heldout`` or ``all``); naming
    one with ``--tasks`` is not enough."""
    if split not in CHOICES:
        raise SystemExit(f"eval: unknown split {split!r} (known: {', '.join(CHOICES)})")
    if split == "all":
        return tasks
    data = load()
    chosen = [t for t in tasks if split_of(t.set, t.name, data) == split]
    if named and split == "dev":
        held = [t.name for t in tasks if t not in chosen]
        if held:
            raise SystemExit(
                f"eval: {', '.join(held)} held out: they run only to report, with --split heldout or all"
            )
    return chosen


def set_hash(entry: dict[str, list[str]]) -> str:
    """The hash of one set's record (its dev and held-out lists), as the frozen file gives it."""
    lists = {split: sorted(entry.get(split, [])) for split in SPLITS}
    return hashlib.sha256(json.dumps(lists, sort_keys=True).encode()).hexdigest()


FROZEN_LINE = re.compile(
    r"^set (?P<set>[\w-]+): (?P<dev>\d+) dev, (?P<held>\d+) held out; sha256 (?P<hash>[0-9a-f]{64})"
)


def frozen_line(set_name: str, entry: dict[str, list[str]], source: str) -> str:
    return (
        f"set {set_name}: {len(entry.get('dev', []))} dev, {len(entry.get('heldout', []))} held out; "
        f"sha256 {set_hash(entry)} ({source})"
    )


def frozen_hashes(text: str) -> dict[str, str]:
    """Each frozen set's hash, from the frozen file's ``set ...`` lines (a later line for a set wins)."""
    return {m["set"]: m["hash"] for m in map(FROZEN_LINE.match, text.splitlines()) if m}
