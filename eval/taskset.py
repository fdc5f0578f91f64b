"""The task set: one folder per task under eval/tasks/, and the checks that decide whether it was done.

A task folder holds ``task.json`` (the prompt, its kind and its checks), ``workspace/`` (what the harness
starts from) and ``solution/`` (files that, laid over the workspace, make a reference solution; the unit
tests prove every check fails on the untouched workspace and passes on the solution). Checks may run
helper scripts kept in the task folder (outside the workspace, so a harness cannot edit them).

Checks (all must pass), in ``task.json``'s ``checks`` list:
  {"run": [argv], "rc": 0, "stdout": "exact (stripped)", "contains": [regex], "absent": [regex]}
      argv runs in the workspace; ``{task}`` and ``{ws}`` are replaced by the folders' paths.
  {"file": path, "exists": true, "contains": [regex], "absent": [regex]}
  {"json": path, "equals": {"dotted.key": value}}
  {"answer": [regex], "answer_absent": [regex]}   the final answer, case-insensitive
  {"pytest": [args], "originals": [path], "only": [path], "plugins": [name], "contains": [regex]}
      the tests as they were, whatever the harness did to them: a scratch copy of the workspace (only
      the ``only`` files, when given) with the ``originals`` restored from the task's pristine source,
      then ``{python} -m pytest -q -p no:cacheprovider ARGS`` in it; passes when pytest exits 0.
      Installed pytest plugins load only when listed in ``plugins`` (faster, and the same everywhere).
      With ``"mutants": [{"file", "search", "replace"}], "caught": n`` it checks tests instead: each
      mutant is laid over its pristine file in a scratch copy of its own, and at least ``n`` of them must
      make pytest fail.
Kinds: ``change`` also fails when no file changed; ``refuse`` fails when any file changed; ``answer`` and
``refuse`` fail without a final answer.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

TASKS_DIR = Path(__file__).resolve().parent / "tasks"
Kind = Literal["answer", "change", "refuse"]
IGNORED_DIRS = {
    "__pycache__",
    ".pytest_cache",
    "node_modules",
    ".git",
    ".qwen",
    ".shiro",
    ".shiro-neko",
    ".venv",
}
CHECK_TIMEOUT = 120.0


@dataclass(frozen=True)
class Task:
    name: str
    folder: Path
    prompt: str
    kind: Kind
    lang: str
    multi_step: bool
    checks: list[dict[str, Any]]
    reference_answer: str = ""
    set: str = "own"
    # where ``originals`` of a pytest check come from (the public source as fetched)
    pristine: Path | None = None
    # the interpreter checks run with (``{python}``; empty: this one) and the workspace's import roots
    python: str = ""
    pythonpath: tuple[str, ...] = (".",)
    # the values of the prompt's placeholders ({stub}, ...), for its paraphrases
    placeholders: dict[str, str] = field(default_factory=dict)
    # the key of the task's paraphrases in eval/paraphrases/<set>.json (default: its name)
    paraphrase_key: str = ""
    # where the check helpers are (``{task}`` in a check), when not in ``folder``
    helpers: Path | None = None
    # builds the task folder (workspace/, solution/) in the eval's cache when it is not there yet
    build: Callable[[Task], None] | None = field(default=None, compare=False, repr=False)

    def ensure(self) -> None:
        if self.build is not None:
            self.build(self)

    @property
    def workspace(self) -> Path:
        return self.folder / "workspace"

    @property
    def solution(self) -> Path:
        return self.folder / "solution"


@dataclass
class CheckResult:
    passed: bool
    why: str
    changed: list[str] = field(default_factory=list)


def load_task(folder: Path) -> Task:
    data = json.loads((folder / "task.json").read_text(encoding="utf-8"))
    kind = data["kind"]
    if kind not in ("answer", "change", "refuse"):
        raise ValueError(f"{folder.name}: unknown kind {kind!r}")
    return Task(
        name=folder.name,
        folder=folder,
        prompt=data["prompt"],
        kind=kind,
        lang=data.get("lang", "python"),
        multi_step=bool(data.get("multi_step", False)),
        checks=list(data.get("checks", [])),
        reference_answer=data.get("reference_answer", ""),
    )


def load_tasks(names: list[str] | None = None, root: Path = TASKS_DIR) -> list[Task]:
    tasks = [load_task(d) for d in sorted(root.iterdir()) if (d / "task.json").is_file()]
    if names:
        known = {t.name for t in tasks}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise SystemExit(
                f"eval: unknown task(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})"
            )
        tasks = [t for t in tasks if t.name in names]
    return tasks


def _ignored(rel: Path) -> bool:
    return any(part in IGNORED_DIRS or part.startswith(".aider") for part in rel.parts)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (minus caches and harness droppings), by relative path."""
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not _ignored(rel):
            out[rel.as_posix()] = path.read_bytes()
    return out


