"""The recorded real-model traffic (tests/fixtures/realmodel/) as requests and replayable replies."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fakes.fake_openai import Recorded

RECORDINGS = Path(__file__).resolve().parent.parent / "fixtures" / "realmodel"
MODELS = {
    "0.5b": "qwen2.5-coder-0.5b-instruct-q4_k_m",
    "1.5b": "qwen2.5-coder-1.5b-instruct-q4_k_m",
    "1.5b-argparse-shout": "qwen2.5-coder-1.5b-instruct-q4_k_m.argparse-shout",
    "1.5b-argparse-shout-retry": "qwen2.5-coder-1.5b-instruct-q4_k_m.argparse-shout-retry",
    "1.5b-argparse-shout-prose": "qwen2.5-coder-1.5b-instruct-q4_k_m.argparse-shout-prose",
    "1.5b-argparse-shout-xml": "qwen2.5-coder-1.5b-instruct-q4_k_m.argparse-shout-xml",
}


@dataclass(frozen=True)
class Exchange:
    n: int
    request: dict[str, Any]
    headers: dict[str, str]
    lines: list[str]

    @property
    def reply(self) -> Recorded:
        """The server's reply, to replay verbatim through the scripted model."""
        return Recorded(list(self.lines), dict(self.headers))

    @property
    def text(self) -> str:
        """What the model wrote (the content deltas joined)."""
        out = []
        for line in self.lines:
            if line.startswith("data: {"):
                for choice in json.loads(line[6:]).get("choices", []):
                    out.append(choice.get("delta", {}).get("content") or "")
        return "".join(out)

    @property
    def prompt(self) -> str:
        """The last user message of the request."""
        users = [m for m in self.request["messages"] if m["role"] == "user"]
        return str(users[-1]["content"])


def exchanges(model: str) -> list[Exchange]:
    requests: dict[int, dict[str, Any]] = {}
    headers: dict[int, dict[str, str]] = {}
    lines: dict[int, list[str]] = {}
    with (RECORDINGS / f"{MODELS[model]}.wire.jsonl").open(encoding="utf-8") as f:
        for raw in f:
            record = json.loads(raw)
            n = record["n"]
            if record["dir"] == "req":
                requests[n] = record["body"]
            elif record["dir"] == "resp":
                headers[n] = record["headers"]
            elif record["dir"] == "line":
                lines.setdefault(n, []).append(record["text"])
    return [Exchange(n, requests[n] or {}, headers.get(n, {}), lines.get(n, [])) for n in sorted(requests)]


def exchange(model: str, n: int) -> Exchange:
    return next(e for e in exchanges(model) if e.n == n)
