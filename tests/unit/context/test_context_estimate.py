"""The token estimate: JSON.stringify's form, Math.round, and the incremental estimator."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from unit.context.context_fixtures import call_and_result, reasoning_turn, transcript, user

from shiro_lsp.context.estimate import TokenEstimator, estimate_text, estimate_tokens, json_text
from shiro_lsp.messages import Message


def test_the_estimate_is_a_quarter_of_the_compact_json_with_non_ascii_kept() -> None:
    messages = [user("héllo wörld✓")]
    text = '[{"role":"user","content":"héllo wörld✓"}]'
    assert len(text) == 42
    assert estimate_tokens(messages) == 11  # 42 / 4 = 10.5 rounds up, as Math.round does
    assert len(json.dumps(messages)) > len(text)  # Python's default form would overcount


def test_halves_round_up_like_math_round() -> None:
    assert estimate_text("x" * 2) == 1
    assert estimate_text("x" * 6) == 2
    assert estimate_text("x" * 5) == 1
    assert estimate_text("") == 0
    assert estimate_tokens([]) == 1  # "[]"


def test_the_estimator_matches_the_full_estimate_as_a_history_grows_and_shrinks() -> None:
    history = transcript(50, 300)
    estimator = TokenEstimator()
    for end in (1, 2, 30, 101, 60, 0, 101):
        assert estimator.estimate(history[:end]) == estimate_tokens(history[:end])


def test_measuring_a_view_leaves_the_tracked_history_alone() -> None:
    history = transcript(20, 300)
    estimator = TokenEstimator()
    estimator.estimate(history)
    view = [history[0], reasoning_turn("rs", "msg"), *history[-4:]]
    assert estimator(view) == estimate_tokens(view)
    history.append(user("next"))
    assert estimator.estimate(history) == estimate_tokens(history)


def random_message(rng: random.Random) -> Message:
    choice = rng.randrange(3)
    if choice == 0:
        return user("u" * rng.randrange(0, 50) + "é")
    if choice == 1:
        return reasoning_turn(f"rs_{rng.random()}", f"msg_{rng.random()}", "a" * rng.randrange(20))
    return call_and_result(f"c{rng.random()}")[rng.randrange(2)]


@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(min_value=1, max_value=40))
def test_incremental_estimates_equal_full_estimates_under_random_edits(
    rng: random.Random, edits: int
) -> None:
    history = [random_message(rng) for _ in range(rng.randrange(0, 20))]
    estimator = TokenEstimator()
    for _ in range(edits):
        action = rng.randrange(5)
        if action == 0:
            history.append(random_message(rng))
        elif action == 1 and history:
            history[rng.randrange(len(history))] = random_message(rng)
        elif action == 2:
            history = history[: rng.randrange(len(history) + 1)]
        elif action == 3 and history:
            history.insert(rng.randrange(len(history)), random_message(rng))
        else:
            history = list(history)  # a new list holding the same messages
        assert estimator.estimate(history) == estimate_tokens(history)
        view = [*rng.sample(history, k=len(history) // 2), random_message(rng)]
        assert estimator.measure(view) == estimate_tokens(view)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_the_estimators_encoder_writes_what_json_dumps_writes(value: object) -> None:
    assert json_text(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    assert json_text([value, {"k": value}]) == json.dumps(
        [value, {"k": value}], separators=(",", ":"), ensure_ascii=False
    )
