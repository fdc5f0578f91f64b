"""Run tasks × harnesses × runs, each in a fresh temp copy of the task's workspace, behind the proxy."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from eval import harnesses, splits, wording
from eval.metrics import duplicated_files, echoed_sentences, traffic
from eval.proxy import RecordingProxy
from eval.taskset import Task, prepare_workspace, run_checks, snapshot


@dataclass
class RunRecord:
    harness: str
    task: str
    run: int
    passed: bool
    why: str
    wall_s: float
    exit_code: int | None
    timed_out: bool
    requests: int
    tool_calls: int
    tool_names: list[str]
    first_prompt_tokens: int | None
    prompt_tokens: int
    cached_tokens: int
    later_prompt_tokens: int
    later_cached_tokens: int
    final_answer: bool
    answer: str
    echoed_tool_response: bool
    echoed_prompt: list[str]
    copied_examples: list[str]
    changed: list[str]
    errors: list[str] = field(default_factory=list)
    log_dir: str = ""
    set: str = "own"
    split: str = "dev"
    wording: str = "original"
    duplicated_files: list[str] = field(default_factory=list)


def list_models(url: str) -> list[str]:
    with urllib.request.urlopen(url.rstrip("/") + "/models", timeout=30) as response:
        data = json.load(response)
    return [str(m["id"]) for m in data.get("data", [])]


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


def _execute(
    inv: harnesses.Invocation, timeout: float, out: Path, err: Path
) -> tuple[int | None, bool, float]:
    start = time.monotonic()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            inv.argv, cwd=inv.cwd, env=inv.env, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        try:
            code: int | None = process.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill_group(process)
            code, timed_out = None, True
        # whatever the harness left running in its group goes too
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    return code, timed_out, time.monotonic() - start


def _copied(examples: list[str], haystacks: list[str], prompt: str, original: dict[str, bytes]) -> list[str]:
    """Example values of the harness's own prompt that turn up in what it did, but that neither the
    user's prompt nor the workspace contains."""
    known = prompt + "\n" + "\n".join(b.decode("utf-8", "replace") for b in original.values())
    text = "\n".join(haystacks)
    return [e for e in examples if e in text and e not in known]


@dataclass(frozen=True)
class Wording:
    """The prompt one run gives: its wording (``original``, ``p1``...) and text."""

    name: str
    prompt: str


def run_one(
    task: Task,
    harness: str,
    run: int,
    url: str,
    model: str,
    timeout: float,
    log_root: Path,
    base: Path,
    said: Wording | None = None,
) -> RunRecord:
    """One run in a fresh copy of the task's workspace. The copy is always at ``base/ws`` (emptied
    before each run), so every run of an eval sees the same workspace path, as a user's turns in one
    project do: a prompt that names the path keeps its cacheable prefix from task to task, and from
    sweep to sweep (:func:`work_base`)."""
    said = said or Wording("original", task.prompt)
    suffix = "" if said.name == "original" else f".{said.name}"
    log_dir = log_root / harness / f"{task.name}.{run}{suffix}"
    log_dir.mkdir(parents=True, exist_ok=True)
    home = base / "home"
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    ws = prepare_workspace(task, base / "ws")
    before = snapshot(ws)
    with RecordingProxy(url, log_dir / "wire.jsonl") as proxy:
        inv = harnesses.invocation(harness, said.prompt, ws, home, proxy.url, model)
        code, timed_out, wall = _execute(inv, timeout, log_dir / "stdout", log_dir / "stderr")
    after = snapshot(ws)
    written = {p: after[p] for p in after if before.get(p) != after[p]}
    for rel, content in written.items():  # what the harness wrote, for --explain and --rescore
        (log_dir / "changed" / rel).parent.mkdir(parents=True, exist_ok=True)
        (log_dir / "changed" / rel).write_bytes(content)
    seen = observe(harness, said.prompt, log_dir, proxy.records, before, written)
    result = run_checks(task, ws, seen["answer"], before)
    why = result.why
    if timed_out:
        why = f"timed out after {timeout:.0f} s; " + why
    elif code not in (0, None) and not result.passed:
        why = f"exit {code}; " + why
    return RunRecord(
        harness=harness, task=task.name, run=run, passed=result.passed and not timed_out, why=why,
        wall_s=round(wall, 1), exit_code=code, timed_out=timed_out, changed=result.changed,
        log_dir=str(log_dir), set=task.set, split=splits.split_of(task.set, task.name), wording=said.name,
        **seen,
    )  # fmt: skip


