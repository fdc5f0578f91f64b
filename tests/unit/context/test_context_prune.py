"""The 26 conformance cases of the reference's test/prune.test.ts (spec §5.7), then the SDK rules."""

from __future__ import annotations

import copy

import pytest
from unit.context.context_fixtures import (
    as_json,
    call_and_result,
    estimate,
    item_ids,
    kinds,
    reasoning_turn,
    result_part,
    stranded_results,
    tool_call_part,
    tool_calls_in,
    tool_turn,
    transcript,
    user,
)

from shiro_lsp.context.ladder import prune_to_fit
from shiro_lsp.context.prune import (
    detach_orphaned_items,
    detach_provider_items,
    drop_orphaned_results,
    prune_messages,
    prune_preserving_items,
)
from shiro_lsp.messages import Message

# --- detachOrphanedItems ---------------------------------------------------------------------------


def test_a_message_left_without_its_reasoning_item_keeps_its_text_and_loses_its_item_id() -> None:
    before = [user("q"), reasoning_turn("rs_1", "msg_1")]
    after: list[Message] = [
        user("q"),
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "answer", "providerOptions": {"openai": {"itemId": "msg_1"}}}
            ],
        },
    ]
    cleaned = detach_orphaned_items(before, after)
    assert item_ids(cleaned) == []
    assert kinds(cleaned) == ["user", "assistant:text"]
    assert "answer" in as_json(cleaned)


def test_a_tool_call_left_without_its_reasoning_item_survives_detached() -> None:
    before = [user("q"), tool_turn("rs_1", "fc_1")]
    after: list[Message] = [user("q"), {"role": "assistant", "content": [tool_call_part("tc1", "fc_1")]}]
    cleaned = detach_orphaned_items(before, after)
    assert item_ids(cleaned) == []
    assert "tc1" in as_json(cleaned)
    assert kinds(cleaned) == ["user", "assistant:tool-call"]


def test_an_empty_provider_options_object_is_removed_rather_than_left_behind() -> None:
    before = [tool_turn("rs_1", "fc_1")]
    after: list[Message] = [{"role": "assistant", "content": [tool_call_part("tc1", "fc_1")]}]
    part = detach_orphaned_items(before, after)[0]["content"][0]
    assert "providerOptions" not in part


def test_other_provider_options_are_kept_when_the_item_id_is_stripped() -> None:
    text = {"type": "text", "text": "a", "providerOptions": {"openai": {"itemId": "msg_1", "phase": "final"}}}
    before: list[Message] = [
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "t", "providerOptions": {"openai": {"itemId": "rs_1"}}},
                text,
            ],
        }
    ]
    after: list[Message] = [{"role": "assistant", "content": [copy.deepcopy(text)]}]
    result = as_json(detach_orphaned_items(before, after))
    assert "msg_1" not in result
    assert "final" in result


def test_a_turn_whose_reasoning_survived_is_left_alone() -> None:
    messages = [user("q"), reasoning_turn("rs_1", "msg_1")]
    assert detach_orphaned_items(messages, messages) == messages


def test_nothing_is_touched_when_no_reasoning_was_removed() -> None:
    before: list[Message] = [user("q"), {"role": "assistant", "content": "plain answer"}]
    assert detach_orphaned_items(before, before) == before


def test_parts_with_no_provider_item_id_are_returned_unchanged() -> None:
    before = [reasoning_turn("rs_1", "msg_1")]
    after: list[Message] = [{"role": "assistant", "content": [{"type": "text", "text": "no item id here"}]}]
    assert detach_orphaned_items(before, after) == after


def test_user_and_tool_messages_are_never_affected() -> None:
    before = [user("q"), reasoning_turn("rs_1", "msg_1")]
    after: list[Message] = [user("q"), {"role": "tool", "content": [result_part("t1")]}]
    assert detach_orphaned_items(before, after) == after


def test_one_orphaned_turn_does_not_detach_a_healthy_one_with_it() -> None:
    before = [
        user("q1"),
        reasoning_turn("rs_1", "msg_1", "old answer"),
        user("q2"),
        reasoning_turn("rs_2", "msg_2", "new answer"),
    ]
    after: list[Message] = [
        user("q1"),
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "old answer", "providerOptions": {"openai": {"itemId": "msg_1"}}}
            ],
        },
        user("q2"),
        reasoning_turn("rs_2", "msg_2", "new answer"),
    ]
    cleaned = as_json(detach_orphaned_items(before, after))
    assert "msg_1" not in cleaned
    assert "old answer" in cleaned
    assert "msg_2" in cleaned
    assert "rs_2" in cleaned


