"""`make bench`: run every bench/bench_*.py and print ratios against same-run baselines."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import bench
from bench.common import Result


def main() -> int:
    names = sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_"))
    only = set(sys.argv[1:])
    results: list[Result] = []
    for name in names:
        if only and name not in only:
            continue
        module = importlib.import_module(f"bench.{name}")
        print(f"# {name}", flush=True)
        for result in module.run():
            print(result.line(), flush=True)
            results.append(result)
    missed = [r for r in results if not r.ok]
    print(f"{len(results) - len(missed)} of {len(results)} targets met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