def changed_files(before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


def prepare_workspace(task: Task, dest: Path, with_solution: bool = False) -> Path:
    """A fresh copy of the task's workspace at ``dest`` (optionally with the reference solution laid over)."""
    task.ensure()
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(task.workspace, dest)
    if with_solution and task.solution.is_dir():
        shutil.copytree(task.solution, dest, dirs_exist_ok=True)
    return dest


def _sub(arg: str, task: Task, ws: Path) -> str:
    python = task.python or sys.executable
    return (
        arg.replace("{task}", str(task.helpers or task.folder))
        .replace("{ws}", str(ws))
        .replace("{python}", python)
    )


def _env(task: Task, root: Path) -> dict[str, str]:
    path = os.pathsep.join(str(root / p) for p in task.pythonpath)
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": path}


def _scratch_copy(check: dict[str, Any], task: Task, ws: Path, scratch: Path) -> None:
    """The workspace (or only the listed files of it) with the listed originals restored."""
    only = check.get("only")
    if only:
        for rel in only:
            if (ws / rel).is_file():
                (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ws / rel, scratch / rel)
    else:
        shutil.copytree(ws, scratch, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*IGNORED_DIRS))
    for rel in check.get("originals", []):
        if task.pristine is None:
            raise ValueError(f"{task.name}: originals without a pristine source")
        source, target = task.pristine / rel, scratch / rel
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy2(source, target)


