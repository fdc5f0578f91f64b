"""The printed table, the summary numbers behind it, and deltas against an earlier JSON."""

from __future__ import annotations

import statistics
from typing import Any

from eval import splits

Rec = dict[str, Any]
SLOW_TURN_S = 120.0


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def summarise(records: list[Rec]) -> dict[str, dict[str, Any]]:
    """Per harness: pass rate (mean over all task runs), median wall, tokens, cache share, flags."""
    out: dict[str, dict[str, Any]] = {}
    for harness in dict.fromkeys(r["harness"] for r in records):
        rs = [r for r in records if r["harness"] == harness]
        later_prompt = sum(r["later_prompt_tokens"] for r in rs)
        firsts = [float(r["first_prompt_tokens"]) for r in rs if r["first_prompt_tokens"] is not None]
        out[harness] = {
            "runs": len(rs),
            "passed": sum(r["passed"] for r in rs),
            "pass_rate": sum(r["passed"] for r in rs) / len(rs),
            "median_wall_s": _median([r["wall_s"] for r in rs]),
            "median_first_prompt_tokens": _median(firsts),
            "max_first_prompt_tokens": max(firsts) if firsts else None,
            "median_requests": _median([float(r["requests"]) for r in rs]),
            "tool_calls": sum(r["tool_calls"] for r in rs),
            "prompt_tokens": sum(r["prompt_tokens"] for r in rs),
            "cache_share_after_step1": (sum(r["later_cached_tokens"] for r in rs) / later_prompt)
            if later_prompt
            else None,
            # turns that ended (not cut by the timeout) without a final answer
            "no_final_answer": sum(not r["final_answer"] and not r["timed_out"] for r in rs),
            "echoed_tool_response": sum(r["echoed_tool_response"] for r in rs),
            "echoed_own_prompt": sum(bool(r["echoed_prompt"]) for r in rs),
            "copied_examples": sum(bool(r["copied_examples"]) for r in rs),
            "timeouts": sum(r["timed_out"] for r in rs),
            "no_tool_call": sum(r["tool_calls"] == 0 for r in rs),
            # files left holding a block of lines twice; turns longer than SLOW_TURN_S (timeouts too)
            "duplicated_files": sum(len(r.get("duplicated_files") or []) for r in rs),
            "turns_over_120s": sum(r["wall_s"] > SLOW_TURN_S or r["timed_out"] for r in rs),
        }
    base = out.get("shiro")
    for s in out.values():
        s["pass_rate_vs_shiro"] = s["pass_rate"] / base["pass_rate"] if base and base["pass_rate"] else None
        s["wall_vs_shiro"] = (
            s["median_wall_s"] / base["median_wall_s"]
            if base and base["median_wall_s"] and s["median_wall_s"] is not None
            else None
        )
    return out


def _fmt(value: Any, spec: str = "") -> str:
    if value is None:
        return "—"
    if isinstance(value, float) and spec:
        return format(value, spec)
    return str(value)


def _grid(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows]
    return "\n".join([line, rule, *body])


def group_of(record: Rec) -> tuple[str, str, str]:
    """A record's set, split and wording kind (``original`` or ``paraphrased``); records saved before
    the sets existed are the own set's, split as splits.json says today."""
    set_name = record.get("set") or "own"
    split = record.get("split") or splits.split_of(set_name, record["task"])
    said = record.get("wording") or "original"
    return set_name, split, "original" if said == "original" else "paraphrased"


def by_group(records: list[Rec]) -> str:
    """One row per set, split, wording kind and harness: dev, held-out and paraphrase rows apart."""
    groups: dict[tuple[str, str, str], list[Rec]] = {}
    for record in records:
        groups.setdefault(group_of(record), []).append(record)
    order = {"own": 0, "exercism": 1, "repos": 2, "dev": 0, "heldout": 1, "original": 0, "paraphrased": 1}
    rows = []
    for key in sorted(groups, key=lambda k: tuple(order.get(part, 9) for part in k)):
        for harness, s in summarise(groups[key]).items():
            rows.append([
                *key, harness, f"{s['pass_rate']:.0%}", f"{s['passed']}/{s['runs']}", _fmt(s["median_wall_s"], ".0f"),
                str(s["timeouts"]), str(s["duplicated_files"]), str(s["turns_over_120s"]),
            ])  # fmt: skip
    header = ["set", "split", "wording", "harness", "pass rate", "passed", "median wall s", "timeouts",
              "duplicated files", f"turns > {SLOW_TURN_S:.0f} s"]  # fmt: skip
    return _grid(header, rows)


