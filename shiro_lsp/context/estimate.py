"""Token estimates (spec §4.1): ``round(len(JSON.stringify(messages)) / 4)``.

The JSON form is JavaScript's ``JSON.stringify`` for the values a message holds: compact separators
(``,`` and ``:``), non-ASCII characters kept as they are, keys in insertion order. Python's
``json.dumps(..., separators=(",", ":"), ensure_ascii=False)`` produces the same text for strings,
integers, booleans, null, lists and dicts. Two known, harmless differences: a float such as ``1.0``
renders as ``1.0`` (JS ``1``), and a character outside the Basic Multilingual Plane counts as one
character here where JavaScript counts two UTF-16 units. ``round`` is JavaScript's ``Math.round``
(halves round up), not Python's banker's rounding.

The JSON of a list is ``"[" + ",".join(items) + "]"``, so the length of a list's JSON is the sum of
its items' lengths plus the brackets and commas. ``TokenEstimator`` uses that to keep per-message
lengths and re-serialise only the messages that changed.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar, cast

from shiro_lsp.messages import Message

CHARS_PER_TOKEN = 4
T = TypeVar("T")


# One encoder for every call: ``json.dumps`` with options builds a new one each time, which costs
# as much as encoding a typical message.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
# ``JSONEncoder.encode`` itself builds the C encoder (and a closure) on every call and checks every
# container for cycles; messages are JSON data (no cycles), so the estimator keeps one C encoder
# without that check. It is the very encoder ``encode`` uses, so the text is the same.
_C_MAKE_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)  # None without the C accelerator
_C_ENCODER: Callable[[Any, int], list[str]] | None = (
    None
    if _C_MAKE_ENCODER is None
    else _C_MAKE_ENCODER(
        None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", False, False, True
    )
)


def json_text(value: Any) -> str:
    """``JSON.stringify(value)`` as far as message values go (see the module docstring)."""
    if _C_ENCODER is None:
        return _ENCODER.encode(value)
    return "".join(_C_ENCODER(value, 0))


def tokens_for_chars(chars: int) -> int:
    """``Math.round(chars / 4)`` for a non-negative character count."""
    return (chars + CHARS_PER_TOKEN // 2) // CHARS_PER_TOKEN


def list_chars(item_chars: Iterable[int], count: int) -> int:
    """Length of ``"[" + ",".join(items) + "]"`` given each item's length and the item count."""
    return sum(item_chars) + 2 + max(count - 1, 0)


def estimate_tokens(messages: Sequence[Message]) -> int:
    """Estimated tokens of a message list: the length of its JSON divided by four."""
    return tokens_for_chars(len(json_text(list(messages))))


def estimate_text(text: str) -> int:
    """Estimated tokens of a plain string sent as is (instructions, a note): ``len / 4``."""
    return tokens_for_chars(len(text))


def message_chars(message: Message) -> int:
    """Length of one message's JSON."""
    return len(json_text(message))


class TokenEstimator:
    """``estimate_tokens`` that re-serialises only what changed since the last call.

    ``estimate(messages)`` tracks one list (a session's history): a message object still at the
    same position is not serialised again; a replaced message is; growth and truncation are handled.
    ``measure(messages)`` (also ``estimator(messages)``) estimates any other list (a pruned view)
    without disturbing the tracked one: messages of the tracked list are looked up by identity,
    others are serialised once and remembered while the estimator holds them (bounded).

    Both return exactly ``estimate_tokens(messages)``, provided messages are not mutated in place
    (the context layer never mutates; it rebuilds a changed message as a new object).

    ``derive(message, transform)`` remembers per-message work of the pruning ladder, so a step that
    prunes the same history again rebuilds (and re-serialises) only the messages that are new.
    """

    def __init__(self) -> None:
        self._tracked: list[Message] = []
        self._chars: list[int] = []
        self._total = 0
        # Per message object, by id: the object (kept alive so its id stays unique) and the length
        # of its JSON. Parallel dicts rather than one of tuples: a resumed session's first estimate
        # then allocates no container per message, which would wake the cyclic GC over the history.
        self._known_objects: dict[int, Message] = {}
        self._known_chars: dict[int, int] = {}
        # Per message object, by id: the object, the transform and its result (parallel, as above).
        self._derived_objects: dict[int, Message] = {}
        self._derived_by: dict[int, Callable[[Message], Any]] = {}
        self._derived: dict[int, Any] = {}
        # How many leading tracked messages are the objects they were at the last take_unchanged().
        self._unchanged = 0
        self.memo: object = None
        """Where the pruning ladder keeps its per-history state between steps (see ``take_unchanged``)."""

    def take_unchanged(self) -> int:
        """How many leading messages of the tracked list are the same objects as when this was last
        asked (0 the first time), and start counting again: what a per-history memo may keep."""
        unchanged, self._unchanged = self._unchanged, len(self._tracked)
        return unchanged

    def derive(self, message: Message, transform: Callable[[Message], T]) -> T:
        """``transform(message)``, computed once per message object (``transform`` must be pure)."""
        key = id(message)
        if self._derived_by.get(key) is transform:
            return cast(T, self._derived[key])
        if len(self._derived) > self._bound():
            tracked = {id(m) for m in self._tracked}
            self._derived_objects = {k: m for k, m in self._derived_objects.items() if k in tracked}
            self._derived_by = {k: f for k, f in self._derived_by.items() if k in tracked}
            self._derived = {k: r for k, r in self._derived.items() if k in tracked}
        result = transform(message)
        self._derived_objects[key] = message
        self._derived_by[key] = transform
        self._derived[key] = result
        return result

    def _bound(self) -> int:
        return 2 * len(self._tracked) + 4096

    def estimate(self, messages: Sequence[Message]) -> int:
        """Estimate ``messages`` and make it the tracked list (O(n) identity checks + O(changed))."""
        return tokens_for_chars(self._track(messages))

    def __call__(self, messages: Sequence[Message]) -> int:
        return self.measure(messages)

    def measure(self, messages: Sequence[Message]) -> int:
        """Estimate any list, reusing known lengths; the tracked list stays as it was."""
        return tokens_for_chars(list_chars(map(self.chars_of, messages), len(messages)))

    def chars_of(self, message: Message) -> int:
        """Length of one message's JSON, serialised only the first time this object is seen."""
        key = id(message)
        known = self._known_chars.get(key)
        if known is not None:
            return known
        chars = message_chars(message)
        if len(self._known_chars) > 2 * self._bound():
            self._forget_unused()
        self._known_objects[key] = message
        self._known_chars[key] = chars
        return chars

    def _forget_unused(self) -> None:
        """Keep the lengths of tracked messages only (rare: after thousands of pruned views)."""
        self._known_objects = {id(m): m for m in self._tracked}
        self._known_chars = {id(m): c for m, c in zip(self._tracked, self._chars, strict=True)}

    def _track(self, messages: Sequence[Message]) -> int:
        tracked, chars = self._tracked, self._chars
        common = min(len(tracked), len(messages))
        self._unchanged = min(self._unchanged, common)
        for position in range(common):
            message = messages[position]
            if tracked[position] is not message:
                self._unchanged = min(self._unchanged, position)
                size = self.chars_of(message)
                self._total += size - chars[position]
                chars[position] = size
                tracked[position] = message
        if len(tracked) > len(messages):
            self._total -= sum(chars[len(messages) :])
            del tracked[len(messages) :], chars[len(messages) :]
        for message in messages[common:]:
            size = self.chars_of(message)
            tracked.append(message)
            chars.append(size)
            self._total += size
        return list_chars((self._total,), len(tracked))
