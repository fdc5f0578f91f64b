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
from typing import Any, TypeGuard

from shiro_lsp.context.estimate import (
    CHARS_PER_TOKEN,
    TokenEstimator,
    estimate_tokens,
    list_chars,
    tokens_for_chars,
)
from shiro_lsp.context.prune import (
    APPROVAL_TYPES,
    CALL_ID_TYPES,
    PRUNABLE_TOOL_TYPES,
    REASONING_TYPES,
    drop_orphaned_results_in,
    parts_of,
    without_item_id,
)
from shiro_lsp.context.summary import goal_index, is_summary_note
from shiro_lsp.messages import TOOL_RESULT_TYPES, Message, Part, item_id_of

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
    schemas): the threshold applies to the whole request. Pass the session's ``TokenEstimator`` as
    ``estimate``: it remembers each message's per-rung forms and their lengths, so pruning the same
    history again costs O(new messages) in serialisation and a light pass per rung (``messages``
    becomes the list it tracks, as after ``estimator.estimate(messages)``).
    """
    ladder = _Ladder(messages, estimate)
    view: list[Message] = []
    # The most characters of JSON that fit: tokens_for_chars(c) + fixed_overhead <= threshold.
    limit = CHARS_PER_TOKEN * (threshold - fixed_overhead) + CHARS_PER_TOKEN // 2 - 1
    for keep in (None, *KEEP_LADDER):
        if keep is None and ladder.rung0_bound > limit:
            continue  # the lengths known already say rung 0 cannot fit: no need to build it
        last = keep == KEEP_LADDER[-1]
        view, chars = ladder.rung(keep, None if last else limit)
        tokens = estimate(view) if chars is None else tokens_for_chars(chars)
        if tokens + fixed_overhead <= threshold:
            return view
    return view


def rung_view(messages: Sequence[Message], keep: int | None) -> list[Message]:
    """One rung of the ladder: ``keep=None`` is rung 0 (all tool content), else the last ``keep``."""
    return _Ladder(messages, estimate_tokens).rung(keep)[0]


_NO_IDS: frozenset[str] = frozenset()


class _Entry:
    """What every rung needs to know about one message, worked out once per message object."""

    __slots__ = (
        "_said",
        "_said_known",
        "approval_calls",
        "approvals",
        "bare",
        "bare_chars",
        "base",
        "base_chars",
        "base_dropped",
        "calls",
        "message",
        "prunable",
        "results",
        "tool_ids",
    )

    def __init__(self, message: Message) -> None:
        self.message = message
        self._said: _Said | None = None
        self._said_known = False
        self.base_chars = -1  # lengths of JSON, measured on first use
        self.bare_chars = -1
        self.calls = self.results = self.tool_ids = self.approvals = _NO_IDS
        self.approval_calls: tuple[tuple[str, str], ...] = ()
        content = message.get("content")
        self.bare: Message | None
        if not isinstance(content, list):
            self.base = self.bare = message
            self.prunable = False
            self.base_dropped = _droppable_empty(message)
            return
        role = message.get("role")
        assistant = role == "assistant"
        self.prunable = prunable = assistant or role == "tool"
        # One pass over the parts (this runs for every message of a resumed session): the base form,
        # the message as every rung sends it (no reasoning, no provider item ids: the same as
        # ``detach_provider_items(prune_messages([message], reasoning="all", empty_messages="keep"))``),
        # and what the rungs need to know of its parts.
        parts: list[Part] = []
        changed = False
        calls: set[str] = set()
        results: set[str] = set()
        tool_ids: set[str] = set()
        approvals: set[str] = set()
        approval_calls: list[tuple[str, str]] = []
        rest: list[Part] = []
        for p in content:
            kind = p.get("type")
            if assistant and kind in REASONING_TYPES:
                changed = True
                continue
            if "providerOptions" in p and item_id_of(p) is not None:
                p = without_item_id(p)
                changed = True
            parts.append(p)
            call_id = p.get("toolCallId")
            if kind == "tool-call":
                if _is_id(call_id):
                    calls.add(call_id)
            elif kind in TOOL_RESULT_TYPES:
                # A result without a usable call id is recorded as "", which no call has: every rung drops it.
                results.add(call_id if _is_id(call_id) else "")
            if not (prunable and kind in PRUNABLE_TOOL_TYPES):
                rest.append(p)
                continue
            if kind in CALL_ID_TYPES:
                if _is_id(call_id):
                    tool_ids.add(call_id)
            else:  # an approval part
                approval_id = p.get("approvalId")
                if _is_id(approval_id):
                    approvals.add(approval_id)
                    if kind == "tool-approval-request" and _is_id(call_id):
                        approval_calls.append((approval_id, call_id))
        self.base = base = {**message, "content": parts} if changed else message
        # One frozenset where two are equal (a call's message: calls = tool ids; a result's: results
        # = tool ids): fewer containers for the cyclic GC to count and walk.
        if calls:
            self.calls = frozenset(calls)
        if results:
            self.results = frozenset(results)
        if tool_ids:
            self.tool_ids = (
                self.calls
                if tool_ids == calls
                else self.results
                if tool_ids == results
                else frozenset(tool_ids)
            )
        if approvals:
            self.approvals = frozenset(approvals)
            self.approval_calls = tuple(approval_calls)
        self.base_dropped = not parts
        # The message once a rung strips all its tool parts; None when nothing of it would be sent.
        self.bare = base
        if len(rest) < len(parts):
            self.bare = {**base, "content": rest} if rest else None

    @property
    def said(self) -> _Said | None:
        """The original's parts that say something, with their keys (see ``dropped_span``).

        Worked out when first asked: only the messages a prune dropped need it."""
        if not self._said_known:
            self._said, self._said_known = _said(self.message), True
        return self._said


def _is_id(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and value != ""


class _Ladder:
    """The rungs of one history, computed from per-message entries (remembered by an estimator)."""

    def __init__(self, messages: Sequence[Message], estimate: Estimate) -> None:
        self.estimator = estimate if isinstance(estimate, TokenEstimator) else None
        self.all_calls: set[str] | frozenset[str]
        self.rung0_bound = -1  # a lower bound of rung 0's length (-1: unknown)
        if self.estimator is not None:
            self.estimator.estimate(messages)  # tracked, so its memo keeps room for the whole history
            memo = _History.of(self.estimator, messages)
            self.entries, self.all_calls, self.rung0_bound = memo.entries, memo.all_calls, memo.rung0_bound()
        else:
            self.entries = [_Entry(m) for m in messages]
            self.all_calls = frozenset().union(*(e.calls for e in self.entries if e.calls))
        goal_at = goal_index(messages)
        self.goal = messages[goal_at] if goal_at is not None else None
        self.latest_result = next(
            (i for e in reversed(self.entries) for i in sorted(e.results) if i in self.all_calls), None
        )

    def rung(self, keep: int | None, limit: int | None = None) -> tuple[list[Message], int | None]:
        """The rung's messages, and the length of their JSON when an estimator is at hand.

        With ``limit``, a rung that is surely longer than ``limit`` characters (the lengths already
        known say so) is returned with a lower bound of its length above ``limit``, without
        serialising the messages not yet measured: a cold rung that cannot fit costs no encoding.
        """
        chosen, calls = self._tool_pruned(keep)
        sized = self.estimator is not None
        view: list[Message] = []
        chars = 0
        unmeasured: list[tuple[_Entry | None, Message]] = []  # (entry whose base or bare it is, message)
        for message, entry in zip(chosen, self.entries, strict=True):
            if message is None:
                continue
            if message is entry.base:
                if entry.results and not calls.issuperset(entry.results):
                    message = self._fresh(drop_orphaned_results_in(message, calls))
                elif entry.base_dropped:
                    continue
                else:
                    if entry.base_chars >= 0:
                        chars += entry.base_chars
                    elif sized:
                        unmeasured.append((entry, message))
                    view.append(message)
                    continue
            elif message is entry.bare:
                if entry.bare_chars >= 0:
                    chars += entry.bare_chars
                elif sized:
                    unmeasured.append((entry, message))
                view.append(message)
                continue
            else:
                message = self._fresh(drop_orphaned_results_in(message, calls))
            if message is None:
                continue
            if sized:
                unmeasured.append((None, message))
            view.append(message)
        # User prompts are never dropped, so this cannot fire today; it keeps the goal guarantee
        # (A@97834e1 re-prepends the head) should a rung ever drop user content.
        if self.goal is not None and not any(m is self.goal for m in view):
            view.insert(0, self.goal)
            if sized:
                unmeasured.append((None, self.goal))
        if not sized:
            return view, None
        if limit is not None and list_chars((chars,), len(view)) > limit:
            return view, list_chars((chars,), len(view))  # a lower bound, already too long
        for owner, message in unmeasured:
            size = self._chars(message)
            if owner is not None:
                if message is owner.base:
                    owner.base_chars = size
                else:
                    owner.bare_chars = size
            chars += size
        return view, list_chars((chars,), len(view))

    def _fresh(self, message: Message | None) -> Message | None:
        return None if message is None or _droppable_empty(message) else message

    def _chars(self, message: Message) -> int:
        assert self.estimator is not None
        return self.estimator.chars_of(message)

    def _tool_pruned(self, keep: int | None) -> tuple[list[Message | None], set[str] | frozenset[str]]:
        """Each message with tool content outside the last ``keep`` pruned, and the calls left."""
        entries = self.entries
        if keep is None:
            return [e.base for e in entries], self.all_calls
        start = max(len(entries) - keep, 0)
        kept_calls, kept_approvals = self._kept_ids(entries[start:])
        if self.latest_result is not None:
            kept_calls.add(self.latest_result)  # the latest tool result survives every rung
        chosen: list[Message | None] = []
        calls: set[str] = set()
        for entry in entries[:start]:
            if not entry.prunable or entry.bare is entry.base:
                chosen.append(entry.base)
                calls.update(entry.calls)
            elif kept_calls.isdisjoint(entry.tool_ids) and kept_approvals.isdisjoint(entry.approvals):
                chosen.append(entry.bare)
            else:
                chosen.append(_keep_tool_parts(entry.base, kept_calls, kept_approvals))
                calls.update(entry.calls & kept_calls)
        for entry in entries[start:]:
            chosen.append(entry.base)
            calls.update(entry.calls)
        return chosen, calls

    def _kept_ids(self, window: Sequence[_Entry]) -> tuple[set[str], set[str]]:
        kept_calls = {i for e in window for i in e.tool_ids}
        kept_approvals = {a for e in window for a in e.approvals}
        if kept_approvals:
            kept_calls |= {call for e in self.entries for a, call in e.approval_calls if a in kept_approvals}
        return kept_calls, kept_approvals


class _History:
    """The ladder's state for the history an estimator tracks, kept between steps (``estimator.memo``).

    A step that appended messages costs O(new messages) here: their entries, their calls, and the
    lower bound of rung 0's length (the lengths of the messages rung 0 sends as they are); so does
    one that replaced or dropped trailing messages without tool calls (a step's new prompt). A
    history changed otherwise keeps the entries of its unchanged head and rebuilds the rest.
    """

    def __init__(self) -> None:
        self.entries: list[_Entry] = []
        self.all_calls: set[str] = set()
        # (position, entry) of entries with a result whose call is not (yet) in all_calls
        self._pending: list[tuple[int, _Entry]] = []
        self._clean = 0  # entries rung 0 sends as they are (their base form) ...
        self._clean_chars = 0  # ... and the lengths of those already known
        self._weights: list[int] = []  # per entry: the length it added to _clean_chars (-1: not counted)

    @classmethod
    def of(cls, estimator: TokenEstimator, messages: Sequence[Message]) -> _History:
        """The memo for ``messages``, which the estimator has just tracked."""
        memo = estimator.memo
        unchanged = estimator.take_unchanged()
        if not isinstance(memo, _History):
            memo = estimator.memo = cls()
            unchanged = 0
        if unchanged < len(memo.entries) and not memo._drop_tail(unchanged):
            kept = memo.entries[:unchanged]  # changed in the middle: keep the unchanged head's entries
            memo = estimator.memo = cls()
            memo._extend(estimator, kept)
        memo._extend(estimator, [estimator.derive(m, _Entry) for m in messages[len(memo.entries) :]])
        return memo

    def _drop_tail(self, keep: int) -> bool:
        """Forget the entries after the first ``keep``, if none of them has a tool call."""
        tail = self.entries[keep:]
        if any(entry.calls for entry in tail):
            return False  # results elsewhere may lose their calls: rebuild
        for entry, weight in zip(tail, self._weights[keep:], strict=True):
            if weight >= 0:
                self._clean -= 1
                self._clean_chars -= weight
            elif entry.results:
                self._pending = [(at, e) for at, e in self._pending if e is not entry]
        del self.entries[keep:], self._weights[keep:]
        return True

    def _extend(self, estimator: TokenEstimator, entries: list[_Entry]) -> None:
        calls = self.all_calls
        grew = False
        for entry in entries:
            self.entries.append(entry)
            if entry.calls:
                calls |= entry.calls
                grew = True
            if entry.base is entry.message and entry.base_chars < 0:
                entry.base_chars = estimator.chars_of(entry.message)  # known: the tracked length
            self._weights.append(self._sort(len(self.entries) - 1, entry))
        if grew and self._pending:  # a call that came after its result (rare)
            pending, self._pending = self._pending, []
            for position, entry in pending:
                self._weights[position] = self._sort(position, entry)

    def _sort(self, position: int, entry: _Entry) -> int:
        """Count an entry rung 0 sends as it is (its weight: the length counted), or hold back one
        whose results lack their calls (-1); an entry rung 0 drops counts for nothing (-1)."""
        if entry.results and not self.all_calls.issuperset(entry.results):
            if "" not in entry.results:  # a result with no call id never gets a call
                self._pending.append((position, entry))
            return -1
        if entry.base_dropped:
            return -1
        self._clean += 1
        weight = max(entry.base_chars, 0)
        self._clean_chars += weight
        return weight

    def rung0_bound(self) -> int:
        """A lower bound of the length of rung 0's JSON (what it sends of the messages counted)."""
        return list_chars((self._clean_chars,), self._clean)


def _keep_tool_parts(message: Message, kept_calls: set[str], kept_approvals: set[str]) -> Message:
    def keeps(part: Part) -> bool:
        kind = part.get("type")
        if kind not in PRUNABLE_TOOL_TYPES:
            return True
        if kind in CALL_ID_TYPES:
            return part.get("toolCallId") in kept_calls
        return part.get("approvalId") in kept_approvals

    return {**message, "content": [p for p in message["content"] if keeps(p)]}


def _droppable_empty(message: Message) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        return not content and message.get("role") != "user"
    return isinstance(content, list) and not content


# --- what a prune dropped ----------------------------------------------------------------------


PartKey = str | tuple[Any, ...]
# A message's parts that say something (all but reasoning), and their keys, in the same order.
_Said = tuple[tuple[Part, ...], tuple[PartKey, ...]]


def _part_key(part: Part) -> PartKey:
    """Identifies a part across the copies pruning makes (copies are shallow, so values are shared).

    A tool part is known by its kind and call or approval id (a string: no container to allocate
    for each of a long history's parts); any other part by its kind and its values' identities.
    """
    kind = part.get("type")
    ident = part.get("toolCallId") if kind in CALL_ID_TYPES else part.get("approvalId")
    if isinstance(ident, str) and (kind in CALL_ID_TYPES or kind in APPROVAL_TYPES):
        return f"{kind}\x00{ident}"
    return (kind, *((key, id(value)) for key, value in part.items() if key != "providerOptions"))


def dropped_span(
    before: Sequence[Message], after: Sequence[Message], memo: TokenEstimator | None = None
) -> list[Message]:
    """What ``after`` lost of ``before``, worth summarising, oldest first.

    A message that lost all its content but reasoning is returned as is (the same object); one that
    lost only some (say, its tool call but not its text) is returned as a copy holding just the lost
    parts, so kept text is not summarised twice. Reasoning and provider item ids are not content
    worth a summary, and summary notes are never returned (a summary is never nested in a summary).
    Pass the ``TokenEstimator`` that ``prune_to_fit`` used as ``memo`` to reuse its per-message work.
    """
    surviving_messages = {id(m) for m in after}
    surviving_parts: set[PartKey] = set()
    surviving_strings: set[tuple[Any, int]] = set()
    for message in after:
        content = message.get("content")
        if isinstance(content, list):
            surviving_parts.update(map(_part_key, content))
        else:
            surviving_strings.add((message.get("role"), id(content)))

    span: list[Message] = []
    for message in before:
        if id(message) in surviving_messages:
            continue
        said = memo.derive(message, _Entry).said if memo is not None else _said(message)
        if said is None:
            content = message.get("content")
            if (message.get("role"), id(content)) not in surviving_strings and not is_summary_note(message):
                span.append(message)
            continue
        parts, keys = said
        lost = [part for part, key in zip(parts, keys, strict=True) if key not in surviving_parts]
        if lost:
            span.append(message if len(lost) == len(parts) else {**message, "content": lost})
    return span


def _said(message: Message) -> _Said | None:
    parts = parts_of(message)
    if parts is None:
        return None
    said = tuple(p for p in parts if p.get("type") not in REASONING_TYPES)
    return said, tuple(map(_part_key, said))
