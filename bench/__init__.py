"""Benchmarks. Each ``bench/bench_*.py`` module exposes ``run() -> list[Result]``; `make bench` prints them."""
