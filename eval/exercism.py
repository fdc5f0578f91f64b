"""Exercism's Python practice exercises (MIT), the suite Aider's benchmark is built from.

The exercises are fetched at a pinned commit into the eval's cache when a run needs them (never
committed here; see eval/sources.py). Each task's workspace holds the stub ``<module>.py``, the tests
``<module>_test.py`` and ``instructions.md`` (``.docs/instructions.md``, then
``.docs/instructions.append.md`` when present, one after the other). It passes when the exercise's own
tests, a fresh copy from the cache (never the workspace's copy, which a harness may have edited), pass
against the workspace's ``<module>.py``. The reference solution is the exercise's ``.meta/example.py``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from eval.harnesses import CACHE
from eval.sources import Pinned, checkout, locked
from eval.taskset import Task
from eval.wording import render

PIN = Pinned("exercism/python", "9eb657d4507d91efef99f484e7f2a1f4074911b5", env="EVAL_EXERCISM_SOURCE")
PRACTICE = "exercises/practice"

# Every practice exercise of difficulty 1 and 2 in the track's config.json at PIN that is not
# deprecated: their tests and example solutions need only the standard library and pytest.
SLUGS = (
    "hello-world", "leap", "triangle", "grains", "armstrong-numbers", "collatz-conjecture", "bob",
    "raindrops", "darts", "perfect-numbers", "reverse-string", "pangram", "isogram", "isbn-verifier",
    "rotational-cipher", "rna-transcription", "resistor-color", "resistor-color-duo", "resistor-color-trio",
    "resistor-color-expert", "secret-handshake", "anagram", "house", "binary-search", "hamming",
    "flatten-array", "line-up", "difference-of-squares", "list-ops", "etl", "space-age", "sum-of-multiples",
    "gigasecond", "two-fer", "square-root", "pig-latin", "matching-brackets", "sublist", "atbash-cipher",
    "diamond", "eliuds-eggs", "protein-translation", "prime-factors", "say", "acronym", "series",
    "run-length-encoding", "nth-prime", "twelve-days", "roman-numerals", "word-count", "scrabble-score",
    "proverb", "luhn", "dnd-character", "robot-name", "phone-number", "queen-attack", "transpose", "yacht",
)  # fmt: skip

# One request for every exercise, as a person would type it. Placeholders (also for the paraphrases in
# eval/paraphrases/exercism.json): {stub} the file to implement, {tests} the test file, {instructions}
# the instructions file, each a path relative to the workspace.
TEMPLATE = (
    "Implement the exercise in {stub} following the instructions in {instructions}. The tests are in {tests}."
)
TEMPLATE_ID = "exercism"
INSTRUCTIONS = "instructions.md"


def task_name(slug: str) -> str:
    return f"exercism-{slug}"


def _module(slug: str) -> str:
    return slug.replace("-", "_")


def _folder(slug: str) -> Path:
    return CACHE / "tasks" / "exercism" / PIN.commit[:12] / slug


def _build(task: Task) -> None:
    """The task folder in the cache: workspace/ (stub, tests, instructions) and solution/ (the example)."""
    done = task.folder / ".complete"
    if done.is_file():
        return
    root = checkout(PIN, [PRACTICE])
    with locked(task.folder.parent / f"{task.folder.name}.lock"):
        if done.is_file():
            return
        exercise = root / PRACTICE / task.folder.name
        files = json.loads((exercise / ".meta" / "config.json").read_text(encoding="utf-8"))["files"]
        stub, tests = task.placeholders["stub"], task.placeholders["tests"]
        if (
            files["solution"] != [stub]
            or files["test"] != [tests]
            or files["example"] != [".meta/example.py"]
        ):
            raise ValueError(f"{task.name}: unexpected files {files}")
        part = task.folder.with_name(task.folder.name + ".part")
        shutil.rmtree(part, ignore_errors=True)
        (part / "workspace").mkdir(parents=True)
        (part / "solution").mkdir()
        for name in (stub, tests):
            shutil.copy2(exercise / name, part / "workspace" / name)
        docs = [exercise / ".docs" / n for n in ("instructions.md", "instructions.append.md")]
        text = "\n".join(d.read_text(encoding="utf-8").rstrip("\n") + "\n" for d in docs if d.is_file())
        (part / "workspace" / INSTRUCTIONS).write_text(text, encoding="utf-8")
        shutil.copy2(exercise / ".meta" / "example.py", part / "solution" / stub)
        (part / ".complete").write_text(f"{PIN.repo} {PIN.commit} {task.folder.name}\n")
        shutil.rmtree(task.folder, ignore_errors=True)
        part.rename(task.folder)


def load(slugs: tuple[str, ...] = SLUGS) -> list[Task]:
    """The exercises as tasks (their files are fetched when a task is first prepared or checked)."""
    tasks = []
    for slug in slugs:
        module = _module(slug)
        placeholders = {"stub": f"{module}.py", "tests": f"{module}_test.py", "instructions": INSTRUCTIONS}
        tasks.append(
            Task(
                name=task_name(slug),
                folder=_folder(slug),
                prompt=render(TEMPLATE, placeholders),
                kind="change",
                lang="python",
                multi_step=False,
                set="exercism",
                pristine=PIN.dest / PRACTICE / slug,
                checks=[
                    {
                        "pytest": [f"{module}_test.py"],
                        "originals": [f"{module}_test.py"],
                        "only": [f"{module}.py"],
                    }
                ],
                placeholders=placeholders,
                paraphrase_key=TEMPLATE_ID,
                build=_build,
            )
        )
    return tasks
