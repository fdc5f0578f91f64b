"""`python -m eval.probe RUNDIR`: send one request a Shiro run made again, and score the replies with the
task's own checks.

A whole turn takes minutes on a CPU and mixes many steps; one request, sent again, shows what a change to
that request (the prompt, the context shown, a reflection's message) does to the reply, and what the
model's sampled replies are worth (pass@k). RUNDIR is a Shiro run's log folder
(``.artifacts/eval/<stamp>/shiro/<task>.<run>``, holding ``wire.jsonl``). Without ``--samples`` the
run's requests are listed; with it, request ``--request`` (0: the turn's first; negative: from the end)
is sent that many times (seed 0, 1, ...). Each reply's written-out files, as Shiro's whole-file reader
reads them, go into a fresh copy of the task's workspace, and the task's checks decide. Calls in a
reply are not run: this scores a model that writes files out (Shiro's compact profile).

With ``--recorded`` no model is asked: the reply the run recorded to that request is scored as today's
reader reads it (a change to how replies are read, judged on every recorded run at no model time; give
several log folders, or ``.artifacts/eval``, to score the first reply of each dev run found there).

With ``--replace OLD NEW`` (repeatable) the system message is edited before the request is sent: a
change to the prompt's wording judged on the replies it gets, at several seeds, in minutes. Given several
folders (or a sweep's), ``--samples`` probes each run's request in turn and totals the passes.

Probing is how a change is judged, so held-out tasks are refused unless ``--report-only`` (over many
folders they are skipped).
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
import tempfile
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from eval import sets, splits, wording
from eval.harnesses import DEFAULT_URL
from eval.metrics import Exchange, exchanges
from eval.taskset import Task, prepare_workspace, run_checks, snapshot
from shiro_lsp.adapt.formats.whole_file import MAX_SHOWN_FILES, file_listings
from shiro_lsp.adapt.view import overview

REPLY_TIMEOUT_S = 1_800


@dataclass
class Sample:
    seed: int
    passed: bool
    why: str
    written: list[str]
    reply: str


def recorded_exchanges(run_dir: Path) -> list[Exchange]:
    """The chat requests of a run's wire log and what came back, in order."""
    wire = run_dir / "wire.jsonl"
    if not wire.is_file():
        raise SystemExit(f"eval.probe: {wire} does not exist (give a Shiro run's log folder)")
    records = [json.loads(line) for line in wire.read_text(encoding="utf-8").splitlines() if line.strip()]
    found = [ex for ex in exchanges(records) if isinstance(ex.body, dict) and ex.body.get("messages")]
    if not found:
        raise SystemExit(f"eval.probe: {wire} holds no chat request")
    return found


def recorded_requests(run_dir: Path) -> list[dict[str, Any]]:
    """The chat requests of a run's wire log, in order."""
    return [ex.body for ex in recorded_exchanges(run_dir)]


def run_name(run_dir: Path) -> tuple[str, str]:
    """The task and the wording of a log folder ``<task>.<run>`` or ``<task>.<run>.<wording>``."""
    parts = run_dir.name.split(".")
    if len(parts) > 2 and parts[-1] in wording.PARAPHRASES:
        return ".".join(parts[:-2]), parts[-1]
    return ".".join(parts[:-1]), "original"


def task_of(run_dir: Path, report_only: bool) -> Task:
    """The task a log folder ran (held-out: only with ``report_only``)."""
    name = run_name(run_dir)[0]
    task = sets.load(["all"], [name])[0]  # an unknown name is a clear error there
    if splits.split_of(task.set, task.name) == "heldout" and not report_only:
        raise SystemExit(f"eval.probe: {name} is held out; probing it tunes on it (--report-only to report)")
    return task


def prompt_of(run_dir: Path, task: Task) -> str:
    """The user's words of the run: the task's prompt in the run's wording."""
    return wording.prompt(task, run_name(run_dir)[1], wording.load_paraphrases(task.set))


def summary(request: dict[str, Any]) -> str:
    """A request's last message: its first and last lines."""
    last = request["messages"][-1]
    content = last.get("content")
    text = content if isinstance(content, str) else json.dumps(content)
    lines = [line.strip() for line in text.splitlines() if line.strip()] or [""]
    shown = lines[0][:80] + (f" … {lines[-1][:80]}" if len(lines) > 1 else "")
    return f"{len(request['messages'])} messages, last {last.get('role')}: {shown}"


def sampled(request: dict[str, Any], seed: int, temperature: float, max_tokens: int | None) -> dict[str, Any]:
    """The request as sent again: not streamed, at ``temperature``, with ``seed``."""
    body = {k: v for k, v in request.items() if k not in ("stream", "stream_options")}
    body |= {"stream": False, "temperature": temperature, "seed": seed}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    return body


