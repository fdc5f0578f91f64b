"""The task sets: ``own`` (eval/tasks), ``exercism`` (Exercism's Python exercises) and ``repos`` (tasks in
real public repositories). Exercism and the repositories are fetched into the eval's cache at run time."""

from __future__ import annotations

from eval import exercism, repos
from eval.taskset import Task, load_tasks

SETS = ("own", "exercism", "repos")
CHOICES = (*SETS, "all")


def load_set(name: str) -> list[Task]:
    if name == "own":
        return load_tasks()
    if name == "exercism":
        return exercism.load()
    if name == "repos":
        return repos.load()
    raise SystemExit(f"eval: unknown set {name!r} (known: {', '.join(CHOICES)})")


def load(set_names: list[str], names: list[str] | None = None) -> list[Task]:
    """The tasks of the sets (all three for ``all``), only the named ones when names are given."""
    chosen = list(SETS) if "all" in set_names else set_names
    tasks = [t for s in chosen for t in load_set(s)]
    if names:
        known = {t.name for t in tasks}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise SystemExit(
                f"eval: unknown task(s) in set {','.join(chosen)}: {', '.join(unknown)} "
                "(`python -m eval --list --set all` lists them)"
            )
        tasks = [t for t in tasks if t.name in names]
    return tasks


def all_tasks() -> list[Task]:
    return load(["all"])
