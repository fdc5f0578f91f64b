"""`python -m eval --explain RUN.json`: what happened in each run, step by step, from its saved logs.

For Shiro, from its ``--json`` events (tool calls with their input, tool errors, denials, notices, the
answer text); for the others, from the recorded traffic (each response's text and native tool calls).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval.harnesses import shiro_events
from eval.metrics import exchanges


def _short(text: str, most: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= most else flat[: most - 1] + "…"


def _shiro_steps(log_dir: Path) -> list[str]:
    steps: list[str] = []
    text = ""
    for event in shiro_events((log_dir / "stdout").read_text(encoding="utf-8", errors="replace")):
        kind = event.get("type")
        if kind in ("text", "done"):
            text += str(event.get("text", ""))
            continue
        if text.strip():
            steps.append(f"text: {_short(text)}")
            text = ""
        if kind == "tool-call":
            steps.append(
                f"call {event.get('name')} {_short(json.dumps(event.get('input'), ensure_ascii=False), 200)}"
            )
        elif kind == "tool-result":
            steps.append(f"  -> {_short(str(event.get('output', '')), 120)}")
        elif kind in ("tool-error", "tool-denied"):
            steps.append(f"  -> {kind}: {_short(str(event.get('error') or event.get('reason') or ''), 160)}")
        elif kind in ("notice", "error"):
            steps.append(f"{kind}: {_short(str(event.get('text') or event.get('error') or ''))}")
    if text.strip():
        steps.append(f"final text: {_short(text, 300)}")
    return steps


def _wire_steps(log_dir: Path) -> list[str]:
    path = log_dir / "wire.jsonl"
    if not path.exists():
        return []
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    steps = []
    for ex in exchanges(records):
        calls = ", ".join(f"{c['name']}({_short(c['arguments'], 80)})" for c in ex.tool_calls)
        steps.append(
            f"request {ex.n}: {ex.prompt_tokens} prompt tokens ({ex.cached_tokens} cached) -> "
            + (f"tool calls {calls}; " if calls else "")
            + f"text: {_short(ex.content, 220)}"
        )
    return steps


def explain(data: dict[str, Any], only_failed: bool = False, harness: str | None = None) -> str:
    out: list[str] = []
    for r in data["records"]:
        if (only_failed and r["passed"]) or (harness and r["harness"] != harness):
            continue
        log_dir = Path(r["log_dir"])
        flags = [
            f for f, on in [
                ("no final answer", not r["final_answer"]), ("echoed <tool_response>", r["echoed_tool_response"]),
                (f"echoed own prompt {r['echoed_prompt']}", bool(r["echoed_prompt"])),
                (f"copied examples {r['copied_examples']}", bool(r["copied_examples"])),
                ("timed out", r["timed_out"]),
            ] if on
        ]  # fmt: skip
        out.append(
            f"## {r['harness']} {r['task']} run {r['run']}: {'PASS' if r['passed'] else 'FAIL'} ({r['why']})\n"
            f"{r['wall_s']:.0f} s, {r['requests']} requests, tool calls {r['tool_names'] or 'none'}, "
            f"changed {r['changed'] or 'nothing'}" + (f"; {'; '.join(flags)}" if flags else "")
        )
        if log_dir.is_dir():
            steps = _wire_steps(log_dir)
            if r["harness"] == "shiro":  # its events, then what each model request got (the last may be cut)
                steps = _shiro_steps(log_dir) + [f"wire {step}" for step in steps]
            out.extend(f"  {s}" for s in steps)
        out.append("")
    return "\n".join(out)
