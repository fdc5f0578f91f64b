"""One usage value type: tokens add up, and an unpriced cost makes the total unknown."""

from __future__ import annotations

import pytest

from shiro_lsp.state.sessions.live import LiveSession
from shiro_lsp.usage import NOT_RUN, Usage

PRICED = Usage(100, 20, cached_input_tokens=40, reasoning_tokens=5, cost_usd=0.25)
UNPRICED = Usage(10, 2, cost_usd=None)


def test_tokens_add_up_and_known_costs_add_up() -> None:
    total = PRICED + Usage(1, 2, 3, 4, 0.5)
    assert total == Usage(101, 22, 43, 9, 0.75)
    assert Usage() + PRICED == PRICED  # the zero costs a known 0.0


@pytest.mark.parametrize("total", [PRICED + UNPRICED, UNPRICED + PRICED, UNPRICED + UNPRICED])
def test_unknown_plus_known_is_unknown(total: Usage) -> None:
    assert total.cost_usd is None and total.input_tokens >= 20


def test_a_saved_total_without_a_cost_is_unknown_unless_nothing_was_counted() -> None:
    assert Usage.saved(10, 2, 0, None).cost_usd is None
    assert Usage.saved(0, 0, 0, None) == Usage()
    assert Usage.saved(10, 2, 1, 0.5) == Usage(10, 2, 1, cost_usd=0.5)
    assert NOT_RUN.cost_usd is None and not NOT_RUN.counted


def test_a_session_that_ran_an_unpriced_model_shows_its_cost_as_unknown() -> None:
    live = LiveSession.fresh(cwd="/w", provider="openai", model="gpt-5")
    assert live.cost_usd is None  # nothing run yet: nothing to show
    live.add_usage(Usage(50, 10, cost_usd=0.25))
    assert live.cost_usd == 0.25
    live.add_usage(UNPRICED)
    live.add_usage(Usage(5, 1, cost_usd=0.01))
    assert (live.input_tokens, live.output_tokens, live.cost_usd) == (65, 13, None)
