"""What the next request carries: the pruned wire view of a session, and the meter that reports it.

The local history keeps everything; only the wire is pruned (spec §4.1). What pruning drops is
summarised once by a model call (a digest if that fails) and carried as a labelled note after the
user's goal, so the model keeps its goal, its task list (in the system prompt) and the gist of what
it did.

Estimating and pruning a long history is CPU work (about a second for a 20 MB session on a busy
machine), so the async forms (``prepare``, ``view_off_loop``, ``meter_off_loop``) run it in a
thread, one at a time (the estimator's caches and the summaries are not shared between threads),
over a copy of the history taken on the loop. The plain methods are for a thread or a test.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from shiro_lsp.context.estimate import TokenEstimator, estimate_text
from shiro_lsp.context.ladder import dropped_span, prune_to_fit
from shiro_lsp.context.summary import SpanSummaries, span_summary_request, summary_note
from shiro_lsp.messages import Message
from shiro_lsp.providers.types import ToolSpec
from shiro_lsp.usage import Usage

log = logging.getLogger(__name__)
T = TypeVar("T")

WARN_FRACTION = 2 / 3
CRITICAL_FRACTION = 0.9
NOTE_BUDGET_TRIES = 3

# (system prompt, messages) -> the model's text; None or an exception means "use the digest".
SpanSummarizer = Callable[[str, list[Message]], Awaitable[str | None]]


@dataclass(frozen=True)
class WireView:
    messages: list[Message]
    compacted: bool
    before: int
    after: int
    tokens: int


@dataclass(frozen=True)
class Meter:
    tokens: int
    threshold: int
    percent: int
    level: Literal["ok", "warn", "critical"]
    estimated: bool
    local: bool = False
    cached_tokens: int | None = None
    will_compact: bool = False
    """The history no longer fits the threshold: the next request is compacted first."""

    def to_json(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "threshold": self.threshold,
            "percent": self.percent,
            "level": self.level,
            "estimated": self.estimated,
            "local": self.local,
            "cachedTokens": self.cached_tokens,
            "willCompact": self.will_compact,
        }


def meter_for(
    tokens: int,
    threshold: int,
    estimated: bool,
    cached_tokens: int | None = None,
    *,
    will_compact: bool = False,
) -> Meter:
    level: Literal["ok", "warn", "critical"] = "ok"
    if tokens >= CRITICAL_FRACTION * threshold:
        level = "critical"
    elif tokens >= WARN_FRACTION * threshold:
        level = "warn"
    return Meter(
        tokens,
        threshold,
        round(tokens / threshold * 100),
        level,
        estimated,
        cached_tokens=cached_tokens,
        will_compact=will_compact,
    )


def tools_tokens(tools: Sequence[ToolSpec]) -> int:
    return estimate_text(
        json.dumps(
            [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools]
        )
    )


class ContextWindow:
    def __init__(self, threshold: int, summarize: SpanSummarizer | None = None) -> None:
        self.threshold = threshold
        self.summarize = summarize
        self.estimator = TokenEstimator()
        self.summaries = SpanSummaries()
        self._overhead = 0
        self._measured: tuple[int, int] | None = None  # (history length it describes, tokens)
        self._cached: int | None = None  # prompt tokens the provider served from its cache, last request
        self._tools_key: tuple[str, ...] = ()
        self._tools_tokens = 0
        self._lock = threading.Lock()

    def locked(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` while no other thread uses this window (call it in a worker thread)."""
        with self._lock:
            return work(*args)

    async def off_loop(self, work: Callable[..., T], *args: Any) -> T:
        return await asyncio.to_thread(self.locked, work, *args)

    async def view_off_loop(self, history: Sequence[Message], overhead: int) -> WireView:
        return await self.off_loop(self.view, list(history), overhead)

    async def meter_off_loop(self, history: Sequence[Message]) -> Meter:
        return await self.off_loop(self.meter, list(history))

    def reset(self) -> None:
        """A different session: forget its summaries and measurements."""
        self.estimator = TokenEstimator()
        self.summaries = SpanSummaries()
        self._measured = None
        self._cached = None

    def overhead(self, instructions: str, tools: Sequence[ToolSpec]) -> int:
        key = tuple(t.name for t in tools)
        if key != self._tools_key:
            self._tools_key, self._tools_tokens = key, tools_tokens(tools)
        self._overhead = estimate_text(instructions) + self._tools_tokens
        return self._overhead

    def carried(self, history: Sequence[Message]) -> int:
        """What a request with ``history`` unpruned would carry, with the last measured instructions and tools."""
        return self.estimator.estimate(history) + self._overhead

    def view(self, history: Sequence[Message], overhead: int) -> WireView:
        """The wire view without any model call (span notes as recorded so far, digest for the rest)."""
        total = self.estimator.estimate(history) + overhead
        if total <= self.threshold:
            return WireView(list(history), False, len(history), len(history), total)
        # The note's size is known only once we know what it stands for (digest lines of a span not
        # yet summarised ride in it), so budget what is recorded and widen the budget by any excess.
        note_budget = self.estimator.measure([summary_note(self.summaries.note_text())]) + 1
        wire: list[Message] = []
        tokens = 0
        for _ in range(NOTE_BUDGET_TRIES):
            pruned = prune_to_fit(history, self.threshold, self.estimator, overhead + note_budget)
            wire = self.summaries.wire(pruned, dropped_span(history, pruned, self.estimator))
            tokens = self.estimator.measure(wire) + overhead
            if tokens <= self.threshold:
                break
            note_budget += tokens - self.threshold
        return WireView(wire, True, len(history), len(wire), tokens)

    async def prepare(
        self, history: Sequence[Message], instructions: str, tools: Sequence[ToolSpec]
    ) -> WireView:
        snapshot = list(history)  # the loop may append while a thread prunes
        overhead, view = await self.off_loop(self._measured_view, instructions, tools, snapshot)
        if view.compacted and self.summarize is not None:
            batch, request = await self.off_loop(self._due, snapshot, view)
            if request is not None:
                summary = await self._summary(*request)
                view = await self.off_loop(self._recorded, batch, summary, snapshot, overhead)
        return view

    def _measured_view(
        self, instructions: str, tools: Sequence[ToolSpec], history: list[Message]
    ) -> tuple[int, WireView]:
        overhead = self.overhead(instructions, tools)
        return overhead, self.view(history, overhead)

    def _due(
        self, history: list[Message], view: WireView
    ) -> tuple[list[Message], tuple[str, list[Message]] | None]:
        batch = self.summaries.due(dropped_span(history, view.messages))
        return batch, span_summary_request(batch) if batch else None

    def _recorded(
        self, batch: list[Message], summary: str | None, history: list[Message], overhead: int
    ) -> WireView:
        self.summaries.record(batch, summary)
        return self.view(history, overhead)

    async def _summary(self, system: str, messages: list[Message]) -> str | None:
        assert self.summarize is not None
        try:
            return await self.summarize(system, messages)
        except Exception as error:  # the digest stands in; pruning must never fail a turn
            log.warning("summarising the pruned span failed (%s); using the digest", error)
            return None

    def measured(self, usage: Usage, view: WireView) -> None:
        """The provider's count for the request just sent, plus its answer, is what the next one carries."""
        if usage.input_tokens > 0:
            self._measured = (view.before + 1, usage.input_tokens + usage.output_tokens)
            self._cached = usage.cached_input_tokens

    def meter(self, history: Sequence[Message]) -> Meter:
        if self._measured is not None and self._measured[0] == len(history):
            tokens = self._measured[1]
            return meter_for(
                tokens,
                self.threshold,
                estimated=False,
                cached_tokens=self._cached,
                will_compact=tokens > self.threshold,
            )
        view = self.view(history, self._overhead)
        return meter_for(
            view.tokens,
            self.threshold,
            estimated=True,
            cached_tokens=self._cached,
            will_compact=view.compacted,
        )
