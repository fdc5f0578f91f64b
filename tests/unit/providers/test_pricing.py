"""Prices and the usage line (spec §3.6)."""

from __future__ import annotations

import pytest

from shiro_lsp.agent.pricing import cost_of, format_usd, price_of, usage_line
from shiro_lsp.usage import Usage


@pytest.mark.parametrize(
    ("model", "rate"),
    [
        ("gpt-5", (1.25, 10.0)),
        ("gpt-5-2025-08-07", (1.25, 10.0)),
        ("gpt-5-mini", (0.25, 2.0)),  # the longest prefix wins over gpt-5
        ("GPT-5-Nano", (0.05, 0.4)),
        ("openai/gpt-4o-mini", (0.15, 0.6)),  # provider prefix stripped
        ("anthropic/claude-sonnet-4-5", (3.0, 15.0)),
        ("gpt-4o-2024-08-06", (2.5, 10.0)),
        ("deepseek-reasoner", (0.55, 2.19)),
        ("o4-mini", (1.1, 4.4)),
    ],
)
def test_longest_prefix_match(model: str, rate: tuple[float, float]) -> None:
    assert price_of(model) == rate


@pytest.mark.parametrize("model", ["llama3.1:8b", "qwen2.5-coder", "o3", "gpt-4"])
def test_unknown_models_are_unpriced(model: str) -> None:
    assert price_of(model) is None
    assert cost_of(model, Usage(1000, 1000)) is None


def test_cost() -> None:
    assert cost_of("gpt-5", Usage(1_000_000, 1_000_000)) == pytest.approx(11.25)
    assert cost_of("gpt-5-mini", Usage(2_000, 500)) == pytest.approx(0.0015)


@pytest.mark.parametrize(
    ("amount", "text"),
    [(0, "$0.00"), (0.005, "$0.0050"), (0.00004, "$0.0000"), (0.01, "$0.01"), (1.2449, "$1.24")],
)
def test_format_usd(amount: float, text: str) -> None:
    assert format_usd(amount) == text


def test_usage_line() -> None:
    assert usage_line("gpt-5", 12000, 800) == "12000 in / 800 out tokens - $0.02"
    assert usage_line("llama3", 5, 6) == "5 in / 6 out tokens (llama3 is unpriced)"


def test_prompt_tokens_served_from_the_cache_are_billed_at_the_cached_rate() -> None:
    # 1M prompt tokens of which 800k cached: 200k at $1.25/M + 800k at $0.125/M, and 0 output
    assert cost_of("gpt-5", Usage(1_000_000, 0, 800_000)) == pytest.approx(0.25 + 0.1)
    assert cost_of("gpt-5", Usage(1_000, 0, 5_000)) == cost_of(
        "gpt-5", Usage(1_000, 0, 1_000)
    )  # never more than sent
    assert cost_of("qwen2.5-coder:1.5b", Usage(1_000, 10, 900)) is None