def table(records: list[Rec], meta: dict[str, Any]) -> str:
    summary = summarise(records)
    head = (
        f"eval {meta.get('started', '')}: model {meta.get('model')} at {meta.get('url')}"
        f" ({meta.get('server', '')}), {meta.get('runs')} run(s) per task, {len(meta.get('tasks', []))} tasks"
    )
    held = any(group_of(r)[1] == "heldout" for r in records)
    if meta.get("report_only") or held:
        head += "\nREPORT ONLY: held-out tasks ran; what they show is reported, never tuned on"
    header = ["harness", "pass rate", "passed", "× Shiro", "median wall s", "× Shiro", "1st req tokens (median/max)",
              "cache share step≥2", "median requests", "tool calls", "no final answer", "echo <tool_response>",
              "echo own prompt", "copied examples", "timeouts", "duplicated files",
              f"turns > {SLOW_TURN_S:.0f} s"]  # fmt: skip
    rows = []
    for harness, s in summary.items():
        rows.append([
            harness, f"{s['pass_rate']:.0%}", f"{s['passed']}/{s['runs']}", _fmt(s["pass_rate_vs_shiro"], ".2f"),
            _fmt(s["median_wall_s"], ".0f"), _fmt(s["wall_vs_shiro"], ".2f"),
            f"{_fmt(s['median_first_prompt_tokens'], '.0f')}/{_fmt(s['max_first_prompt_tokens'], '.0f')}",
            _fmt(s["cache_share_after_step1"], ".0%"), _fmt(s["median_requests"], ".0f"), str(s["tool_calls"]),
            str(s["no_final_answer"]), str(s["echoed_tool_response"]), str(s["echoed_own_prompt"]),
            str(s["copied_examples"]), str(s["timeouts"]), str(s["duplicated_files"]), str(s["turns_over_120s"]),
        ])  # fmt: skip
    names = list(summary)
    task_rows = []
    for task, said in dict.fromkeys((r["task"], group_of(r)[2]) for r in records):
        out = " (held out)" if any(group_of(r)[1] == "heldout" for r in records if r["task"] == task) else ""
        row = [task + out + ("" if said == "original" else " [paraphrased]")]
        for harness in names:
            rs = [
                r for r in records if r["task"] == task and r["harness"] == harness and group_of(r)[2] == said
            ]
            if not rs:
                row.append("")
                continue
            walls = _fmt(_median([r["wall_s"] for r in rs]), ".0f")
            firsts = [r["first_prompt_tokens"] for r in rs if r["first_prompt_tokens"] is not None]
            row.append(
                f"{sum(r['passed'] for r in rs)}/{len(rs)} {walls}s {firsts[0] if firsts else '—'}t "
                f"{sum(r['tool_calls'] for r in rs)}tc"
                + ("" if all(r["final_answer"] or r["timed_out"] for r in rs) else " !ans")
            )
        task_rows.append(row)
    per_task = _grid(["task", *[f"{h}: passed, wall, 1st tokens, tool calls" for h in names]], task_rows)
    return f"{head}\n\n{_grid(header, rows)}\n\n{by_group(records)}\n\n{per_task}\n"


def _compare_groups(old: list[Rec], new: list[Rec]) -> str:
    """Pass rate and median wall, old and new, per set, split, wording and harness."""

    def grouped(records: list[Rec]) -> dict[tuple[str, ...], dict[str, Any]]:
        groups: dict[tuple[str, str, str], list[Rec]] = {}
        for record in records:
            groups.setdefault(group_of(record), []).append(record)
        return {(*k, h): s for k, rs in groups.items() for h, s in summarise(rs).items()}

    a, b = grouped(old), grouped(new)
    rows = []
    for key in dict.fromkeys([*a, *b]):
        x, y = a.get(key, {}), b.get(key, {})
        delta = y["pass_rate"] - x["pass_rate"] if x and y else None
        rows.append([
            *key, _fmt(x.get("pass_rate"), ".0%"), _fmt(y.get("pass_rate"), ".0%"), _fmt(delta, "+.0%"),
            _fmt(x.get("median_wall_s"), ".0f"), _fmt(y.get("median_wall_s"), ".0f"),
        ])  # fmt: skip
    header = [
        "set",
        "split",
        "wording",
        "harness",
        "old pass",
        "new pass",
        "delta",
        "old wall s",
        "new wall s",
    ]
    return _grid(header, rows)


def compare(old: dict[str, Any], new: dict[str, Any]) -> str:
    """Deltas per harness (new − old) of the headline numbers, and per task of the pass counts."""
    a, b = summarise(old["records"]), summarise(new["records"])
    keys = ["pass_rate", "median_wall_s", "median_first_prompt_tokens", "cache_share_after_step1",
            "no_final_answer", "echoed_tool_response", "echoed_own_prompt", "timeouts", "duplicated_files",
            "turns_over_120s"]  # fmt: skip
    rows = []
    for harness in dict.fromkeys([*a, *b]):
        for key in keys:
            x, y = a.get(harness, {}).get(key), b.get(harness, {}).get(key)
            if x is None and y is None:
                continue
            delta = (y - x) if isinstance(x, int | float) and isinstance(y, int | float) else None
            rows.append([harness, key, _fmt(x, ".3g"), _fmt(y, ".3g"), _fmt(delta, "+.3g")])
    out = _grid(["harness", "metric", "old", "new", "delta"], rows)
    out += "\n\n" + _compare_groups(old["records"], new["records"])
    task_rows = []
    for harness in dict.fromkeys([*a, *b]):
        for task in dict.fromkeys(r["task"] for r in [*old["records"], *new["records"]]):
            counts = []
            for data in (old, new):
                rs = [r for r in data["records"] if r["task"] == task and r["harness"] == harness]
                counts.append(f"{sum(r['passed'] for r in rs)}/{len(rs)}" if rs else "—")
            if counts[0] != counts[1]:
                task_rows.append([harness, task, counts[0], counts[1]])
    if task_rows:
        out += "\n\n" + _grid(["harness", "task", "old passed", "new passed"], task_rows)
    return out + "\n"
