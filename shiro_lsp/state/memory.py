"""Project memory (spec §1, seed "shiro-neko memory"): notes that outlive a session.

Every operation re-reads the file under its lock and writes it back atomically, so two servers
on one project merge their writes instead of the last writer winning (the reference's bug).

Recall hit counts are the exception: a recall is a read, so its hits are kept in memory and
written by a flush at most ``HIT_FLUSH_SECONDS`` later, on any other write, and at exit. A clean
exit loses none; a SIGKILL loses the hits of at most the last ``HIT_FLUSH_SECONDS``.
"""

from __future__ import annotations

import asyncio
import atexit
import heapq
import logging
import re
import threading
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, get_args

from shiro_lsp.clock import now_iso
from shiro_lsp.errors import BadParams, ShiroError
from shiro_lsp.ids import new_id
from shiro_lsp.state.jsonstore import JsonArrayFile, Reporter, log_reporter

# The kinds of memory: their one home. The wire (server/protocol.py), the MCP server, the remember
# tool and the compaction prompt use these; the extension's list is vscode-client/src/memory/memoryEdit.ts.
Kind = Literal["fact", "decision", "gotcha", "command"]
KINDS: tuple[Kind, ...] = get_args(Kind)
KIND_MEANINGS: dict[Kind, str] = {
    "fact": "how it is",
    "decision": "what was chosen and why",
    "gotcha": "a trap",
    "command": "an invocation that works",
}
KINDS_DESCRIBED = ". ".join(f"{kind}: {KIND_MEANINGS[kind]}" for kind in KINDS)

MAX_ENTRIES = 300
MAX_TEXT = 400
BOOT_ENTRIES = 20
SEARCH_HITS = 15
SUMMARISE_AT = 60
HIT_FLUSH_SECONDS = 1.0

log = logging.getLogger(__name__)

BOOT_PREAMBLE = (
    "What you learned about this project in earlier sessions. Trust it, but verify anything\n"
    "that contradicts what you can see in the code now:"
)
COMPACT_SYSTEM_PROMPT = (
    "You are compacting an agent's notes about one codebase. Merge duplicates and near-duplicates, "
    "drop anything that is no longer useful or was only true of one past task, and keep the rest "
    "verbatim where you can. Output one note per line, each prefixed with its kind in brackets: "
    f"{', '.join(f'[{kind}]' for kind in KINDS[:-1])}, or [{KINDS[-1]}]. "
    "No preamble, no numbering, no blank lines."
)
DISABLED_TEXT = "memory is disabled (--no-memory)"
_COMPACT_LINE = re.compile(rf"^\s*\[({'|'.join(KINDS)})\]\s*(.+?)\s*$", re.IGNORECASE)

# (system prompt, user prompt) -> the model's text. Filled in by the agent layer.
Summarizer = Callable[[str, str], Awaitable[str]]


@dataclass
class Entry:
    id: str
    kind: str
    text: str
    createdAt: str
    hits: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "text": self.text,
            "createdAt": self.createdAt,
            "hits": self.hits,
        }

    @property
    def line(self) -> str:
        return f"({self.kind}) {self.text}"


@dataclass(frozen=True)
class RememberResult:
    text: str
    duplicate: bool
    entry: Entry | None
    truncated: bool


@dataclass(frozen=True)
class RecallResult:
    entries: list[Entry]
    text: str


@dataclass(frozen=True)
class ForgetResult:
    removed: int
    text: str


@dataclass(frozen=True)
class CompactResult:
    before: int
    after: int
    text: str


def is_entry(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("id"), str)
        and isinstance(value.get("text"), str)
        and isinstance(value.get("createdAt"), str)
        and isinstance(value.get("hits"), int | float)
        and not isinstance(value.get("hits"), bool)
        and value.get("kind") in KINDS
    )


def _entry(value: dict[str, Any]) -> Entry:
    return Entry(value["id"], value["kind"], value["text"], value["createdAt"], int(value["hits"]))


def clean_text(text: str) -> tuple[str, bool]:
    """Trim, then cut to the cap. Returns the text and whether it was cut."""
    trimmed = text.strip()
    return trimmed[:MAX_TEXT], len(trimmed) > MAX_TEXT


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise BadParams(f'Unknown memory kind "{kind}". Use one of: {", ".join(KINDS)}.')
    return kind


def _cap(entries: list[dict[str, Any]]) -> None:
    """Keep at most MAX_ENTRIES, dropping the least used, oldest entries first.

    The reference dropped the oldest array elements, which after a compaction are the recalled
    ones (§12.15): the opposite of what hits are meant to protect.
    """
    excess = len(entries) - MAX_ENTRIES
    if excess <= 0:
        return
    drop = set(
        heapq.nsmallest(
            excess, range(len(entries)), key=lambda i: (entries[i]["hits"], entries[i]["createdAt"], i)
        )
    )
    entries[:] = [e for i, e in enumerate(entries) if i not in drop]


