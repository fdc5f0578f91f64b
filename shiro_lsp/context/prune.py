"""The prune repair pipeline (spec §5.2–§5.5): prune messages, then repair what pruning breaks.

Every function is pure: inputs are never mutated, a message that a step leaves unchanged is
returned as the same object (so estimates and identity-based bookkeeping stay cheap), and a changed
message is rebuilt as a new dict.

Why the repairs exist (OpenAI Responses API):

* A part carrying a provider ``itemId`` is sent as ``{"type": "item_reference", "id": …}``, a pointer
  to an item the provider stored, which depends on the reasoning item of the same response. Send it
  without that reasoning and the request fails with 400 "… was provided without its required
  'reasoning' item". The repair strips the ``itemId`` so the same content goes inline; it never drops
  the part ("Compaction may shorten the history; it must not blank it").
* ``before-last-N-messages`` counts messages, so the cut can land between a tool call and its result:
  400 "No tool call found for function call output with call_id …". The repair drops the result.
  A call without its result is left alone: that is what a suspended approval looks like.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import Literal

from shiro_lsp.messages import TOOL_RESULT_TYPES, Message, Part, item_id_of

ReasoningMode = Literal["all", "before-last-message", "none"]
EmptyMode = Literal["remove", "keep"]

REASONING_TYPES = frozenset({"reasoning", "reasoning-file"})
# Parts the SDK's toolCalls option prunes. ``tool-error`` is Shiro's: a result, pruned like one.
PRUNABLE_TOOL_TYPES = frozenset(
    {"tool-call", "tool-result", "tool-error", "tool-approval-request", "tool-approval-response"}
)
CALL_ID_TYPES = frozenset({"tool-call", "tool-result", "tool-error"})
APPROVAL_TYPES = frozenset({"tool-approval-request", "tool-approval-response"})

_KEEP_LAST = re.compile(r"before-last-(\d+)-messages")


def parts_of(message: Message) -> list[Part] | None:
    content = message.get("content")
    return content if isinstance(content, list) else None


def _assistant_parts(message: Message) -> list[Part] | None:
    return parts_of(message) if message.get("role") == "assistant" else None


def _with_parts(message: Message, parts: list[Part]) -> Message:
    return {**message, "content": parts}


def without_item_id(part: Part) -> Part:
    """The part again with every provider ``itemId`` removed (spec §5.3 step 4).

    A namespace left empty is dropped, and ``providerOptions`` goes when no namespace remains; other
    provider options (e.g. ``openai.phase``) stay.
    """
    options: dict[str, object] = {}
    for provider, namespace in (part.get("providerOptions") or {}).items():
        if isinstance(namespace, dict):
            rest = {key: value for key, value in namespace.items() if key != "itemId"}
            if rest:
                options[provider] = rest
        else:
            options[provider] = namespace
    stripped = dict(part)
    if options:
        stripped["providerOptions"] = options
    else:
        stripped.pop("providerOptions", None)
    return stripped


# --- pruneMessages (spec §5.2) -------------------------------------------------------------------


def keep_last_count(tool_calls: str) -> int | None:
    """Trailing messages whose tool content a ``tool_calls`` mode keeps; ``None`` means prune none."""
    if tool_calls == "none":
        return None
    if tool_calls == "all":
        return 0
    if tool_calls == "before-last-message":
        return 1
    match = _KEEP_LAST.fullmatch(tool_calls)
    if match is None or int(match.group(1)) < 1:
        raise ValueError(
            f"tool_calls must be 'none', 'all', 'before-last-message' or 'before-last-N-messages' "
            f"with N >= 1, not {tool_calls!r}"
        )
    return int(match.group(1))


def prune_messages(
    messages: Sequence[Message],
    reasoning: ReasoningMode = "none",
    tool_calls: str = "none",
    empty_messages: EmptyMode = "remove",
) -> list[Message]:
    """A port of the AI SDK's ``pruneMessages`` (spec §5.2).

    ``reasoning="all"`` removes reasoning parts from every assistant message with array content
    (``"before-last-message"`` spares the last message). ``tool_calls="before-last-N-messages"``
    removes tool calls, results, errors and approval parts from assistant and tool messages outside
    the last N messages, except tool calls/results whose ``toolCallId`` appears in the last N (and the
    call an approval there refers to) and approval parts whose ``approvalId`` appears there.
    ``"all"`` prunes every message, ``"none"`` none. ``empty_messages="remove"`` drops messages left
    with empty content (an empty list or an empty string).
    """
    pruned = list(messages)
    if reasoning != "none":
        pruned = _without_reasoning(pruned, spare_last=reasoning == "before-last-message")
    keep_last = keep_last_count(tool_calls)
    if keep_last is not None:
        pruned = _without_tool_content(pruned, keep_last)
    if empty_messages == "remove":
        pruned = [m for m in pruned if not _is_empty(m)]
    return pruned


def _is_empty(message: Message) -> bool:
    content = message.get("content")
    return isinstance(content, (list, str)) and len(content) == 0


def _without_reasoning(messages: list[Message], spare_last: bool) -> list[Message]:
    last = len(messages) - 1
    result: list[Message] = []
    for position, message in enumerate(messages):
        parts = _assistant_parts(message)
        if parts is None or (spare_last and position == last):
            result.append(message)
            continue
        kept = [p for p in parts if p.get("type") not in REASONING_TYPES]
        result.append(message if len(kept) == len(parts) else _with_parts(message, kept))
    return result


def _tool_ids_in(messages: Iterable[Message]) -> tuple[set[str], set[str]]:
    call_ids: set[str] = set()
    approval_ids: set[str] = set()
    for message in messages:
        if message.get("role") not in ("assistant", "tool"):
            continue
        for part in parts_of(message) or ():
            kind = part.get("type")
            if kind in CALL_ID_TYPES and isinstance(part.get("toolCallId"), str):
                call_ids.add(part["toolCallId"])
            elif kind in APPROVAL_TYPES and isinstance(part.get("approvalId"), str):
                approval_ids.add(part["approvalId"])
    return call_ids, approval_ids


def _approval_calls(messages: Iterable[Message], approval_ids: set[str]) -> set[str]:
    """The tool calls that the kept approval requests refer to."""
    calls: set[str] = set()
    for message in messages:
        if message.get("role") not in ("assistant", "tool"):
            continue
        for part in parts_of(message) or ():
            if part.get("type") == "tool-approval-request" and part.get("approvalId") in approval_ids:
                call_id = part.get("toolCallId")
                if isinstance(call_id, str):
                    calls.add(call_id)
    return calls


def _without_tool_content(messages: list[Message], keep_last: int) -> list[Message]:
    window_start = len(messages) - keep_last
    kept_calls, kept_approvals = _tool_ids_in(messages[window_start:] if keep_last else ())
    if kept_approvals:
        kept_calls |= _approval_calls(messages, kept_approvals)

    def keeps(part: Part) -> bool:
        kind = part.get("type")
        if kind not in PRUNABLE_TOOL_TYPES:
            return True
        if kind in CALL_ID_TYPES:
            return part.get("toolCallId") in kept_calls
        return part.get("approvalId") in kept_approvals

    result: list[Message] = []
    for position, message in enumerate(messages):
        parts = parts_of(message)
        if parts is None or position >= window_start or message.get("role") not in ("assistant", "tool"):
            result.append(message)
            continue
        kept = [p for p in parts if keeps(p)]
        result.append(message if len(kept) == len(parts) else _with_parts(message, kept))
    return result


# --- repairs (spec §5.3–§5.5) --------------------------------------------------------------------


def detach_orphaned_items(before: Sequence[Message], after: list[Message]) -> list[Message]:
    """Strip the item ids of assistant turns whose reasoning item pruning removed (spec §5.3).

    One message is one response, and its reasoning item covers every other item in it: a turn any of
    whose reasoning ids survived in ``after`` is left alone; a turn that lost all its reasoning has
    the ``itemId`` of every one of its parts stripped wherever that id appears in ``after``. Parts
    are never dropped; user and tool messages are never touched. Nothing orphaned → ``after`` itself.
    """
    surviving: set[str] = set()
    for message in after:
        for part in _assistant_parts(message) or ():
            if part.get("type") == "reasoning":
                item_id = item_id_of(part)
                if item_id is not None:
                    surviving.add(item_id)

    orphaned: set[str] = set()
    for message in before:
        parts = _assistant_parts(message) or []
        reasoning_ids = [item_id_of(p) for p in parts if p.get("type") == "reasoning"]
        if not reasoning_ids or any(i is not None and i in surviving for i in reasoning_ids):
            continue
        orphaned.update(i for i in map(item_id_of, parts) if i is not None)

    if not orphaned:
        return after
    return [_detached(message, orphaned) for message in after]


def _detached(message: Message, orphaned: set[str]) -> Message:
    parts = _assistant_parts(message)
    if not parts:
        return message
    changed = False
    result: list[Part] = []
    for part in parts:
        if item_id_of(part) in orphaned:
            result.append(without_item_id(part))
            changed = True
        else:
            result.append(part)
    return _with_parts(message, result) if changed else message


def detach_provider_items(messages: Sequence[Message]) -> list[Message]:
    """Every part of every message with array content, without its ``itemId`` (spec §5.5).

    The history then goes out inline instead of as references to provider-side storage: used by every
    ``prune_to_fit`` rung and by the 404 "Item with id … not found" repair.
    """
    result: list[Message] = []
    for message in messages:
        parts = parts_of(message)
        if not parts or all(item_id_of(p) is None for p in parts):
            result.append(message)
            continue
        result.append(
            _with_parts(message, [p if item_id_of(p) is None else without_item_id(p) for p in parts])
        )
    return result


def drop_orphaned_results(messages: Sequence[Message]) -> list[Message]:
    """Drop tool results/errors whose tool call is gone (spec §5.4).

    All parts kept → the same message; some kept → rebuilt; none kept → the message is dropped.
    String-content messages pass through. A call without its result is kept on purpose (a suspended
    approval looks exactly like that, and dropping it would break resume).
    """
    calls: set[str] = set()
    for message in messages:
        for part in parts_of(message) or ():
            if part.get("type") == "tool-call" and isinstance(part.get("toolCallId"), str):
                calls.add(part["toolCallId"])

    result: list[Message] = []
    for message in messages:
        cleaned = drop_orphaned_results_in(message, calls)
        if cleaned is not None:
            result.append(cleaned)
    return result


def drop_orphaned_results_in(message: Message, calls: AbstractSet[str]) -> Message | None:
    """One message without results whose call is not in ``calls``; ``None`` if none of it is left."""
    parts = parts_of(message)
    if not parts:
        return message
    kept = [p for p in parts if not _is_orphaned_result(p, calls)]
    if len(kept) == len(parts):
        return message
    return _with_parts(message, kept) if kept else None


def _is_orphaned_result(part: Part, calls: AbstractSet[str]) -> bool:
    """A result no call can own: its call is gone, or its id is missing, ``null`` or ``""``."""
    if part.get("type") not in TOOL_RESULT_TYPES:
        return False
    call_id = part.get("toolCallId")
    return not isinstance(call_id, str) or not call_id or call_id not in calls


def prune_preserving_items(
    messages: Sequence[Message],
    reasoning: ReasoningMode = "none",
    tool_calls: str = "none",
    empty_messages: EmptyMode = "remove",
) -> list[Message]:
    """``prune_messages``, then repair the provider-item and call/result pairings it breaks."""
    pruned = prune_messages(messages, reasoning, tool_calls, empty_messages)
    return drop_orphaned_results(detach_orphaned_items(messages, pruned))
