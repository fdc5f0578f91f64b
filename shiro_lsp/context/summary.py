"""Summaries: ``/compact`` (spec §4.3) and the note that stands in for a pruned span (spec §11).

The model calls are the engine's; this module builds their requests, the digest used as the
fallback when a call fails, and the labelled note that carries a summary on the wire. Notes are
never summarised again: a span handed to the summariser excludes earlier notes, and the wire carries
one note, right after the user's goal, whose text merges every span summarised so far.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from shiro_lsp.context.estimate import json_text
from shiro_lsp.context.prune import APPROVAL_TYPES, REASONING_TYPES, detach_provider_items
from shiro_lsp.messages import Message, Part

COMPACT_SYSTEM_PROMPT = (
    "Summarize this coding session for use as the sole context of a fresh session. Keep: the user "
    "goal, files touched with paths, decisions made, commands run and their outcome, and what remains "
    "to be done. Drop pleasantries and full file contents. Write it as notes, not prose."
)
COMPACT_SUMMARY_PREFIX = "Summary of the session so far:\n\n"

SPAN_SUMMARY_SYSTEM_PROMPT = (
    "These lines are the condensed record of an earlier part of a coding session that has been "
    "compacted out of the conversation. Write at most 120 words of notes capturing decisions made, "
    "files touched, commands run and their outcome, and anything still pending. State only what the "
    "lines support; do not invent detail and do not address the reader."
)
PRUNED_SPAN_PREFIX = "Earlier in this session, now compacted away:\n\n"
_NOTE_LABEL = PRUNED_SPAN_PREFIX.rstrip()
# The note is recognised by this key, never by its text: a user may type the label themselves.
# Providers rebuild every message from its role and content, so the key never reaches the wire.
NOTE_MARK_KEY = "shiroNote"
NOTE_MARK = "pruned-span"

DIGEST_LINE_CHARS = 160
MAX_SPAN_SUMMARY_CHARS = 1_200  # one model summary, hard-truncated
MAX_DIGEST_CHARS = 12_000  # the summariser's input
MAX_DIGEST_NOTE_CHARS = 2_400  # a digest standing in for a summary that could not be made
MAX_NOTE_CHARS = 6_000  # the merged note on the wire; the oldest summaries give way first
MIN_SPAN_TO_SUMMARISE = 8  # smaller new spans ride along as digest lines until the batch fills

_WHITESPACE = re.compile(r"\s+")


# --- /compact ----------------------------------------------------------------------------------


COMPACT_INSTRUCTION = (
    "Stop here and write a summary of the conversation above, to stand in for it in a fresh "
    "session. Do not answer or continue it, and do not repeat your last reply. Write short notes "
    "under these headings:\n"
    "Goal: what the user asked for.\n"
    "Task list: each task and whether it is done.\n"
    "Files touched: the path of every file read or changed, and what changed.\n"
    "Decisions: what was decided or found, and the commands run with their outcome.\n"
    "Still to do: what remains."
)
"""The last message of a ``/compact`` request. A small model given the session ending on its own
answer, with the instruction only in the system prompt, continued that answer: asked last, by name,
for what a summary holds, it writes one."""
TASK_LIST_LEAD = "The task list now:"
DIGEST_LEAD = "The conversation so far, one line per message:"


def compact_request(history: Sequence[Message], tasks: str = "") -> tuple[str, list[Message]]:
    """System prompt and messages of the ``/compact`` call (no tools offered): the history, then
    the instruction as the last user message (with the task list, when there is one).

    The history goes inline (no provider item references, which may have expired). It is not
    pruned: if it is over the model's window the engine should ``prune_to_fit`` it first.
    """
    return COMPACT_SYSTEM_PROMPT, [*detach_provider_items(history), _instruction(tasks)]


def compact_retry_request(history: Sequence[Message], tasks: str = "") -> tuple[str, list[Message]]:
    """The second try, when the first summary was not one (``summary_check``): the session as digest
    lines in one user message with the instruction after them, so there is no answer to continue."""
    instruction = _instruction(tasks)["content"]
    text = f"{DIGEST_LEAD}\n{digest_of(history)}\n\n{instruction}"
    return COMPACT_SYSTEM_PROMPT, [{"role": "user", "content": text}]


def _instruction(tasks: str) -> Message:
    listed = f"{TASK_LIST_LEAD}\n{tasks.strip()}\n\n" if tasks.strip() else ""
    return {"role": "user", "content": listed + COMPACT_INSTRUCTION}


def compacted_history(summary_text: str) -> list[Message]:
    """The history that replaces the whole session after ``/compact``: one user message."""
    return [{"role": "user", "content": COMPACT_SUMMARY_PREFIX + summary_text}]


# --- digest --------------------------------------------------------------------------------------


def _render(value: Any) -> str:
    return value if isinstance(value, str) else json_text(value)


def _part_text(part: Part) -> str:
    kind = part.get("type")
    name = part.get("toolName", "tool")
    if kind == "text":
        return str(part.get("text", ""))
    if kind == "tool-call":
        return f"{name} {_render(part.get('input'))}"
    if kind == "tool-result":
        output = part.get("output")
        if isinstance(output, dict) and "value" in output:
            output = output["value"]
        return f"{name}: {_render(output)}"
    if kind == "tool-error":
        return f"{name} failed: {_render(part.get('error', ''))}"
    if kind == "tool-approval-response":
        verdict = "approved" if part.get("approved") else "denied"
        return f"{verdict}{': ' + str(part['reason']) if part.get('reason') else ''}"
    if kind in ("image", "file"):
        return f"[{part.get('filename') or kind}]"
    return ""  # reasoning and approval requests say nothing worth keeping


def one_line_text(message: Message, at_least: int | None = None) -> str:
    """What a message says, on one line: text, tool inputs and outputs; no reasoning.

    With ``at_least``, only a prefix holding at least that many characters is guaranteed (a digest
    line needs 160 characters of a 20 kB tool output, not all of it collapsed).
    """
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = " ".join(t for t in map(_part_text, content) if t)
    else:
        text = ""
    if at_least is None:
        return _WHITESPACE.sub(" ", text).strip()
    window = 4 * at_least + 64
    while True:
        collapsed = _WHITESPACE.sub(" ", text[:window]).strip()
        if window >= len(text) or len(collapsed) > at_least + 1:
            return collapsed
        window *= 4


def digest_line(message: Message) -> str | None:
    text = one_line_text(message, DIGEST_LINE_CHARS)
    if not text:
        return None
    role = "result" if message.get("role") == "tool" else message.get("role", "?")
    clipped = text[:DIGEST_LINE_CHARS] + "..." if len(text) > DIGEST_LINE_CHARS else text
    return f"- ({role}) {clipped}"


def digest_of(span: Iterable[Message], max_chars: int = MAX_DIGEST_CHARS) -> str:
    """One ``- (role) text≤160...`` line per message that says something (tool messages: ``result``).

    Over ``max_chars`` the first and last lines are kept around a ``- (… N messages omitted …)``
    line, since both how the span began and where it ended matter to a handover. Lines are made
    only as far as they are needed, so a huge span costs what its kept lines cost.
    """
    messages = list(span)
    head, complete = _lines_within(messages, range(len(messages)), max_chars)
    if complete:
        return "\n".join(line for _, line in head)
    half = (max_chars - 48) // 2
    head, _ = _lines_within(messages, (p for p, _ in head), half)
    after_head = head[-1][0] + 1 if head else 0
    tail, _ = _lines_within(messages, range(len(messages) - 1, after_head - 1, -1), half)
    before_tail = tail[-1][0] if tail else len(messages)
    marker = f"- (… {before_tail - after_head} messages omitted …)"
    return "\n".join([*(line for _, line in head), marker, *(line for _, line in reversed(tail))])


def _lines_within(
    messages: Sequence[Message], positions: Iterable[int], budget: int
) -> tuple[list[tuple[int, str]], bool]:
    """Digest lines at ``positions``, in that order, while they fit in ``budget``; and whether all did."""
    taken: list[tuple[int, str]] = []
    used = -1
    for position in positions:
        line = digest_line(messages[position])
        if line is None:
            continue
        if used + len(line) + 1 > budget:
            return taken, False
        taken.append((position, line))
        used += len(line) + 1
    return taken, True


# --- the span note -------------------------------------------------------------------------------


def span_summary_request(span: Sequence[Message]) -> tuple[str, list[Message]] | None:
    """System prompt and messages for summarising a pruned span; ``None`` when it says nothing."""
    digest = digest_of(m for m in span if not is_summary_note(m))
    if not digest:
        return None
    return SPAN_SUMMARY_SYSTEM_PROMPT, [{"role": "user", "content": digest}]


def span_note_text(summary: str | None, span: Sequence[Message]) -> str:
    """The text a summarised span leaves behind: the model's summary, or the digest if it failed."""
    text = (summary or "").strip()
    if text:
        return text[:MAX_SPAN_SUMMARY_CHARS]
    return digest_of((m for m in span if not is_summary_note(m)), MAX_DIGEST_NOTE_CHARS)