class _HitBuffer:
    """Recall hits of one memory file not yet on disk, shared by every ``ProjectMemory`` of that
    file in this process (so a second store object sees the first one's recalls)."""

    _by_path: ClassVar[dict[Path, _HitBuffer]] = {}
    _registry_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, file: JsonArrayFile) -> None:
        self.file = file
        self.pending: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.timer: threading.Timer | None = None
        atexit.register(self.flush)

    @classmethod
    def of(cls, file: JsonArrayFile) -> _HitBuffer:
        key = file.path.absolute()
        with cls._registry_lock:
            if key not in cls._by_path:
                cls._by_path[key] = cls(file)
            return cls._by_path[key]

    def counts(self) -> dict[str, int]:
        """The pending hits by entry id (a copy)."""
        with self.lock:
            return dict(self.pending)

    def overlay(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``entries`` (fresh copies) with the pending hits added, the buffer left as it is."""
        pending = self.counts()
        for entry in entries:
            entry["hits"] = int(entry["hits"]) + pending.get(entry["id"], 0)
        return entries

    def take_into(self, entries: list[dict[str, Any]]) -> None:
        """Move the pending hits into ``entries`` that the caller saves under the file lock."""
        with self.lock:
            pending, self.pending = self.pending, Counter()
        for entry in entries:
            entry["hits"] = int(entry["hits"]) + pending.get(entry["id"], 0)

    def add(self, ids: list[str]) -> None:
        with self.lock:
            self.pending.update(ids)
            if self.timer is None:
                self.timer = threading.Timer(HIT_FLUSH_SECONDS, self.flush)
                self.timer.daemon = True
                self.timer.start()

    def flush(self) -> None:
        with self.lock:
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            if not self.pending:
                return
        try:
            with self.file.locked_items() as entries:
                self.take_into(entries)
                self.file.save(entries)
        except (
            OSError,
            ShiroError,
        ) as error:  # hits are a ranking hint; they stay pending for the next write
            log.warning("project memory: recall counts not saved yet: %s", error)


class ProjectMemory:
    def __init__(self, path: Path, reporter: Reporter = log_reporter) -> None:
        self.file = JsonArrayFile(
            path, label="project memory", is_valid=is_entry, reporter=reporter, watch=True
        )
        self._hits = _HitBuffer.of(self.file)
        # The entries' texts in lower case, for the view they were made from (recall matches on them).
        self._lowered: tuple[list[dict[str, Any]], list[str]] = ([], [])

    def flush_hits(self) -> None:
        """Write the pending recall hits now (also done by a timer, by every write and at exit)."""
        self._hits.flush()

    @property
    def path(self) -> Path:
        return self.file.path

    def entries(self) -> list[Entry]:
        return [_entry(e) for e in self._hits.overlay(self.file.load())]

    def remember(self, kind: str, text: str) -> RememberResult:
        check_kind(kind)
        clean, truncated = clean_text(text)
        if not clean:
            raise BadParams("memory text is empty")
        with self.file.locked_items() as entries:
            if any(e["text"] == clean for e in entries):
                return RememberResult(f"Already recorded: {clean}", True, None, truncated)
            entry = Entry(new_id(), kind, clean, now_iso(), 0)
            entries.append(entry.to_json())
            self._hits.take_into(entries)
            _cap(entries)
            self.file.save(entries)
            count = len(entries)
        if (view := self.file.current_view()) is not None:
            self._texts(view)  # here in the writer's thread, not in the next recall on the loop
        reply = f"Remembered as {kind} ({count} stored): {clean}"
        if truncated:
            reply += f" (cut to {MAX_TEXT} characters)"
        return RememberResult(reply, False, entry, truncated)

    def recall(self, query: str) -> RecallResult:
        """Search (a read: the hits are counted in memory and written within a second)."""
        return self._recall_in(self.file.view(), query)

    def recall_now(self, query: str) -> RecallResult | None:
        """``recall`` without I/O, for the event loop, when the file is known unchanged since it was
        last read (an inotify watch, see ``JsonArrayFile.current_view``); None: call ``recall`` in
        a thread."""
        items = self.file.current_view()
        return None if items is None else self._recall_in(items, query)

    def _recall_in(self, items: list[dict[str, Any]], query: str) -> RecallResult:
        terms = query.lower().split()
        if not terms:
            raise BadParams("query is empty")
        # Read-only: the store as last read (no copy), with the hits not yet on disk added to the found.
        pairs = list(zip(items, self._texts(items), strict=True))
        for term in terms:  # one pass a term over what is left (no generator per entry)
            pairs = [pair for pair in pairs if term in pair[1]]
        matches = [entry for entry, _ in pairs]
        pending = self._hits.counts()
        if matches:
            self._hits.add([e["id"] for e in matches])
        found = [
            _entry({**e, "hits": int(e["hits"]) + pending.get(e["id"], 0) + 1})
            for e in reversed(matches[-SEARCH_HITS:])
        ]
        if not found:
            return RecallResult([], f'Nothing recorded about "{query}".')
        return RecallResult(found, "\n".join(e.line for e in found))

    def _texts(self, items: list[dict[str, Any]]) -> list[str]:
        """The texts of ``items`` (a view) in lower case, made once per view."""
        view, lowered = self._lowered
        if view is not items:
            lowered = [e["text"].lower() for e in items]
            self._lowered = (items, lowered)
        return lowered

    def forget(self, text: str) -> ForgetResult:
        needle = text.strip().lower()
        if not needle:
            raise BadParams(
                "forget needs the text of a memory (or a distinctive part); an empty text would remove every memory."
            )
        with self.file.locked_items() as entries:
            kept = [e for e in entries if needle not in e["text"].lower()]
            removed = len(entries) - len(kept)
            if removed:
                self._hits.take_into(kept)
                self.file.save(kept)
        if removed == 0:
            return ForgetResult(0, f'No memory matches "{text}".')
        return ForgetResult(removed, f"Forgot {removed} {'memory' if removed == 1 else 'memories'}.")

    def forget_id(self, entry_id: str) -> ForgetResult:
        """Remove exactly the entry with this id (an editor's delete: no other entry goes with it)."""
        with self.file.locked_items() as entries:
            kept = [e for e in entries if e["id"] != entry_id]
            removed = len(entries) - len(kept)
            if removed:
                self._hits.take_into(kept)
                self.file.save(kept)
        if removed == 0:
            return ForgetResult(0, f'No memory has the id "{entry_id}".')
        return ForgetResult(removed, "Forgot 1 memory.")

    def boot_block(self, limit: int = BOOT_ENTRIES) -> str:
        """The system-prompt block (§1.6): top entries by hits, then recency; '' when empty or unreadable."""
        try:
            entries = self.entries()
        except ShiroError as error:  # a turn goes on without memory; memory requests say why
            log.warning("%s", error.message)
            return ""
        if not entries:
            return ""
        ranked = sorted(entries, key=lambda e: (e.hits, e.createdAt), reverse=True)[:limit]
        return "\n".join(["", BOOT_PREAMBLE, *(f"- {e.line}" for e in ranked)])

    def listing(self) -> tuple[list[Entry], str]:
        """The `/notes` body: newest first, with recall counts."""
        entries = list(reversed(self.entries()))
        if not entries:
            return [], "nothing remembered about this project yet"
        lines = [e.line + (f"  [recalled {e.hits}x]" if e.hits > 0 else "") for e in entries]
        return entries, "\n".join(lines)

    async def compact(self, summarize: Summarizer | None, *, gated: bool = True) -> CompactResult:
        """Merge unused entries through the model (§1.7); recalled entries are kept verbatim.

        ``gated`` applies the documented rule (/memory does nothing below SUMMARISE_AT entries).
        The model call happens outside the lock; the write re-reads the file so entries added
        meanwhile are kept.
        """
        entries = await asyncio.to_thread(self.entries)
        before = len(entries)
        unused = [e for e in entries if e.hits == 0]
        if gated and before < SUMMARISE_AT:
            return CompactResult(
                before,
                before,
                f"memory left as is: {before} entries; compaction starts at {SUMMARISE_AT} entries "
                "with at least two unused ones",
            )
        if len(unused) < 2:
            return CompactResult(
                before, before, f"memory left as is: {before} entries, too few unused ones to merge"
            )
        if summarize is None:
            raise ShiroError("no model available to summarize memory")
        output = await summarize(COMPACT_SYSTEM_PROMPT, "\n".join(f"[{e.kind}] {e.text}" for e in unused))
        merged = _parse_compacted(output)
        if not merged:
            return CompactResult(
                before, before, "memory left as is: the model's answer had no notes in the expected form"
            )
        after = await asyncio.to_thread(self._replace_unused, {e.id for e in unused}, merged)
        return CompactResult(before, after, f"memory compacted: {before} entries into {after}")

    def _replace_unused(self, sent: set[str], merged: list[Entry]) -> int:
        """Swap the entries sent to the model for its merged ones; re-read under the lock, so
        entries added meanwhile are kept. Returns the new count."""
        with self.file.locked_items() as current:
            self._hits.take_into(current)
            kept = [e for e in current if e["id"] not in sent]
            result = [e for e in kept if e["hits"] > 0] + [m.to_json() for m in merged]
            result += [e for e in kept if e["hits"] == 0]
            _cap(result)
            self.file.save(result)
            return len(result)


def _parse_compacted(output: str) -> list[Entry]:
    merged = []
    for line in output.splitlines():
        match = _COMPACT_LINE.match(line)
        if match:
            text, _ = clean_text(match.group(2))
            merged.append(Entry(new_id(), match.group(1).lower(), text, now_iso(), 0))
    return merged
