"""Tasks in real public repositories: a bug found from its symptom, a small feature, a test to write, a
question about the code.

``eval/repo_tasks/repos.json`` pins each repository (``owner/name``, full commit, the environment
variable that can name another source, the import roots, the declared test dependencies, and files the
build would generate). Each task is a folder ``eval/repo_tasks/<task>/`` with ``task.json``:

  {"repo": "humanize", "prompt": "...", "kind": "change" | "answer",
   "inject": [{"file": path, "search": text, "replace": text}],     the bug, put into the start state
   "solution": [{"file": path, "search": text, "replace": text}],   edits of the reference solution
   "checks": [...], "reference_answer": "..."}

plus, optionally, ``solution/`` (new files of the reference solution) and check helpers (``{task}`` in
a check is this folder: outside the workspace, so a harness cannot edit them). A bug's reference
solution is its injection undone. Each search text must occur exactly once.

The repository is fetched at its commit into the eval's cache (eval/sources.py) and the task folder
(``workspace/``: the checkout with the injection, a git repository whose one commit is that start state,
as a user's clone is; ``solution/``: the files that solve it) is built there, under a name that changes
with the task's definition.
Checks run with a virtualenv per repository in the cache, holding the repository's declared test
dependencies from PyPI (installed once), with the import roots on ``PYTHONPATH``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.harnesses import CACHE
from eval.sources import Pinned, checkout, locked
from eval.taskset import Task

TASKS_DIR = Path(__file__).resolve().parent / "repo_tasks"
REPOS_FILE = TASKS_DIR / "repos.json"
BUILD = "2"  # bump when _build makes a different task folder from the same definition
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "eval", "GIT_AUTHOR_EMAIL": "eval@localhost", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_NAME": "eval", "GIT_COMMITTER_EMAIL": "eval@localhost",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
}  # fmt: skip


@dataclass(frozen=True)
class Repo:
    key: str
    pin: Pinned
    pythonpath: tuple[str, ...]
    test_deps: tuple[str, ...]
    generated: dict[str, str]

    @property
    def venv(self) -> Path:
        deps = hashlib.sha256("\n".join(self.test_deps).encode()).hexdigest()[:8]
        return CACHE / "repo-venvs" / f"{self.key}-{self.pin.commit[:12]}-{deps}"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def pristine(self) -> Path:
        """The checkout with the files its build generates: the start of every task, and where checks
        restore originals from."""
        return CACHE / "tasks" / "repos" / f"{self.key}-{self.pin.commit[:12]}-pristine"


def load_repos(path: Path = REPOS_FILE) -> dict[str, Repo]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {
        key: Repo(
            key=key,
            pin=Pinned(entry["repo"], entry["commit"], entry["env"]),
            pythonpath=tuple(entry.get("pythonpath", ["."])),
            test_deps=tuple(entry["test_deps"]),
            generated=dict(entry.get("generated", {})),
        )
        for key, entry in data.items()
    }


def ensure_venv(repo: Repo) -> Path:
    """The repository's test virtualenv in the cache, made once (PyPI; a minute or two)."""
    done = repo.venv / ".complete"
    if done.is_file():
        return repo.python
    with locked(repo.venv.with_name(repo.venv.name + ".lock")):
        if done.is_file():
            return repo.python
        print(f"eval: installing {repo.key}'s test dependencies into {repo.venv} (PyPI)", file=sys.stderr)
        shutil.rmtree(repo.venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(repo.venv)], check=True)
        pip = [str(repo.python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        subprocess.run([*pip, *repo.test_deps], check=True, stdout=sys.stderr)
        freeze = subprocess.run([str(repo.python), "-m", "pip", "freeze"], capture_output=True, text=True)
        done.write_text(freeze.stdout)
    return repo.python


def ensure_pristine(repo: Repo) -> Path:
    done = repo.pristine / ".complete"
    if done.is_file():
        return repo.pristine
    source = checkout(repo.pin)
    with locked(repo.pristine.with_name(repo.pristine.name + ".lock")):
        if done.is_file():
            return repo.pristine
        part = repo.pristine.with_name(repo.pristine.name + ".part")
        shutil.rmtree(part, ignore_errors=True)
        shutil.copytree(source, part, ignore=shutil.ignore_patterns(".complete"))
        for rel, text in repo.generated.items():
            (part / rel).write_text(text, encoding="utf-8")
        (part / ".complete").write_text(f"{repo.pin.repo} {repo.pin.commit}\n")
        shutil.rmtree(repo.pristine, ignore_errors=True)
        part.rename(repo.pristine)
    return repo.pristine


def apply_edits(root: Path, edits: list[dict[str, str]], undo: bool = False) -> list[str]:
    """Search/replace edits in the files under ``root`` (``undo``: replace back); the files touched."""
    touched = []
    for edit in edits:
        search, replace = (edit["replace"], edit["search"]) if undo else (edit["search"], edit["replace"])
        path = root / edit["file"]
        text = path.read_text(encoding="utf-8")
        if text.count(search) != 1:
            raise ValueError(f"{edit['file']}: the search text occurs {text.count(search)} times, not once")
        path.write_text(text.replace(search, replace), encoding="utf-8")
        touched.append(edit["file"])
    return touched


def _commit_start(ws: Path) -> None:
    """The start state as the one commit of a fresh repository: ``git status`` is clean, and ``git
    diff`` gives nothing away."""
    env = {**os.environ, **_GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "--no-verify", "-m", "start"]):
        subprocess.run(["git", "-C", str(ws), *args], check=True, env=env, capture_output=True)


def _build(task: Task, repo: Repo, spec: dict[str, Any], definition: Path) -> None:
    """The task folder in the cache: the checkout with the bug put in, and the reference solution."""
    ensure_venv(repo)
    done = task.folder / ".complete"
    if done.is_file():
        return
    source = ensure_pristine(repo)
    with locked(task.folder.with_name(task.folder.name + ".lock")):
        if done.is_file():
            return
        part = task.folder.with_name(task.folder.name + ".part")
        shutil.rmtree(part, ignore_errors=True)
        ws, solved = part / "workspace", part / "solved"
        shutil.copytree(source, ws, ignore=shutil.ignore_patterns(".complete"))
        apply_edits(ws, spec.get("inject", []))
        shutil.copytree(ws, solved)
        _commit_start(ws)
        touched = apply_edits(solved, spec.get("inject", []), undo=True)
        touched += apply_edits(solved, spec.get("solution", []))
        (part / "solution").mkdir()
        for rel in dict.fromkeys(touched):
            (part / "solution" / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(solved / rel, part / "solution" / rel)
        if (definition / "solution").is_dir():
            shutil.copytree(definition / "solution", part / "solution", dirs_exist_ok=True)
        shutil.rmtree(solved)
        (part / ".complete").write_text(f"{repo.pin.repo} {repo.pin.commit} {task.name}\n")
        shutil.rmtree(task.folder, ignore_errors=True)
        part.rename(task.folder)


def _definition_hash(definition: Path, repo: Repo) -> str:
    digest = hashlib.sha256(
        f"{BUILD} {repo.pin.commit} {json.dumps(repo.generated, sort_keys=True)}".encode()
    )
    for path in sorted(p for p in definition.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(definition).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def load_task(definition: Path, repos: dict[str, Repo]) -> Task:
    spec = json.loads((definition / "task.json").read_text(encoding="utf-8"))
    repo = repos[spec["repo"]]
    name = definition.name
    folder = CACHE / "tasks" / "repos" / f"{name}-{_definition_hash(definition, repo)}"

    def build(task: Task) -> None:
        _build(task, repo, spec, definition)

    return Task(
        name=name, folder=folder, prompt=spec["prompt"], kind=spec["kind"], lang="python",
        multi_step=bool(spec.get("multi_step", False)), checks=list(spec["checks"]),
        reference_answer=spec.get("reference_answer", ""), set="repos", pristine=repo.pristine,
        python=str(repo.python), pythonpath=repo.pythonpath, helpers=definition, build=build,
    )  # fmt: skip


def load(root: Path = TASKS_DIR) -> list[Task]:
    """The repository tasks (their repositories are fetched, and venvs made, when a task is first
    prepared or checked)."""
    repos = load_repos(root / "repos.json")
    return [load_task(d, repos) for d in sorted(root.iterdir()) if (d / "task.json").is_file()]