def summary_note(text: str) -> Message:
    """The labelled user message that carries span summaries on the wire."""
    return {"role": "user", "content": PRUNED_SPAN_PREFIX + text.strip(), NOTE_MARK_KEY: NOTE_MARK}


def is_summary_note(message: Message) -> bool:
    return (
        message.get("role") == "user"
        and message.get(NOTE_MARK_KEY) == NOTE_MARK
        and isinstance(message.get("content"), str)
    )


def note_bodies(messages: Iterable[Message]) -> list[str]:
    """The texts of the summary notes in ``messages``, without their label."""
    return [str(m["content"])[len(_NOTE_LABEL) :].strip() for m in messages if is_summary_note(m)]


def goal_index(messages: Sequence[Message]) -> int | None:
    """Index of the user's goal: the first user message with string content that is not a note."""
    for position, message in enumerate(messages):
        if (
            message.get("role") == "user"
            and isinstance(message.get("content"), str)
            and not is_summary_note(message)
        ):
            return position
    return None


def merge_note_texts(texts: Iterable[str], max_chars: int = MAX_NOTE_CHARS) -> str:
    """Several span summaries as one note text, oldest first; the oldest give way past ``max_chars``."""
    kept: list[str] = []
    used = 0
    for text in reversed([t.strip() for t in texts if t.strip()]):
        if used + len(text) + 2 > max_chars:
            if not kept:
                kept.append(text[-max_chars:])
            break
        kept.append(text)
        used += len(text) + 2
    return "\n\n".join(reversed(kept))