def observe(
    harness: str,
    prompt: str,
    log_dir: Path,
    records: list[dict[str, Any]],
    before: dict[str, bytes],
    written: dict[str, bytes],
) -> dict[str, Any]:
    """The RunRecord fields that the logs give: traffic, tool calls, the final answer and the flags."""
    stdout = (log_dir / "stdout").read_text(encoding="utf-8", errors="replace")
    seen = traffic(records)
    tool_texts = list(seen.tool_call_texts)
    if harness == "shiro":
        events = harnesses.shiro_events(stdout)
        calls = [e for e in events if e.get("type") == "tool-call"]
        tool_calls = len(calls)
        tool_names = [str(e.get("name")) for e in calls]
        tool_texts += [f"{e.get('name')} {json.dumps(e.get('input'), ensure_ascii=False)}" for e in calls]
        answer = harnesses.shiro_final_text(events) if events else seen.last_content
        errors = [str(e.get("error")) for e in events if e.get("type") == "error"]
    else:
        tool_calls = seen.native_tool_calls
        tool_names = [t.split(" ", 1)[0] for t in seen.tool_call_texts]
        answer = stdout.strip() if harness == "qwen-code" and stdout.strip() else seen.last_content
        errors = []
    if harness == "qwen-code" and not answer.strip():
        answer = seen.last_content
    texts = [b.decode("utf-8", "replace") for b in written.values()]
    return {
        "requests": seen.requests, "tool_calls": tool_calls, "tool_names": tool_names,
        "first_prompt_tokens": seen.first_prompt_tokens, "prompt_tokens": seen.prompt_tokens,
        "cached_tokens": seen.cached_tokens, "later_prompt_tokens": seen.later_prompt_tokens,
        "later_cached_tokens": seen.later_cached_tokens, "final_answer": bool(answer.strip()),
        "answer": answer[:4000],
        "echoed_tool_response": "<tool_response>" in answer or "</tool_response>" in answer,
        "echoed_prompt": echoed_sentences(answer, seen.system_sentences),
        "copied_examples": _copied(seen.examples, [*tool_texts, answer, *texts], prompt, before),
        "errors": errors + seen.errors,
        "duplicated_files": duplicated_files(before, written),
    }  # fmt: skip


def _recorded_prompt(record: dict[str, Any], task: Task) -> str:
    """The prompt a saved run gave (its wording's text; the original when that cannot be had)."""
    name = record.get("wording") or "original"
    if name == "original":
        return task.prompt
    try:
        return wording.prompt(task, name, wording.load_paraphrases(task.set))
    except SystemExit:
        return task.prompt


def rescore(record: dict[str, Any], task: Task) -> dict[str, Any]:
    """A saved record with its log-derived fields computed again (after a change to the metrics)."""
    log_dir = Path(record["log_dir"])
    wire = log_dir / "wire.jsonl"
    if not wire.is_file():
        return record
    records = [json.loads(line) for line in wire.read_text(encoding="utf-8").splitlines() if line.strip()]
    changed = log_dir / "changed"
    written = (
        {p.relative_to(changed).as_posix(): p.read_bytes() for p in changed.rglob("*") if p.is_file()}
        if changed.is_dir()
        else {}
    )
    task.ensure()
    prompt = _recorded_prompt(record, task)
    return {
        **record,
        **observe(record["harness"], prompt, log_dir, records, snapshot(task.workspace), written),
    }


def run_all(
    tasks: list[Task],
    harness_names: list[str],
    runs: int,
    url: str,
    model: str,
    timeout: float,
    log_root: Path,
    on_record: Any = None,
    wording_choice: str = "original",
) -> list[RunRecord]:
    """Run by run, task by task (in each of its wordings), and each task by every harness in turn: the
    harnesses of one task run under the same load (the machine may be shared), and a sweep cut short
    still gives paired results. The server keeps each harness's prompt prefix in its own slot, so the
    interleaving costs no cache."""
    records: list[RunRecord] = []
    with work_base() as base:
        paraphrases = wording.check_available(tasks, wording_choice)
        for harness in harness_names:
            harnesses.ensure_installed(harness)
        for task in tasks:
            task.ensure()
        for run in range(1, runs + 1):
            for task, said in (
                (t, Wording(w, wording.prompt(t, w, paraphrases[t.set])))
                for t in tasks
                for w in wording.wordings(wording_choice, t, run)
            ):
                for harness in harness_names:
                    shown = "" if said.name == "original" else f" ({said.name})"
                    print(
                        f"eval: {harness} {task.name}{shown} run {run}/{runs} ...",
                        file=sys.stderr,
                        flush=True,
                    )
                    record = run_one(task, harness, run, url, model, timeout, log_root, base, said)
                    records.append(record)
                    mark = "PASS" if record.passed else "fail"
                    print(
                        f"eval:   {mark} {record.wall_s:.0f} s, {record.requests} requests, {record.tool_calls} tool calls"
                        f" - {record.why}",
                        file=sys.stderr,
                        flush=True,
                    )
                    if on_record is not None:
                        on_record(records)
    return records


@contextlib.contextmanager
def work_base(root: Path | None = None) -> Iterator[Path]:
    """The folder the runs' workspaces are copied into: the same path in every sweep (``EVAL_WORK_DIR``,
    else ``shiro-eval-work`` in the temporary folder), held for this sweep alone. The path is in
    what the harnesses send (Shiro names the workspace): a random folder name per sweep made the same
    task's prompt differ from sweep to sweep, and a 1.5B model's greedy reply with it. Another sweep
    running at once gets a folder of its own (its prompts then differ: said on stderr)."""
    root = root or Path(os.environ.get("EVAL_WORK_DIR") or Path(tempfile.gettempdir()) / "shiro-eval-work")
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f".{root.name}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir()
            base = root
        except BlockingIOError:
            print(f"eval: {root} is in use by another sweep: this one works elsewhere", file=sys.stderr)
            base = Path(tempfile.mkdtemp(prefix="shiro-eval-"))
        try:
            yield base
        finally:
            shutil.rmtree(base, ignore_errors=True)


def as_dicts(records: list[RunRecord]) -> list[dict[str, Any]]:
    return [asdict(r) for r in records]
