"""Shared helpers for benchmarks: a result row and a robust timer."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Result:
    name: str
    value: float
    unit: str  # "x" for a ratio against a baseline measured in the same run, or "ms"
    target: str  # e.g. "<= 1.5x"
    ok: bool

    def line(self) -> str:
        mark = "ok  " if self.ok else "MISS"
        return f"{mark} {self.name:<60} {self.value:10.3f} {self.unit:<3} (target {self.target})"


def median_seconds(fn: Callable[[], object], repeat: int = 7) -> float:
    """Median wall time of ``fn`` over ``repeat`` runs (after one warm-up)."""
    fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def e2e_tools() -> Path | None:
    """The e2e tools' ``node_modules`` (code-server, playwright-core: scripts/e2e-setup.sh) in
    ``$SHIRO_TOOLS/code-server`` or ``.tools/code-server``; None when not installed."""
    for base in (os.environ.get("SHIRO_TOOLS"), str(ROOT / ".tools")):
        if base and (Path(base) / "code-server" / "node_modules" / "playwright-core").is_dir():
            return Path(base) / "code-server" / "node_modules"
    return None