def with_span_summary(messages: Sequence[Message], note_text: str) -> list[Message]:
    """``messages`` with one summary note right after the goal (at the front if there is no goal).

    Earlier notes in ``messages`` are removed, so pass a ``note_text`` that already merges them (see
    ``note_bodies`` and ``merge_note_texts``); an empty ``note_text`` only removes them. Every other
    message keeps its identity.
    """
    kept = [m for m in messages if not is_summary_note(m)]
    if not note_text.strip():
        return kept
    goal = goal_index(kept)
    at = 0 if goal is None else goal + 1
    return [*kept[:at], summary_note(note_text), *kept[at:]]


# --- what the engine keeps per session -----------------------------------------------------------


def _digest_key(value: Any) -> str:
    return hashlib.sha1(json_text(value).encode(), usedforsecurity=False).hexdigest()[:16]


def content_keys(message: Message) -> list[str]:
    """Stable keys for the content of a dropped message, so a span is summarised only once.

    Tool parts are keyed by their call or approval id (a reduced copy of a message then matches its
    original); other content by a hash of its text. Reasoning is not content a summary keeps (nor
    one a span carries on its own), so it has a key only in a message that holds nothing else.
    """
    content = message.get("content")
    if not isinstance(content, list):
        return [f"msg:{_digest_key([message.get('role'), content])}"]
    said = [part for part in content if part.get("type") not in REASONING_TYPES]
    keys: list[str] = []
    for part in said or content:
        kind = part.get("type")
        ident = part.get("approvalId") if kind in APPROVAL_TYPES else part.get("toolCallId")
        if isinstance(ident, str):
            keys.append(f"{kind}:{ident}")
        else:
            keys.append(f"{kind}:{_digest_key({k: v for k, v in part.items() if k != 'providerOptions'})}")
    return keys


