"""Properties of the prune pipeline over random histories (hypothesis).

Histories mix user prompts (string and part content, some empty), assistant turns of text,
reasoning and tool-call parts carrying provider item ids in random namespaces (or none), approval
requests, and tool messages whose results, errors and approval responses answer calls that exist or
are missing. Provider item ids are unique, as the provider makes them.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from unit.context.context_fixtures import item_ids, stranded_results

from shiro_lsp.context.estimate import TokenEstimator, estimate_tokens
from shiro_lsp.context.ladder import dropped_span, prune_to_fit, rung_view
from shiro_lsp.context.prune import detach_provider_items, prune_preserving_items
from shiro_lsp.messages import Message, item_id_of

NAMESPACES = ["openai", "azure", "someProvider"]
PROPERTY_SETTINGS = settings(max_examples=150, deadline=None)


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    counter = itertools.count()
    calls: list[str] = []
    approvals: list[str] = []

    def options(prefix: str) -> dict[str, Any]:
        if not draw(st.booleans()):
            return {}
        namespace = draw(st.sampled_from(NAMESPACES))
        extra = {"phase": "final"} if draw(st.booleans()) else {}
        return {"providerOptions": {namespace: {"itemId": f"{prefix}_{next(counter)}", **extra}}}

    def text() -> str:
        return draw(st.text(alphabet="abcé xyz", max_size=draw(st.sampled_from([0, 10, 400]))))

    def assistant_parts() -> list[dict[str, Any]]:
        kind = draw(st.sampled_from(["text", "reasoning", "tool-call", "tool-call", "approval"]))
        if kind == "text":
            return [{"type": "text", "text": text(), **options("msg")}]
        if kind == "reasoning":
            return [{"type": "reasoning", "text": text(), **options("rs")}]
        call_id = f"call_{next(counter)}"
        calls.append(call_id)
        call = {
            "type": "tool-call",
            "toolCallId": call_id,
            "toolName": "bash",
            "input": {"cmd": text()},
            **options("fc"),
        }
        if kind == "tool-call":
            return [call]
        approval_id = f"ap_{next(counter)}"
        approvals.append(approval_id)
        return [call, {"type": "tool-approval-request", "approvalId": approval_id, "toolCallId": call_id}]

    def referenced(known: list[str], prefix: str) -> str:
        if known and draw(st.integers(0, 3)) > 0:
            return draw(st.sampled_from(known))
        return f"{prefix}_missing_{next(counter)}"

    def tool_part() -> dict[str, Any]:
        kind = draw(st.sampled_from(["tool-result", "tool-result", "tool-error", "tool-approval-response"]))
        if kind == "tool-result":
            output = {"type": "text", "value": text()}
            return {
                "type": kind,
                "toolCallId": referenced(calls, "call"),
                "toolName": "read_file",
                "output": output,
            }
        if kind == "tool-error":
            return {
                "type": kind,
                "toolCallId": referenced(calls, "call"),
                "toolName": "bash",
                "error": text(),
            }
        return {"type": kind, "approvalId": referenced(approvals, "ap"), "approved": draw(st.booleans())}

    messages: list[Message] = []
    for _ in range(draw(st.integers(0, 30))):
        role = draw(
            st.sampled_from(
                ["user", "assistant", "assistant", "tool", "tool", "user-parts", "assistant-text"]
            )
        )
        if role == "user":
            messages.append({"role": "user", "content": text()})
        elif role == "user-parts":
            messages.append({"role": "user", "content": [{"type": "text", "text": text(), **options("up")}]})
        elif role == "assistant-text":
            messages.append({"role": "assistant", "content": text()})
        elif role == "assistant":
            parts = [p for _ in range(draw(st.integers(0, 4))) for p in assistant_parts()]
            messages.append({"role": "assistant", "content": parts})
        else:
            messages.append(
                {"role": "tool", "content": [tool_part() for _ in range(draw(st.integers(0, 3)))]}
            )
    return messages


def thresholds(messages: list[Message]) -> st.SearchStrategy[int]:
    return st.integers(min_value=0, max_value=estimate_tokens(messages) + 50)


def user_prompts(messages: list[Message]) -> list[int]:
    return [id(m) for m in messages if m["role"] == "user" and isinstance(m["content"], str)]


@PROPERTY_SETTINGS
@given(histories(), st.data())
def test_pruning_to_fit_keeps_the_wire_valid_and_the_prompts(
    messages: list[Message], data: st.DataObject
) -> None:
    threshold = data.draw(thresholds(messages))
    snapshot = copy.deepcopy(messages)
    fitted = prune_to_fit(messages, threshold)

    assert stranded_results(fitted) == []
    assert item_ids(fitted) == []
    surviving = {id(m) for m in fitted}
    assert all(prompt in surviving for prompt in user_prompts(messages))
    assert messages == snapshot


@PROPERTY_SETTINGS
@given(histories(), st.data())
def test_pruning_to_fit_is_idempotent(messages: list[Message], data: st.DataObject) -> None:
    threshold = data.draw(thresholds(messages))
    once = prune_to_fit(messages, threshold)
    assert prune_to_fit(once, threshold) == once


@PROPERTY_SETTINGS
@given(histories(), st.data())
def test_a_token_estimator_prunes_exactly_like_the_plain_estimate(
    messages: list[Message], data: st.DataObject
) -> None:
    threshold = data.draw(thresholds(messages))
    estimator = TokenEstimator()
    assert estimator.estimate(messages) == estimate_tokens(messages)
    assert prune_to_fit(messages, threshold, estimator) == prune_to_fit(messages, threshold)


@PROPERTY_SETTINGS
@given(histories(), histories(), st.data())
def test_one_estimator_prunes_a_history_edited_between_steps_exactly_like_a_fresh_one(
    messages: list[Message], more: list[Message], data: st.DataObject
) -> None:
    """The estimator keeps the ladder's state between steps; appends, replacements, truncations and
    insertions in between must never make it prune differently from the plain estimate."""
    estimator = TokenEstimator()
    history = list(messages)
    pool = [*more, *messages]
    for _ in range(data.draw(st.integers(min_value=1, max_value=6))):
        threshold = data.draw(thresholds(history))
        assert prune_to_fit(history, threshold, estimator, 3) == prune_to_fit(
            history, threshold, fixed_overhead=3
        )
        edit = data.draw(st.sampled_from(["append", "replace", "truncate", "insert", "same"]))
        if pool and edit == "append":
            history.append(pool.pop())
        elif pool and history and edit == "replace":
            history[data.draw(st.integers(0, len(history) - 1))] = pool.pop()
        elif pool and edit == "insert":
            history.insert(data.draw(st.integers(0, len(history))), pool.pop())
        elif edit == "truncate":
            history = history[: data.draw(st.integers(0, len(history)))]
        else:
            history = list(history)


@PROPERTY_SETTINGS
@given(histories(), st.data())
def test_a_dropped_span_holds_only_what_the_wire_lost(messages: list[Message], data: st.DataObject) -> None:
    estimator = TokenEstimator()
    fitted = prune_to_fit(messages, data.draw(thresholds(messages)), estimator)
    span = dropped_span(messages, fitted)
    assert dropped_span(messages, fitted, estimator) == span
    wire_calls = {p.get("toolCallId") for m in fitted if isinstance(m["content"], list) for p in m["content"]}
    originals = {id(m) for m in messages}
    for message in span:
        assert not (message["role"] == "user" and isinstance(message["content"], str))
        for part in message["content"]:
            assert part["type"] != "reasoning" or id(message) in originals
            if part["type"] == "tool-call":
                assert part["toolCallId"] not in wire_calls


@PROPERTY_SETTINGS
@given(
    histories(),
    st.sampled_from(["all", "before-last-message", "none"]),
    st.sampled_from(
        ["none", "all", "before-last-message", "before-last-2-messages", "before-last-5-messages"]
    ),
    st.sampled_from(["remove", "keep"]),
)
def test_prune_preserving_items_leaves_no_orphaned_item_reference(
    messages: list[Message], reasoning: Any, tool_calls: str, empty: Any
) -> None:
    pruned = prune_preserving_items(messages, reasoning, tool_calls, empty)
    assert stranded_results(pruned) == []

    reasoning_of_item: dict[str, list[str | None]] = {}
    for message in messages:
        if message["role"] == "assistant" and isinstance(message["content"], list):
            ids = [item_id_of(p) for p in message["content"] if p["type"] == "reasoning"]
            for part in message["content"]:
                if (item := item_id_of(part)) is not None:
                    reasoning_of_item[item] = ids
    for message in pruned:
        if message["role"] != "assistant" or not isinstance(message["content"], list):
            continue
        kept = {item_id_of(p) for p in message["content"] if p["type"] == "reasoning"} - {None}
        for part in message["content"]:
            item = item_id_of(part)
            if part["type"] == "reasoning" or item is None or not reasoning_of_item[item]:
                continue
            assert kept & set(reasoning_of_item[item]), f"{item} sent without its reasoning item"


def latest_result_call(messages: list[Message]) -> str | None:
    calls = {
        p["toolCallId"]
        for m in messages
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "tool-call" and p.get("toolCallId")
    }
    for message in reversed(messages):
        if isinstance(message["content"], list):
            ids = sorted(
                p["toolCallId"]
                for p in message["content"]
                if p["type"] in ("tool-result", "tool-error") and p.get("toolCallId") in calls
            )
            if ids:
                return ids[0]
    return None


def reference_rung(messages: list[Message], keep: int | None) -> list[Message]:
    """A rung composed from the reference pipeline, plus Shiro's rules: user prompts stay, and so
    does the latest tool result (a stand-in result for it rides in the reference's kept window)."""
    tool_calls = "none" if keep is None else f"before-last-{keep + 1}-messages"
    latest = latest_result_call(messages) if keep is not None else None
    stand_in: Message = {
        "role": "tool",
        "content": [{"type": "tool-result", "toolCallId": latest, "toolName": "x", "output": {}}]
        if latest
        else [],
    }
    pruned = detach_provider_items(prune_preserving_items([*messages, stand_in], "all", tool_calls, "keep"))
    pruned = [m for m in pruned if m is not stand_in]
    return [
        m
        for m in pruned
        if not (isinstance(m["content"], (list, str)) and not m["content"])
        or (m["role"] == "user" and m["content"] == "")
    ]


@PROPERTY_SETTINGS
@given(histories(), st.sampled_from([None, 1, 2, 4, 8, 64]))
def test_every_rung_is_the_reference_pipeline_on_the_same_history(
    messages: list[Message], keep: int | None
) -> None:
    assert rung_view(messages, keep) == reference_rung(messages, keep)
