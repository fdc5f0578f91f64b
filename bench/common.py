"""Shared helpers for benchmarks: a result row and a robust timer."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


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