@dataclass
class SpanSummaries:
    """Per-session record of pruned spans already summarised, and their summaries.

    Use on every pruned step::

        span = dropped_span(step_messages, pruned)
        batch = summaries.due(span)
        if batch:
            request = span_summary_request(batch)   # None if the batch says nothing
            text = <model call on request, or None on failure>
            summaries.record(batch, text)
        wire = summaries.wire(pruned, span)

    Messages of a span not yet summarised (fewer than ``min_batch``) ride along as digest lines.
    ``to_dict``/``from_dict`` let a session store it.
    """

    notes: list[str] = field(default_factory=list)
    covered: set[str] = field(default_factory=set)
    min_batch: int = MIN_SPAN_TO_SUMMARISE
    # messages and parts (by identity) already found covered: a long span costs O(new messages)
    _seen: dict[int, Any] = field(default_factory=dict, repr=False, compare=False)
    # id -> its content keys, and id -> the message (kept alive so its id stays unique): due, record
    # and note_text ask for the same messages' keys
    _keys: dict[int, list[str]] = field(default_factory=dict, repr=False, compare=False)
    _keyed: dict[int, Message] = field(default_factory=dict, repr=False, compare=False)

    def _keys_of(self, message: Message) -> list[str]:
        key = id(message)
        if self._keyed.get(key) is message:
            return self._keys[key]
        if len(self._keys) > 200_000:
            self._keys.clear()
            self._keyed.clear()
        keys = content_keys(message)
        self._keys[key] = keys
        self._keyed[key] = message
        return keys

    def unsummarised(self, span: Iterable[Message]) -> list[Message]:
        if not self.covered and not self._seen:  # nothing summarised yet: only notes are covered
            return [m for m in span if not is_summary_note(m)]
        return [m for m in span if not self._is_covered(m)]

    def _is_covered(self, message: Message) -> bool:
        seen = self._seen
        if seen.get(id(message)) is message:
            return True
        content = message.get("content")
        if isinstance(content, list) and content and all(seen.get(id(p)) is p for p in content):
            return True  # a reduced copy of covered parts: not remembered, copies are made afresh
        if not (
            is_summary_note(message)
            or (self.covered and all(k in self.covered for k in self._keys_of(message)))
        ):
            return False
        self._seen_as_covered((message,))
        return True

    def due(self, span: Iterable[Message]) -> list[Message]:
        """The unsummarised messages of ``span`` once there are enough to be worth a model call."""
        pending = self.unsummarised(span)
        # digest_of(pending) is empty exactly when no message has a digest line
        says = any(digest_line(m) is not None for m in pending)
        return pending if len(pending) >= self.min_batch and says else []

    def record(self, batch: Sequence[Message], summary: str | None) -> None:
        """Remember ``batch`` as summarised by ``summary`` (``None``/blank: the call failed)."""
        text = span_note_text(summary, batch)
        if text:
            self.notes.append(text)
        keys_of, covered = self._keys_of, self.covered
        for message in batch:
            covered.update(keys_of(message))
        self._seen_as_covered(batch)

    def _seen_as_covered(self, messages: Sequence[Message]) -> None:
        """Remember ``messages`` (and their parts) as covered, as ``_is_covered`` would."""
        seen = self._seen
        if len(seen) > 200_000:
            seen.clear()
        for message in messages:
            seen[id(message)] = message
            content = message.get("content")
            if isinstance(content, list):
                for part in content:
                    seen[id(part)] = part

    def note_text(self, span: Iterable[Message] = ()) -> str:
        pending = digest_of(self.unsummarised(span), MAX_DIGEST_NOTE_CHARS)
        return merge_note_texts([*self.notes, pending])

    def wire(self, pruned: Sequence[Message], span: Iterable[Message] = ()) -> list[Message]:
        """The pruned view with the merged note placed after the goal."""
        return with_span_summary(pruned, self.note_text(span))

    def to_dict(self) -> dict[str, Any]:
        return {"notes": list(self.notes), "covered": sorted(self.covered)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SpanSummaries:
        notes = [str(n) for n in data.get("notes", []) if isinstance(n, str)]
        covered = {str(k) for k in data.get("covered", []) if isinstance(k, str)}
        return cls(notes=notes, covered=covered)
