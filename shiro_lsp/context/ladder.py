"""``prune_to_fit`` (spec §4.1): prune only as hard as the threshold requires.

Reasoning goes first (it is never needed on the wire); tool content only if that was not enough,
keeping as much of the recent tail as fits: rung 0 keeps every tool call and result, then the
rungs keep tool content in the last 64, 32, 16, 8, 4 messages (one agent step is two messages, so 64
is about 32 steps of memory). The widest rung that fits wins; if none does the narrowest is
returned, because sending something beats a request rejected for size. Every rung is sent inline: no
provider ``itemId`` survives.

Beyond the reference: user messages with string content are never dropped (not even empty ones),
and the user's goal — the first of them that is not a summary note — is always on the wire.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from shiro_lsp.context.estimate import TokenEstimator, estimate_tokens
from shiro_lsp.context.prune import (
    APPROVAL_TYPES,
    CALL_ID_TYPES,
    REASONING_TYPES,
    drop_orphaned_results,
    parts_of,
    prune_messages,
    without_item_id,
)
from shiro_lsp.context.summary import goal_index, is_summary_note
from shiro_lsp.messages import Message, Part, item_id_of

KEEP_LADDER = (64, 32, 16, 8, 4)

Estimate = Callable[[Sequence[Message]], int]


def fits(
    messages: Sequence[Message], threshold: int, estimate: Estimate = estimate_tokens, fixed_overhead: int = 0
) -> bool:
    """Whether a request carrying ``messages`` plus ``fixed_overhead`` tokens stays within ``threshold``."""
    return estimate(messages) + fixed_overhead <= threshold


def prune_to_fit(
    messages: Sequence[Message],
    threshold: int,
    estimate: Estimate = estimate_tokens,
    fixed_overhead: int = 0,
) -> list[Message]:
    """The widest rung of the ladder whose estimate plus ``fixed_overhead`` is within ``threshold``.

    ``fixed_overhead`` is what rides on every request besides the messages (instructions, tool
    schemas): the threshold applies to the whole request. Pass a ``TokenEstimator`` as ``estimate``
    to reuse the lengths it already knows; rungs share the message objects they leave unchanged, so
    each one is serialised at most once per call.
    """
    derive = estimate.derive if isinstance(estimate, TokenEstimator) else _apply
    base = [derive(m, inline_without_reasoning) for m in messages]
    goal_at = goal_index(messages)
    goal = messages[goal_at] if goal_at is not None else None
    view: list[Message] = []
    for keep in (None, *KEEP_LADDER):
        view = _rung(base, keep, goal)
        if fits(view, threshold, estimate, fixed_overhead):
            return view
    return view


def _apply(message: Message, transform: Callable[[Message], Message]) -> Message:
    return transform(message)


def inline_without_reasoning(message: Message) -> Message:
    """One message as every rung sends it: no reasoning parts, no provider item ids.

    The same as ``detach_provider_items(prune_messages([message], reasoning="all",
    empty_messages="keep"))`` for one message, so it can be remembered per message.
    """
    content = message.get("content")
    if not isinstance(content, list):
        return message
    parts = content
    if message.get("role") == "assistant" and any(p.get("type") in REASONING_TYPES for p in parts):
        parts = [p for p in parts if p.get("type") not in REASONING_TYPES]
    if any(item_id_of(p) is not None for p in parts):
        parts = [p if item_id_of(p) is None else without_item_id(p) for p in parts]
    return message if parts is content else {**message, "content": parts}


def _rung(base: list[Message], keep: int | None, goal: Message | None) -> list[Message]:
    pruned = (
        base
        if keep is None
        else prune_messages(base, tool_calls=f"before-last-{keep}-messages", empty_messages="keep")
    )
    view = [m for m in drop_orphaned_results(pruned) if not _droppable_empty(m)]
    if goal is not None and not any(m is goal for m in view):
        view.insert(0, goal)
    return view


def _droppable_empty(message: Message) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        return not content and message.get("role") != "user"
    return isinstance(content, list) and not content


# --- what a prune dropped ----------------------------------------------------------------------


def _part_key(part: Part) -> tuple[Any, ...]:
    """Identifies a part across the copies pruning makes (copies are shallow, so values are shared)."""
    kind = part.get("type")
    if kind in CALL_ID_TYPES and isinstance(part.get("toolCallId"), str):
        return (kind, part["toolCallId"])
    if kind in APPROVAL_TYPES and isinstance(part.get("approvalId"), str):
        return (kind, part["approvalId"])
    return (kind, *((key, id(value)) for key, value in part.items() if key != "providerOptions"))


def dropped_span(before: Sequence[Message], after: Sequence[Message]) -> list[Message]:
    """What ``after`` lost of ``before``, worth summarising, oldest first.

    A message gone entirely is returned as is; a message that lost only some content (say, its tool
    call but not its text) is returned as a copy holding just the lost parts, so kept text is not
    summarised twice. Reasoning and provider item ids are not content worth a summary, and summary
    notes are never returned (a summary is never nested in a summary).
    """
    surviving_messages = {id(m) for m in after}
    surviving_parts: set[tuple[Any, ...]] = set()
    surviving_strings: set[tuple[Any, int]] = set()
    for message in after:
        parts = parts_of(message)
        if parts is None:
            surviving_strings.add((message.get("role"), id(message.get("content"))))
        else:
            surviving_parts.update(map(_part_key, parts))

    span: list[Message] = []
    for message in before:
        if id(message) in surviving_messages or is_summary_note(message):
            continue
        parts = parts_of(message)
        if parts is None:
            if (message.get("role"), id(message.get("content"))) not in surviving_strings:
                span.append(message)
            continue
        lost = [
            p for p in parts if p.get("type") not in REASONING_TYPES and _part_key(p) not in surviving_parts
        ]
        if lost:
            span.append(message if len(lost) == len(parts) else {**message, "content": lost})
    return span