def edited(request: dict[str, Any], replacements: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The request with each OLD of ``replacements`` replaced by its NEW in the system message; an OLD
    the message does not hold is a clear error (a probe that silently sent the prompt unchanged would
    judge nothing)."""
    if not replacements:
        return request
    body = copy.deepcopy(request)
    system = next((m for m in body["messages"] if m.get("role") == "system"), None)
    text = system.get("content") if system is not None else None
    if system is None or not isinstance(text, str):
        raise SystemExit("eval.probe: the request has no system message to edit")
    for old, new in replacements:
        if old not in text:
            raise SystemExit(f"eval.probe: {old!r} is not in the request's system message")
        text = text.replace(old, new)
    system["content"] = text
    return body


def reply_to(url: str, body: dict[str, Any]) -> str:
    data = json.dumps(body).encode("utf-8")
    headers = {"Content-Type": "application/json", "Authorization": "Bearer x"}
    request = urllib.request.Request(f"{url.rstrip('/')}/chat/completions", data, headers)
    with urllib.request.urlopen(request, timeout=REPLY_TIMEOUT_S) as response:
        answer = json.load(response)
    content = answer["choices"][0]["message"].get("content")
    return content if isinstance(content, str) else ""


_ROOT = re.compile(r"^(?:- )?Workspace root: (\S+)", re.M)


def recorded_root(request: dict[str, Any]) -> str | None:
    """The workspace folder the run's system prompt named (a reply may name files by absolute path)."""
    system = next((m.get("content") for m in request["messages"] if m.get("role") == "system"), None)
    found = _ROOT.search(system) if isinstance(system, str) else None
    return found.group(1).rstrip("/") if found else None


def score(
    task: Task, reply: str, scratch: Path, prompt: str | None = None, root: str | None = None
) -> tuple[bool, str, list[str]]:
    """Whether ``reply``'s written-out files do the task (passed, why, the files written); ``prompt``:
    the user's words the reply answered (default: the task's original prompt); ``root``: the workspace
    folder the run named, read as this copy's (so a file named by its absolute path is found)."""
    ws = prepare_workspace(task, scratch / "ws").resolve()
    if root:
        reply = reply.replace(root, str(ws))
    before = snapshot(ws)
    written = []
    shown = overview(ws, MAX_SHOWN_FILES)[0]  # as the reply format gives the reader the files shown
    for listing in file_listings(reply, ws, task.prompt if prompt is None else prompt, shown):
        target = (ws / listing.path).resolve()
        if target.is_relative_to(ws):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(listing.content, encoding="utf-8")
            written.append(listing.path)
    result = run_checks(task, ws, reply, before)
    return result.passed, result.why, written


def rescore(run_dirs: list[Path], *, index: int = 0, report_only: bool = False) -> list[tuple[Path, Sample]]:
    """The recorded reply to request ``index`` of each run, scored as today's reader reads it (no
    model asked). Of several folders, held-out runs are skipped (unless ``report_only``); one held-out
    folder alone is refused as ``probe`` refuses it."""
    runs = _run_folders(run_dirs)
    if len(runs) == 1:
        found = [(runs[0], task_of(runs[0], report_only))]
    else:
        found = _runs_with_tasks(runs, report_only)
    results = []
    for run_dir, task in found:
        recorded = recorded_exchanges(run_dir)
        if not -len(recorded) <= index < len(recorded):
            continue
        reply, root = recorded[index].content, recorded_root(recorded[index].body)
        with tempfile.TemporaryDirectory(prefix="shiro-rescore-") as scratch:
            passed, why, written = score(task, reply, Path(scratch), prompt_of(run_dir, task), root)
        results.append((run_dir, Sample(-1, passed, why, written, reply)))
        print(f"{run_dir}: {'PASS' if passed else why} (wrote {written})")
    wins = sum(sample.passed for _, sample in results)
    print(f"request {index} as recorded, read today: {wins} of {len(results)} runs passed")
    return results


def _runs_with_tasks(runs: list[Path], report_only: bool) -> list[tuple[Path, Task]]:
    """Each run of a known task with that task; held-out runs left out unless ``report_only``."""
    tasks = {t.name: t for t in sets.load(["all"])}
    return [
        (run_dir, task)
        for run_dir in runs
        if (task := tasks.get(run_name(run_dir)[0])) is not None
        and (report_only or splits.split_of(task.set, task.name) != "heldout")
    ]


def _run_folders(paths: list[Path]) -> list[Path]:
    """The run log folders given, and Shiro's found under the folders given (``<stamp>/shiro/<task>.<run>``)."""
    found: list[Path] = []
    for path in paths:
        if (path / "wire.jsonl").is_file():
            found.append(path)
        else:
            found += sorted(
                wire.parent for wire in path.rglob("wire.jsonl") if wire.parent.parent.name == "shiro"
            )
    return found


def probe(
    run_dir: Path,
    *,
    index: int = 0,
    samples: int = 1,
    temperature: float = 0.0,
    max_tokens: int | None = None,
    url: str = DEFAULT_URL,
    report_only: bool = False,
    replacements: Sequence[tuple[str, str]] = (),
) -> list[Sample]:
    """``samples`` replies to request ``index`` of the run in ``run_dir`` (its system message edited by
    ``replacements``), each scored."""
    task = task_of(run_dir, report_only)
    requests = recorded_requests(run_dir)
    if not -len(requests) <= index < len(requests):
        raise SystemExit(f"eval.probe: the run made {len(requests)} requests; there is no request {index}")
    request = edited(requests[index], replacements)
    results = []
    for seed in range(samples):
        reply = reply_to(url, sampled(request, seed, temperature, max_tokens))
        with tempfile.TemporaryDirectory(prefix="shiro-probe-") as scratch:
            passed, why, written = score(
                task, reply, Path(scratch), prompt_of(run_dir, task), recorded_root(requests[index])
            )
        results.append(Sample(seed, passed, why, written, reply))
        print(f"{task.name} seed {seed}: {'PASS' if passed else why} ({len(reply)} chars, wrote {written})")
    wins = sum(s.passed for s in results)
    print(f"{task.name} request {index}, temperature {temperature}: {wins} of {samples} passed")
    return results


def sweep(run_dirs: list[Path], **how: Any) -> list[Sample]:
    """``probe`` over each run found in ``run_dirs`` (held-out runs skipped unless ``report_only``);
    a run that made no request ``index`` is skipped."""
    results: list[Sample] = []
    for run_dir, _ in _runs_with_tasks(_run_folders(run_dirs), bool(how.get("report_only"))):
        made = len(recorded_requests(run_dir))
        if not -made <= how.get("index", 0) < made:
            continue
        results += probe(run_dir, **how)
    print(f"all runs: {sum(s.passed for s in results)} of {len(results)} samples passed")
    return results


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m eval.probe", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "run_dir",
        type=Path,
        nargs="+",
        help="a Shiro run's log folder (holds wire.jsonl), or several, or folders holding them",
    )
    parser.add_argument("--request", type=int, default=0, help="which request (0: first; -1: last)")
    parser.add_argument("--samples", type=int, default=0, help="replies to get (0: list the requests)")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--max-tokens", type=int, default=None, help="default: as the run sent it")
    parser.add_argument("--url", default=DEFAULT_URL)
    parser.add_argument(
        "--recorded", action="store_true", help="score the recorded reply as read today (no model asked)"
    )
    parser.add_argument(
        "--replace",
        nargs=2,
        action="append",
        default=[],
        metavar=("OLD", "NEW"),
        help="edit the system message before sending (repeatable)",
    )
    parser.add_argument("--out", type=Path, help="JSON of the samples (replies included)")
    parser.add_argument(
        "--report-only", action="store_true", help="allow a held-out task (report, never tune)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.recorded and args.replace:
        raise SystemExit("eval.probe: --replace edits a request sent again; --recorded sends none")
    if args.recorded:
        rescored = rescore(args.run_dir, index=args.request, report_only=args.report_only)
        results = [sample for _, sample in rescored]
    elif args.samples <= 0:
        if len(args.run_dir) > 1 or not (args.run_dir[0] / "wire.jsonl").is_file():
            raise SystemExit("eval.probe: give one run's log folder to list its requests")
        for number, request in enumerate(recorded_requests(args.run_dir[0])):
            print(f"{number}: {summary(request)}")
        return 0
    else:
        how: dict[str, Any] = {
            "index": args.request,
            "samples": args.samples,
            "temperature": args.temperature,
            "max_tokens": args.max_tokens,
            "url": args.url,
            "report_only": args.report_only,
            "replacements": [tuple(pair) for pair in args.replace],
        }
        one = len(args.run_dir) == 1 and (args.run_dir[0] / "wire.jsonl").is_file()
        results = probe(args.run_dir[0], **how) if one else sweep(args.run_dir, **how)
    if args.out:
        args.out.write_text(json.dumps([asdict(s) for s in results], indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
