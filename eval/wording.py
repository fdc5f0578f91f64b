"""The wordings of a task's prompt: the original, and three paraphrases written by someone who never read
the harness under test (``eval/paraphrases/<set>.json``).

A paraphrase file maps a task's name (for Exercism, the one template's id ``exercism``) to a list of
three strings; a string may use the placeholders of the set's template (``{stub}``, ``{tests}``,
``{instructions}``: see eval/README.md), filled per task as the original is.

``--wording``: ``original``; ``p1``, ``p2`` or ``p3`` (that paraphrase for every task); ``paraphrased``
(one of the three per task and run: p1, p2, p3 in turn from run to run, each task starting at its own
place, so that one run holds all three); ``all`` (the original and the three, each a run of its own).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from eval.taskset import Task

PARAPHRASES_DIR = Path(__file__).resolve().parent / "paraphrases"
PARAPHRASES = ("p1", "p2", "p3")
CHOICES = ("original", *PARAPHRASES, "paraphrased", "all")


def render(template: str, placeholders: dict[str, str]) -> str:
    """The template with its placeholders filled (other braces are kept as they are)."""
    for key, value in placeholders.items():
        template = template.replace("{" + key + "}", value)
    return template


def load_paraphrases(set_name: str, root: Path = PARAPHRASES_DIR) -> dict[str, list[str]]:
    path = root / f"{set_name}.json"
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not all(
        isinstance(v, list) and all(isinstance(s, str) for s in v) for v in data.values()
    ):
        raise SystemExit(f"eval: {path} must map task names to lists of strings")
    return {str(k): list(v) for k, v in data.items()}


def _start(task: Task) -> int:
    return int(hashlib.sha256(task.name.encode()).hexdigest(), 16) % len(PARAPHRASES)


def wordings(choice: str, task: Task, run: int) -> list[str]:
    """The wordings one run gives a task (run counts from 1)."""
    if choice == "all":
        return ["original", *PARAPHRASES]
    if choice == "paraphrased":
        return [PARAPHRASES[(run - 1 + _start(task)) % len(PARAPHRASES)]]
    if choice in ("original", *PARAPHRASES):
        return [choice]
    raise SystemExit(f"eval: unknown wording {choice!r} (known: {', '.join(CHOICES)})")


def prompt(task: Task, wording: str, paraphrases: dict[str, list[str]]) -> str:
    """The task's prompt in one wording."""
    if wording == "original":
        return task.prompt
    key = task.paraphrase_key or task.name
    texts = paraphrases.get(key, [])
    index = PARAPHRASES.index(wording)
    if index >= len(texts) or not texts[index].strip():
        raise SystemExit(
            f"eval: no paraphrase {wording} for {key!r} in eval/paraphrases/{task.set}.json "
            "(run with --wording original, or add the paraphrases)"
        )
    return render(texts[index], task.placeholders)


def check_available(tasks: list[Task], choice: str) -> dict[str, dict[str, list[str]]]:
    """The paraphrases of the tasks' sets; exits naming what is missing before any run starts."""
    by_set = {s: load_paraphrases(s) for s in dict.fromkeys(t.set for t in tasks)}
    if choice == "original":
        return by_set
    needed = PARAPHRASES if choice in ("all", "paraphrased") else (choice,)
    missing = sorted(
        {
            f"{t.set}:{t.paraphrase_key or t.name}"
            for t in tasks
            for w in needed
            if len(by_set[t.set].get(t.paraphrase_key or t.name, [])) <= PARAPHRASES.index(w)
        }
    )
    if missing:
        raise SystemExit(
            f"eval: --wording {choice} needs three paraphrases per task; missing for {', '.join(missing[:12])}"
            + (f" and {len(missing) - 12} more" if len(missing) > 12 else "")
            + " (eval/paraphrases/<set>.json)"
        )
    return by_set
