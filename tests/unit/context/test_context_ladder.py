"""prune_to_fit beyond the reference: the goal stays, user prompts stay, overhead counts, dropped spans."""

from __future__ import annotations

import copy

from unit.context.context_fixtures import (
    as_json,
    call_and_result,
    reasoning_turn,
    stranded_results,
    tool_calls_in,
    transcript,
    user,
)

from shiro_lsp.context.estimate import TokenEstimator, estimate_tokens
from shiro_lsp.context.ladder import dropped_span, prune_to_fit
from shiro_lsp.context.summary import is_summary_note, summary_note, with_span_summary
from shiro_lsp.messages import Message


def long_session() -> list[Message]:
    """A goal, then several prompts each followed by heavy tool work."""
    messages = transcript(60, 2000)
    messages[0] = user("GOAL: migrate the billing module to the new API")
    for i in range(0, len(messages), 20):
        messages.insert(i + 1, user(f"prompt {i}: keep going"))
    return messages


def test_the_goal_and_every_user_prompt_survive_the_narrowest_rung() -> None:
    messages = long_session()
    fitted = prune_to_fit(messages, 1, estimate_tokens)
    assert fitted[0] is messages[0]
    assert [m["content"] for m in fitted if m["role"] == "user"] == [
        m["content"] for m in messages if m["role"] == "user"
    ]
    assert tool_calls_in(fitted) < tool_calls_in(messages)


def test_an_empty_user_message_is_never_dropped_by_the_ladder() -> None:
    messages = [user("goal"), user(""), *transcript(10, 100)[1:]]
    assert any(m is messages[1] for m in prune_to_fit(messages, 1))


def test_the_goal_is_found_behind_a_leading_summary_note() -> None:
    messages = [summary_note("earlier work"), *long_session()]
    fitted = prune_to_fit(messages, 1)
    assert messages[1] in fitted and messages[0] in fitted


def test_fixed_overhead_counts_against_the_threshold() -> None:
    messages = transcript(100, 1000)
    threshold = estimate_tokens(messages)
    without_overhead = prune_to_fit(messages, threshold)
    with_overhead = prune_to_fit(messages, threshold, fixed_overhead=threshold // 2)
    assert tool_calls_in(with_overhead) < tool_calls_in(without_overhead)
    assert estimate_tokens(with_overhead) + threshold // 2 <= threshold


def test_a_token_estimator_gives_the_same_wire_as_the_plain_estimate() -> None:
    messages = long_session()
    estimator = TokenEstimator()
    estimator.estimate(messages)
    for threshold in (1, 5_000, 20_000, estimate_tokens(messages)):
        assert prune_to_fit(messages, threshold, estimator) == prune_to_fit(
            messages, threshold, estimate_tokens
        )


def test_pruning_never_mutates_the_history() -> None:
    messages = long_session()
    snapshot = copy.deepcopy(messages)
    prune_to_fit(messages, 1)
    prune_to_fit(messages, estimate_tokens(messages))
    assert messages == snapshot


def test_the_wire_never_strands_a_result_and_keeps_recent_work() -> None:
    messages = long_session()
    fitted = prune_to_fit(messages, 10_000)
    assert stranded_results(fitted) == []
    assert "f59.ts" in as_json(fitted)


def test_dropped_span_returns_whole_messages_and_only_the_lost_part_of_reduced_ones() -> None:
    mixed: Message = {
        "role": "assistant",
        "content": [
            {"type": "reasoning", "text": "hmm"},
            {"type": "text", "text": "I will grep for it"},
            {"type": "tool-call", "toolCallId": "c1", "toolName": "grep", "input": {"pattern": "TODO"}},
        ],
    }
    messages: list[Message] = [
        user("goal"),
        mixed,
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "toolName": "grep",
                    "output": {"type": "text", "value": "a.py:3"},
                }
            ],
        },
        *call_and_result("c2", "rs_2"),
        *(reasoning_turn(f"rs_{i}", f"msg_{i}", f"done {i}") for i in range(3, 7)),
    ]
    fitted = prune_to_fit(messages, 1)
    span = dropped_span(messages, fitted)
    assert span[0] == {"role": "assistant", "content": [mixed["content"][2]]}
    assert span[1] is messages[2]
    assert all(m is not messages[0] for m in span)
    assert "hmm" not in as_json(span) and "I will grep" not in as_json(span)
    assert "thinking" not in as_json(span)  # the reasoning of the last turn is not content


def test_dropped_span_is_empty_when_only_reasoning_and_item_ids_went() -> None:
    messages = [user("q"), reasoning_turn("rs_1", "msg_1"), reasoning_turn("rs_2", "msg_2")]
    fitted = prune_to_fit(messages, 1)
    assert dropped_span(messages, fitted) == []


def test_dropped_span_never_returns_a_summary_note() -> None:
    note = summary_note("earlier: edited a.py")
    messages = [user("goal"), note, *transcript(10, 100)[1:]]
    span = dropped_span(messages, [messages[0]])
    assert note not in span and span


# --- edge cases found by running 2,039 histories through Shiro and the reference side by side ----


def _result(call_id: object) -> Message:
    return {
        "role": "tool",
        "content": [
            {
                "type": "tool-result",
                "toolCallId": call_id,
                "toolName": "bash",
                "output": {"type": "text", "value": "x"},
            }
        ],
    }


def test_a_result_whose_call_id_is_null_or_empty_never_reaches_the_wire() -> None:
    for bad_id in (None, ""):
        messages = [user("goal"), *call_and_result("c1", "ok"), _result(bad_id), user("next")]
        for threshold in (10**9, 1):
            wire = prune_to_fit(messages, threshold)
            sent_ids = [
                p.get("toolCallId")
                for m in wire
                if isinstance(m["content"], list)
                for p in m["content"]
                if p["type"] == "tool-result"
            ]
            assert bad_id not in sent_ids, (bad_id, threshold)
            assert stranded_results(wire) == []


def test_a_user_prompt_that_starts_like_the_span_note_is_still_the_users() -> None:
    lookalike = user("Earlier in this session, now compacted away: this is my own text")
    messages = [lookalike, *long_session()]
    fitted = prune_to_fit(messages, 1)
    assert fitted[0] is lookalike  # it is the goal, and it stays on the wire
    assert not is_summary_note(lookalike)
    with_note = with_span_summary(fitted, "the summary")
    assert with_note[0] is lookalike and with_note[1]["content"].endswith("the summary")


def test_the_latest_tool_result_survives_the_narrowest_rung_with_four_messages_after_it() -> None:
    messages = [user("goal"), *transcript(30, 500)[1:], *call_and_result("latest")]
    messages += [user(f"follow-up {i}") for i in range(5)]
    fitted = prune_to_fit(messages, 1)
    kinds_of_latest = [
        p["type"]
        for m in fitted
        if isinstance(m["content"], list)
        for p in m["content"]
        if p.get("toolCallId") == "latest"
    ]
    assert kinds_of_latest == ["tool-call", "tool-result"]
    assert stranded_results(fitted) == []
