"""`python -m eval`: run the task set with Shiro and the peer harnesses against one OpenAI-compatible server."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from eval import harnesses, sets, splits, wording
from eval.explain import explain
from eval.report import compare, table
from eval.runner import as_dicts, list_models, rescore, run_all


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m eval", description=__doc__)
    p.add_argument(
        "--url",
        default=os.environ.get("EVAL_URL") or harnesses.DEFAULT_URL,
        help=f"base URL ({harnesses.DEFAULT_URL})",
    )
    p.add_argument("--model", default=os.environ.get("EVAL_MODEL") or None, help="default: the first listed")
    p.add_argument(
        "--runs", type=int, default=int(os.environ.get("RUNS") or 3), help="runs per task and harness"
    )
    p.add_argument("--tasks", default=os.environ.get("TASKS") or "", help="comma-separated task names (all)")
    p.add_argument(
        "--set", default="own", help=f"task set(s), comma-separated: {', '.join(sets.CHOICES)} (own)"
    )
    p.add_argument(
        "--split", default="dev", choices=splits.CHOICES,
        help="dev (default); heldout or all also run the held-out third, and mark the run report only",
    )  # fmt: skip
    p.add_argument(
        "--wording", default="original", choices=wording.CHOICES,
        help="the prompts: the original, one paraphrase (p1-p3), one of the three per task and run, or all",
    )  # fmt: skip
    p.add_argument("--harness", default=os.environ.get("HARNESS") or "shiro,aider,qwen-code")
    p.add_argument(
        "--timeout", type=float, default=float(os.environ.get("EVAL_TIMEOUT") or 600), help="s per run"
    )
    p.add_argument("--out", default=None, help="JSON path (default .artifacts/eval/<timestamp>.json)")
    p.add_argument(
        "--label", default=os.environ.get("EVAL_LABEL", ""), help="what was served, e.g. stock-1.5b"
    )
    p.add_argument("--compare", default=None, metavar="OLD.json", help="print deltas against an earlier run")
    p.add_argument("--list", action="store_true", help="list the tasks and exit")
    p.add_argument(
        "--write-splits", action="store_true",
        help="add tasks missing from eval/splits.json (by its rule; listed tasks never move) and exit",
    )  # fmt: skip
    p.add_argument(
        "--report", default=None, metavar="RUN.json", help="print the table of a saved run and exit"
    )
    p.add_argument("--explain", default=None, metavar="RUN.json", help="print each run's steps from its logs")
    p.add_argument("--failed", action="store_true", help="with --explain: failed runs only")
    p.add_argument(
        "--rescore", nargs="+", default=None, metavar="RUN.json",
        help="recompute the log-derived fields of saved runs (merged, in order) and write them to --out",
    )  # fmt: skip
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.rescore:
        merged: dict[str, Any] = {"meta": {}, "records": []}
        tasks_by_name = {t.name: t for t in sets.all_tasks()}
        for path in args.rescore:
            data = json.loads(Path(path).read_text())
            merged["meta"] = merged["meta"] or data["meta"]
            merged["records"] += [rescore(r, tasks_by_name[r["task"]]) for r in data["records"]]
        merged["meta"]["tasks"] = list(dict.fromkeys(r["task"] for r in merged["records"]))
        merged["meta"]["merged_from"] = args.rescore
        if args.out:
            Path(args.out).write_text(json.dumps(merged, indent=1, ensure_ascii=False))
        print(table(merged["records"], merged["meta"]))
        return 0
    if args.explain:
        data = json.loads(Path(args.explain).read_text())
        only = _split(args.harness)
        print(explain(data, only_failed=args.failed, harness=only[0] if len(only) == 1 else None))
        return 0
    if args.report:
        data = json.loads(Path(args.report).read_text())
        print(table(data["records"], data["meta"]))
        if args.compare:
            print(compare(json.loads(Path(args.compare).read_text()), data))
        return 0
    if args.write_splits:
        splits.write(splits.updated(sets.all_tasks(), splits.load()))
        print(f"eval: wrote {splits.SPLITS_FILE}", file=sys.stderr)
        return 0
    named = _split(args.tasks)
    tasks = sets.load(_split(args.set) or ["own"], named or None)
    if args.list:
        record = splits.load()
        for t in tasks:
            split = splits.split_of(t.set, t.name, record)
            print(
                f"{t.name:32} {t.set:8} {split:7} {t.kind:7} {t.lang:9} {'multi' if t.multi_step else '':6} {t.prompt}"
            )
        return 0
    tasks = splits.select(tasks, args.split, bool(named))
    if not tasks:
        raise SystemExit(f"eval: no {args.split} tasks in set {args.set}")
    wording.check_available(tasks, args.wording)
    names = _split(args.harness)
    for name in names:
        if name not in harnesses.HARNESSES:
            raise SystemExit(f"eval: unknown harness {name!r} (known: {', '.join(harnesses.HARNESSES)})")
    try:
        models = list_models(args.url)
    except OSError as error:
        raise SystemExit(
            f"eval: no model server at {args.url} ({error}). Start one, e.g. `make eval` without EVAL_URL "
            "(scripts/realmodel/serve.sh), or pass --url."
        ) from error
    model = args.model or (models[0] if models else None)
    if not model:
        raise SystemExit(f"eval: {args.url}/models lists no model; pass --model")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    root = Path(__file__).resolve().parent.parent
    out = Path(args.out) if args.out else root / ".artifacts" / "eval" / f"{stamp}.json"
    log_root = root / ".artifacts" / "eval" / stamp
    meta: dict[str, Any] = {
        "started": stamp, "url": args.url, "model": model, "server": args.label, "runs": args.runs,
        "tasks": [t.name for t in tasks], "harnesses": names, "timeout_s": args.timeout, "logs": str(log_root),
        "versions": {}, "sets": sorted({t.set for t in tasks}), "split": args.split, "wording": args.wording,
        "report_only": args.split != "dev",
    }  # fmt: skip

    def save(records: list[Any]) -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"meta": meta, "records": as_dicts(records)}, indent=1, ensure_ascii=False))

    for name in names:
        harnesses.ensure_installed(name)
        meta["versions"][name] = harnesses.version(name)
    print(f"eval: {len(tasks)} tasks × {args.runs} run(s) × {', '.join(names)} on {model} at {args.url}"
          f" (split {args.split}, wording {args.wording})", file=sys.stderr)  # fmt: skip
    if meta["report_only"]:
        print("eval: REPORT ONLY: held-out tasks run; do not tune on what they show", file=sys.stderr)
    records = run_all(
        tasks, names, args.runs, args.url, model, args.timeout, log_root, on_record=save,
        wording_choice=args.wording,
    )  # fmt: skip
    meta["finished"] = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    save(records)
    print(table(as_dicts(records), meta))
    print(f"eval: JSON in {out}, traffic and output per run in {log_root}/", file=sys.stderr)
    if args.compare:
        print(
            compare(json.loads(Path(args.compare).read_text()), {"meta": meta, "records": as_dicts(records)})
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