def _run_pytest(check: dict[str, Any], task: Task, scratch: Path) -> subprocess.CompletedProcess[str] | None:
    """pytest in ``scratch`` with only the listed plugins; None when it timed out."""
    plugins = [arg for name in check.get("plugins", []) for arg in ("-p", name)]
    argv = [
        task.python or sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        *plugins,
        *check["pytest"],
    ]
    try:
        return subprocess.run(
            argv, cwd=scratch, capture_output=True, text=True, timeout=CHECK_TIMEOUT,
            env=_env(task, scratch) | {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None


def _mutants(check: dict[str, Any], task: Task, ws: Path, shown: str) -> str | None:
    caught = 0
    for mutant in check["mutants"]:
        with tempfile.TemporaryDirectory(prefix="shiro-eval-mutant-") as tmp:
            scratch = Path(tmp)
            _scratch_copy(
                {**check, "originals": [*check.get("originals", []), mutant["file"]]}, task, ws, scratch
            )
            path = scratch / mutant["file"]
            text = path.read_text(encoding="utf-8")
            if text.count(mutant["search"]) != 1:
                raise ValueError(f"{task.name}: a mutant's search text is not in {mutant['file']} once")
            path.write_text(text.replace(mutant["search"], mutant["replace"]), encoding="utf-8")
            proc = _run_pytest(check, task, scratch)
            caught += proc is None or proc.returncode != 0
    want = int(check.get("caught", len(check["mutants"])))
    if caught < want:
        return f"`{shown}` caught {caught} of {len(check['mutants'])} broken versions (needs {want})"
    return None


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _pytest(check: dict[str, Any], task: Task, ws: Path) -> str | None:
    shown = "python3 -m pytest " + " ".join(check["pytest"])
    if "mutants" in check:
        return _mutants(check, task, ws, shown)
    with tempfile.TemporaryDirectory(prefix="shiro-eval-check-") as tmp:
        scratch = Path(tmp)
        _scratch_copy(check, task, ws, scratch)
        proc = _run_pytest(check, task, scratch)
    if proc is None:
        return f"`{shown}` timed out"
    output = _ANSI.sub("", proc.stdout + proc.stderr)
    tail = [line for line in output.strip().splitlines() if line.strip()][-3:]
    if proc.returncode != 0:
        return f"`{shown}` exited {proc.returncode}: {' | '.join(tail)}"[:400]
    for pattern in check.get("contains", []):
        if not re.search(pattern, output, re.I | re.M):
            return f"`{shown}` output lacks /{pattern}/: {' | '.join(tail)}"[:400]
    return None


def _read(ws: Path, rel: str) -> str | None:
    path = ws / rel
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None


def _dotted(data: Any, key: str) -> tuple[bool, Any]:
    for part in key.split("."):
        if isinstance(data, dict) and part in data:
            data = data[part]
        else:
            return False, None
    return True, data


def _one(check: dict[str, Any], task: Task, ws: Path, answer: str) -> str | None:
    """None when the check passes, else why not."""
    if "pytest" in check:
        return _pytest(check, task, ws)
    if "run" in check:
        argv = [_sub(a, task, ws) for a in check["run"]]
        env = _env(task, ws)
        try:
            proc = subprocess.run(
                argv, cwd=ws, capture_output=True, text=True, timeout=CHECK_TIMEOUT, env=env,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return f"`{' '.join(argv)}` timed out"
        shown = " ".join(check["run"]).replace("{python}", "python3")
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        if proc.returncode != check.get("rc", 0):
            return f"`{shown}` exited {proc.returncode}: {' | '.join(tail)}"[:400]
        if "stdout" in check and proc.stdout.strip() != check["stdout"]:
            return f"`{shown}` printed {proc.stdout.strip()[:120]!r}, not {check['stdout']!r}"
        for pattern in check.get("contains", []):
            if not re.search(pattern, proc.stdout + proc.stderr, re.I | re.M):
                return f"`{shown}` output lacks /{pattern}/: {' | '.join(tail)}"[:400]
        for pattern in check.get("absent", []):
            if re.search(pattern, proc.stdout + proc.stderr, re.I | re.M):
                return f"`{shown}` output has /{pattern}/"
        return None
    if "file" in check:
        text = _read(ws, check["file"])
        if text is None:
            return None if check.get("exists", True) is False else f"{check['file']} does not exist"
        if check.get("exists", True) is False:
            return f"{check['file']} should not exist"
        for pattern in check.get("contains", []):
            if not re.search(pattern, text, re.I | re.M):
                return f"{check['file']} lacks /{pattern}/"
        for pattern in check.get("absent", []):
            if re.search(pattern, text, re.I | re.M):
                return f"{check['file']} still has /{pattern}/"
        return None
    if "json" in check:
        text = _read(ws, check["json"])
        if text is None:
            return f"{check['json']} does not exist"
        try:
            data = json.loads(text)
        except ValueError as error:
            return f"{check['json']} is not valid JSON ({error})"
        for key, want in check.get("equals", {}).items():
            found, value = _dotted(data, key)
            if not found or value != want:
                return f"{check['json']}: {key} is {value!r}, not {want!r}" if found else f"{key} missing"
        return None
    if "answer" in check or "answer_absent" in check:
        for pattern in check.get("answer", []):
            if not re.search(pattern, answer, re.I | re.M):
                return f"the answer lacks /{pattern}/"
        for pattern in check.get("answer_absent", []):
            if re.search(pattern, answer, re.I | re.M):
                return f"the answer has /{pattern}/"
        return None
    raise ValueError(f"{task.name}: unknown check {check}")


def run_checks(task: Task, ws: Path, answer: str, before: dict[str, bytes] | None = None) -> CheckResult:
    """Decide whether the task was done in ``ws`` with final answer ``answer``."""
    task.ensure()
    original = snapshot(task.workspace) if before is None else before
    changed = changed_files(original, snapshot(ws))
    if task.kind == "change" and not changed:
        return CheckResult(False, "no file changed", changed)
    if task.kind == "refuse" and changed:
        return CheckResult(False, f"changed {', '.join(changed)} (should only answer)", changed)
    if task.kind in ("answer", "refuse") and not answer.strip():
        return CheckResult(False, "no final answer", changed)
    for check in task.checks:
        why = _one(check, task, ws, answer)
        if why is not None:
            return CheckResult(False, why, changed)
    return CheckResult(True, "ok", changed)
