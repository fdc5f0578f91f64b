"""Whether a model's ``/compact`` summary is one, and the digest that stands in when it is not.

A 1.5B model asked to summarise a session that ends on its own answer wrote that answer again, and
the next turn invented the session's history from it. So a summary is refused when most of its
word sequences are the model's last answer, or when it names none of the key words of the user's
first request (the session's goal). The runtime asks once more; when that fails too, Shiro's own
digest of the session (``digest_summary``: the goal, the task list, the files touched and one line
per message) stands in, and the panel says which it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from shiro_lsp.context.summary import MAX_DIGEST_NOTE_CHARS, digest_of, one_line_text
from shiro_lsp.messages import Message, without_attachments

REPEAT_SHARE = 0.5
"""A summary whose word triples are this much (or more) the last answer's repeats it."""
KEY_LETTERS = 4
"""A word of the goal this long or longer is a key word (unless it is a common one)."""
STEM_LETTERS = 5
"""A key word is found by its first letters ("crashes" in "crash", "answer" in "answered")."""
GOAL_CHARS = 400
FILES_SHOWN = 30

EMPTY = "it was empty"
REPEATED = "it repeated the model's last answer"
NO_GOAL = "it did not name the session's goal"

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_COMMON = frozenset(
    [
        "about",
        "above",
        "after",
        "again",
        "also",
        "another",
        "anything",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "could",
        "does",
        "doing",
        "done",
        "during",
        "each",
        "either",
        "else",
        "even",
        "every",
        "from",
        "have",
        "having",
        "here",
        "into",
        "just",
        "know",
        "like",
        "little",
        "make",
        "many",
        "more",
        "most",
        "much",
        "must",
        "need",
        "only",
        "other",
        "over",
        "please",
        "same",
        "should",
        "show",
        "since",
        "some",
        "something",
        "such",
        "tell",
        "than",
        "that",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "thing",
        "things",
        "this",
        "those",
        "through",
        "under",
        "until",
        "very",
        "want",
        "what",
        "when",
        "where",
        "which",
        "while",
        "will",
        "with",
        "within",
        "without",
        "would",
        "your",
        "yours",
    ]
)


def summary_problem(summary: str, last_answer: str, goal: str) -> str | None:
    """Why ``summary`` is not a summary of the session (None: it is one)."""
    if not summary.strip():
        return EMPTY
    if repeats(summary, last_answer):
        return REPEATED
    keys = goal_words(goal)
    if keys and not names_any(summary, keys):
        return NO_GOAL
    return None


def repeats(summary: str, answer: str) -> bool:
    """Most of the summary's word triples (its words, when it has fewer than three) are the answer's."""
    said, answered = _words(summary), _words(answer)
    if not said or not answered:
        return False
    mine, theirs = _grams(said), set(_grams(answered))
    return sum(gram in theirs for gram in mine) >= REPEAT_SHARE * len(mine)


def goal_words(goal: str) -> set[str]:
    """The key words of the user's request: the longer words that are not common ones."""
    return {w for w in _words(_typed(goal)) if len(w) >= KEY_LETTERS and w not in _COMMON}


def names_any(summary: str, keys: Iterable[str]) -> bool:
    text = summary.lower()
    return any(key[:STEM_LETTERS] in text for key in keys)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _grams(words: list[str]) -> list[tuple[str, ...]]:
    if len(words) < 3:
        return [(w,) for w in words]
    return [tuple(words[i : i + 3]) for i in range(len(words) - 2)]


# --- what the check reads of the session -----------------------------------------------------------


def last_answer(messages: Sequence[Message]) -> str:
    """The text of the model's last message that said something."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            text = one_line_text(message)
            if text:
                return text
    return ""


def files_touched(messages: Iterable[Message]) -> list[str]:
    """The paths the tool calls named, first use first."""
    seen: dict[str, None] = {}
    for message in messages:
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        for part in content:
            given = part.get("input") if part.get("type") == "tool-call" else None
            if not isinstance(given, dict):
                continue
            for key in ("path", "from", "to"):
                value = given.get(key)
                if isinstance(value, str) and value.strip():
                    seen.setdefault(value.strip(), None)
    return list(seen)


def digest_summary(view: Sequence[Message], goal: str, tasks: str) -> str:
    """Shiro's own summary of ``view``, made without the model: the goal in the user's words, the task
    list, the files the tool calls named, then one line per message (``digest_of``)."""
    request = " ".join(_typed(goal).split())
    lines = [f"Goal: {request[:GOAL_CHARS]}{'…' if len(request) > GOAL_CHARS else ''}"] if request else []
    if tasks.strip():
        lines.append(f"Task list:\n{tasks.strip()}")
    files = files_touched(view)
    if files:
        more = f" and {len(files) - FILES_SHOWN} more" if len(files) > FILES_SHOWN else ""
        lines.append(f"Files touched: {', '.join(files[:FILES_SHOWN])}{more}")
    digest = digest_of(view, MAX_DIGEST_NOTE_CHARS)
    if digest:
        lines.append(f"What happened, one line per message:\n{digest}")
    return "\n\n".join(lines)


def _typed(goal: str) -> str:
    """What the user typed in ``goal`` (attached documents left out); the whole text when it is nothing else."""
    return without_attachments(goal).strip() or goal