# --- prunePreservingItems ----------------------------------------------------------------------------


def test_prune_preserving_items_leaves_no_item_reference_behind_on_a_real_prune() -> None:
    messages: list[Message] = []
    for i in range(6):
        messages.append(user(f"question {i} {'x' * 3000}"))
        messages.append(reasoning_turn(f"rs_{i}", f"msg_{i}", f"answer {i}"))
    pruned = prune_preserving_items(
        messages, reasoning="all", tool_calls="before-last-3-messages", empty_messages="remove"
    )
    assert item_ids(pruned) == []
    assert len([m for m in pruned if m["role"] == "user"]) == 6
    assert "answer 5" in as_json(pruned)


def test_prune_preserving_items_is_a_no_op_when_nothing_needs_pruning() -> None:
    messages: list[Message] = [user("small"), {"role": "assistant", "content": "reply"}]
    assert prune_preserving_items(messages, reasoning="none", empty_messages="keep") == messages


def test_a_provider_other_than_openai_is_handled_the_same_way() -> None:
    before: list[Message] = [
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "t", "providerOptions": {"someProvider": {"itemId": "r1"}}},
                {"type": "text", "text": "a", "providerOptions": {"someProvider": {"itemId": "m1"}}},
            ],
        }
    ]
    after: list[Message] = [
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "a", "providerOptions": {"someProvider": {"itemId": "m1"}}}],
        }
    ]
    cleaned = detach_orphaned_items(before, after)
    assert item_ids(cleaned) == []
    assert '"text":"a"' in as_json(cleaned)


# --- dropOrphanedResults -------------------------------------------------------------------------------


def test_a_tool_result_left_without_its_tool_call_is_dropped() -> None:
    _, result_message = call_and_result("call_A")
    cleaned = drop_orphaned_results([user("q"), result_message])
    assert "call_A" not in as_json(cleaned)
    assert kinds(cleaned) == ["user"]


def test_a_tool_result_keeps_its_place_while_the_call_is_still_there() -> None:
    messages = [user("q"), *call_and_result("call_A")]
    assert drop_orphaned_results(messages) == messages


def test_a_tool_call_awaiting_its_result_survives_since_that_is_a_suspended_approval() -> None:
    call_message, _ = call_and_result("call_A")
    messages = [user("q"), call_message]
    assert drop_orphaned_results(messages) == messages


def test_a_tool_error_is_treated_as_a_result_and_dropped_with_its_call() -> None:
    messages: list[Message] = [
        user("q"),
        {
            "role": "tool",
            "content": [{"type": "tool-error", "toolCallId": "call_A", "toolName": "grep", "error": "boom"}],
        },
    ]
    assert "call_A" not in as_json(drop_orphaned_results(messages))


def test_only_the_orphaned_result_is_dropped_not_a_healthy_one_beside_it() -> None:
    messages: list[Message] = [
        user("q"),
        *call_and_result("call_LIVE"),
        {"role": "tool", "content": [result_part("call_LIVE", "a"), result_part("call_GONE", "b")]},
    ]
    cleaned = as_json(drop_orphaned_results(messages))
    assert "call_LIVE" in cleaned
    assert "call_GONE" not in cleaned


def test_prune_preserving_items_never_strands_a_tool_result_on_the_wire() -> None:
    messages: list[Message] = [user(f"q {'x' * 4000}")]
    for i in range(5):
        messages.extend(call_and_result(f"call_{i}", f"rs_{i}"))
        messages.append(user(f"follow up {i} {'y' * 4000}"))
    pruned = prune_preserving_items(
        messages, reasoning="all", tool_calls="before-last-3-messages", empty_messages="remove"
    )
    assert stranded_results(pruned) == []


# --- pruneToFit ----------------------------------------------------------------------------------------


def test_a_long_transcript_keeps_most_of_its_tool_calls_when_reasoning_alone_is_enough() -> None:
    messages = transcript(200, 100)
    fitted = prune_to_fit(messages, estimate(messages), estimate)
    assert tool_calls_in(fitted) == 200
    assert len(fitted) > len(messages) - 10


def test_tool_content_is_only_dropped_when_dropping_reasoning_was_not_enough() -> None:
    messages = transcript(200, 4000)
    fitted = prune_to_fit(messages, 20_000, estimate)
    assert estimate(fitted) <= 20_000
    assert tool_calls_in(fitted) > 2


def test_the_widest_rung_that_fits_is_the_one_used() -> None:
    messages = transcript(200, 300)
    wide = prune_to_fit(messages, estimate(messages), estimate)
    narrow = prune_to_fit(messages, 5_000, estimate)
    assert tool_calls_in(wide) > tool_calls_in(narrow)


def test_an_impossible_threshold_returns_the_narrowest_rung_rather_than_nothing() -> None:
    fitted = prune_to_fit(transcript(200, 4000), 10, estimate)
    assert len(fitted) > 0
    assert fitted[0]["role"] == "user"


@pytest.mark.parametrize("threshold", [10, 5_000, 20_000, 100_000, None])
def test_pruning_to_fit_never_strands_a_tool_result_at_any_rung(threshold: int | None) -> None:
    messages = transcript(120, 4000)
    fitted = prune_to_fit(messages, estimate(messages) if threshold is None else threshold, estimate)
    assert stranded_results(fitted) == []


def test_reasoning_is_always_dropped_whatever_the_threshold() -> None:
    messages = transcript(20, 100)
    fitted = prune_to_fit(messages, estimate(messages), estimate)
    assert item_ids(fitted) == []
    assert "deciding" not in as_json(fitted)


def test_compaction_removes_a_plain_assistant_item_reference_without_inline_reasoning() -> None:
    messages: list[Message] = [
        user(f"question {'x' * 2000}"),
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "answer", "providerOptions": {"openai": {"itemId": "msg_plain"}}}
            ],
        },
    ]
    fitted = prune_to_fit(messages, 1, estimate)
    assert item_ids(fitted) == []
    assert "answer" in as_json(fitted)


def test_the_user_prompt_survives_even_the_narrowest_rung() -> None:
    fitted = prune_to_fit(transcript(200, 4000), 100, estimate)
    assert "do the thing" in as_json(fitted)


# --- the SDK's pruneMessages rules (spec §5.2) ---------------------------------------------------------


def approval_exchange() -> list[Message]:
    """An approved call: the request and the call live far back, the response is recent."""
    return [
        user("deploy"),
        {
            "role": "assistant",
            "content": [
                tool_call_part("call_deploy"),
                {"type": "tool-approval-request", "approvalId": "ap_1", "toolCallId": "call_deploy"},
            ],
        },
        {"role": "tool", "content": [result_part("call_old")]},
        {"role": "assistant", "content": [tool_call_part("call_other")]},
        {"role": "tool", "content": [result_part("call_other")]},
        {
            "role": "tool",
            "content": [{"type": "tool-approval-response", "approvalId": "ap_1", "approved": True}],
        },
    ]


def test_an_approval_in_the_kept_tail_keeps_its_request_and_the_call_it_approves() -> None:
    pruned = prune_messages(approval_exchange(), tool_calls="before-last-1-messages")
    text = as_json(pruned)
    assert "ap_1" in text and "call_deploy" in text
    assert "call_other" not in text


def test_a_tool_call_whose_result_is_in_the_kept_tail_is_kept_however_far_back() -> None:
    messages: list[Message] = [
        user("q"),
        {"role": "assistant", "content": [tool_call_part("call_far"), tool_call_part("call_gone")]},
        {"role": "tool", "content": [result_part("call_gone")]},
        {"role": "assistant", "content": [{"type": "text", "text": "waiting"}]},
        {"role": "tool", "content": [result_part("call_far")]},
    ]
    pruned = prune_messages(messages, tool_calls="before-last-1-messages")
    assert kinds(pruned) == ["user", "assistant:tool-call", "assistant:text", "tool:tool-result"]
    assert "call_gone" not in as_json(pruned)


def test_messages_pruning_leaves_alone_keep_their_identity_and_inputs_are_not_mutated() -> None:
    messages = [user("q"), *call_and_result("call_1", "rs_1"), reasoning_turn("rs_2", "msg_2")]
    snapshot = copy.deepcopy(messages)
    pruned = prune_messages(messages, reasoning="all", tool_calls="before-last-1-messages")
    assert pruned[0] is messages[0]
    assert messages == snapshot
    detached = detach_provider_items(messages)
    assert detached[0] is messages[0] and detached[2] is messages[2]
    assert messages == snapshot


def test_an_empty_string_message_is_removed_only_when_asked() -> None:
    messages: list[Message] = [user("q"), {"role": "assistant", "content": ""}]
    assert prune_messages(messages) == [user("q")]
    assert prune_messages(messages, empty_messages="keep") == messages


@pytest.mark.parametrize("mode", ["before-last-0-messages", "before-last-x-messages", "some"])
def test_an_unknown_tool_calls_mode_is_refused_with_the_accepted_forms(mode: str) -> None:
    with pytest.raises(ValueError, match="before-last-N-messages"):
        prune_messages([user("q")], tool_calls=mode)
