"""``LiveSession``: the session the turn engine mutates; every mutation calls ``on_change``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from shiro_lsp.messages import Message, title_of
from shiro_lsp.state.sessions.index import SessionSummary
from shiro_lsp.state.sessions.record import (
    SUMMARY_PREFIX,
    Compaction,
    EventMark,
    SessionRecord,
    StopReason,
    TurnMark,
    new_session_id,
    now_iso,
)
from shiro_lsp.state.todos import TaskList, Todo
from shiro_lsp.usage import Usage


class LiveSession:
    """The session the turn engine works on. Every mutation calls ``on_change`` (the autosave).

    Change history only through ``append``/``replace`` and never edit a message dict (or its parts)
    after appending it: autosave encodes the snapshot in a thread and caches each message's JSON
    by identity. To change a message, build a new dict and ``replace`` the list.
    """

    def __init__(
        self,
        *,
        id: str,
        created_at: str,
        cwd: str,
        provider: str,
        model: str,
        messages: list[Message] | None = None,
        tasks: TaskList | None = None,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cost_usd: float | None = None,
        cached_input_tokens: int = 0,
        updated_at: str | None = None,
        custom_title: str | None = None,
        compactions: list[Compaction] | None = None,
        undone_compactions: list[Compaction] | None = None,
        turns: list[TurnMark] | None = None,
        events: list[EventMark] | None = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.id = id
        self.created_at = created_at
        self.updated_at = updated_at or created_at
        self.cwd = cwd
        self.provider = provider
        self.model = model
        self.messages: list[Message] = list(messages or [])
        self.tasks = tasks if tasks is not None else TaskList()
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.cost_usd = cost_usd
        self.cached_input_tokens = cached_input_tokens
        self.custom_title = custom_title
        self.compactions: list[Compaction] = list(compactions or [])
        self.undone_compactions: list[Compaction] = list(undone_compactions or [])
        self._summary_message: tuple[Compaction, Message] | None = None  # one dict per compaction
        self.turns: list[TurnMark] = list(turns or [])
        self.events: list[EventMark] = list(events or [])
        self.on_change = on_change
        # `always` approval grants: per session, never saved; a new LiveSession starts with none.
        self.grants: set[str] = set()

    @classmethod
    def fresh(cls, *, cwd: str, provider: str, model: str) -> LiveSession:
        return cls(id=new_session_id(), created_at=now_iso(), cwd=cwd, provider=provider, model=model)

    @classmethod
    def from_record(cls, record: SessionRecord, *, provider: str, model: str) -> LiveSession:
        """Everything comes back from the file; ``model`` (the one configured now) only stands in for
        a file that names none: a session's model is the one it last ran on, until its next turn."""
        return cls(
            id=record.id,
            created_at=record.created_at,
            updated_at=record.updated_at,
            cwd=record.cwd,
            provider=provider,
            model=record.model or model,
            messages=record.messages,
            tasks=TaskList(list(record.todos)),
            input_tokens=record.input_tokens,
            output_tokens=record.output_tokens,
            cost_usd=record.cost_usd,
            cached_input_tokens=record.cached_input_tokens,
            custom_title=record.custom_title,
            compactions=record.compactions,
            undone_compactions=record.undone_compactions,
            turns=record.turns,
            events=record.events,
        )

    @property
    def title(self) -> str:
        return self.custom_title or title_of(self.messages)

    def changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def append(self, *messages: Message) -> None:
        self.messages.extend(messages)
        self.changed()

    def replace(self, messages: list[Message]) -> None:
        self.messages = list(messages)
        count = len(self.messages)
        self.compactions = [c for c in self.compactions if c.at <= count]
        self.undone_compactions = [
            c for c in self.undone_compactions if c.undone_at is not None and c.undone_at <= count
        ]
        self.turns = [t for t in self.turns if t.at < count or (t.at == count and t.end is None)]
        self.events = [e for e in self.events if e.at <= count]
        self.changed()

    # --- what the panel showed besides the messages (a resumed transcript shows it again) -----------

    def turn_started(self, task_id: str, model: str) -> None:
        """A turn begins on ``model``: its prompt will be the next message."""
        self.model = model
        self.turns.append(TurnMark(task_id, len(self.messages)))
        self.changed()

    def turn_ended(self, task_id: str, stop_reason: StopReason, error: str | None = None) -> None:
        for index in range(len(self.turns) - 1, -1, -1):
            if self.turns[index].task_id == task_id:
                self.turns[index] = replace(
                    self.turns[index], end=len(self.messages), stop_reason=stop_reason, error=error
                )
                self.changed()
                return

    def record_event(self, task_id: str, event: dict[str, Any], at: int | None = None) -> None:
        """``event`` (wire JSON) as the panel showed it, after the first ``at`` messages (default: the
        messages so far; never before the turn's own prompt)."""
        turn = next((t for t in reversed(self.turns) if t.task_id == task_id), None)
        at = min(len(self.messages) if at is None else at, len(self.messages))
        at = at if turn is None else max(at, turn.at + 1)
        self.events.append(EventMark(at, task_id, event))
        self.changed()

    # --- the model's view: the last compaction's summary plus what followed it ---------------------

    def model_messages(self) -> list[Message]:
        """What the model is given of the history; ``messages`` keeps everything the user saw."""
        if not self.compactions:
            return self.messages
        return [self._summary_of(self.compactions[-1]), *self.messages[self.compactions[-1].at :]]

    def replace_model_view(self, messages: list[Message]) -> None:
        """``replace`` for a list built from ``model_messages()``: the summary stays a marker."""
        if not self.compactions:
            self.replace(messages)
            return
        at = self.compactions[-1].at
        self.messages = [*self.messages[:at], *messages[1:]]
        self.changed()

    def compact(self, summary: str, *, auto: bool = False, digest_reason: str | None = None) -> Compaction:
        """From now on the model sees ``summary`` in place of every message so far (``digest_reason``:
        it is Shiro's digest, and why the model's summary was not used)."""
        compaction = Compaction(len(self.messages), summary, now_iso(), auto, digest_reason)
        self.compactions.append(compaction)
        self.changed()
        return compaction

    def view_without_last_compaction(self) -> list[Message]:
        """The model's view ``undo_compaction`` would bring back."""
        if len(self.compactions) < 2:
            return self.messages
        earlier = self.compactions[-2]
        return [self._summary_of(earlier), *self.messages[earlier.at :]]

    def undo_compaction(self) -> Compaction | None:
        """The model sees the view before the last compaction again; the compaction is kept as undone
        (with what the model sees again), so a resumed transcript shows its divider and the undo."""
        if not self.compactions:
            return None
        restored = len(self.view_without_last_compaction())
        undone = replace(self.compactions.pop(), undone_at=len(self.messages), restored=restored)
        self.undone_compactions.append(undone)
        self.changed()
        return undone

    def _summary_of(self, compaction: Compaction) -> Message:
        # The same dict each time: the estimator and the autosave cache messages by identity.
        if self._summary_message is None or self._summary_message[0] is not compaction:
            message: Message = {"role": "user", "content": SUMMARY_PREFIX + compaction.summary}
            self._summary_message = (compaction, message)
        return self._summary_message[1]

    def add_usage(self, usage: Usage) -> None:
        """Add one model run's usage: an unpriced one makes the session's cost unknown (``shiro_lsp.usage``)."""
        total = (
            Usage.saved(self.input_tokens, self.output_tokens, self.cached_input_tokens, self.cost_usd)
            + usage
        )
        self.input_tokens, self.output_tokens = total.input_tokens, total.output_tokens
        self.cached_input_tokens, self.cost_usd = total.cached_input_tokens, total.cost_usd
        self.changed()

    def set_todos(self, todos: list[Todo]) -> str:
        reply = self.tasks.replace(todos)
        self.changed()
        return reply

    def to_record(self) -> SessionRecord:
        """A snapshot (copies the message list, not the messages): cheap enough for the event loop."""
        return SessionRecord(
            id=self.id,
            created_at=self.created_at,
            updated_at=self.updated_at,
            cwd=self.cwd,
            provider=self.provider,
            model=self.model,
            title=self.title,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cost_usd=self.cost_usd,
            cached_input_tokens=self.cached_input_tokens,
            todos=list(self.tasks.todos),
            messages=list(self.messages),
            custom_title=self.custom_title,
            compactions=list(self.compactions),
            undone_compactions=list(self.undone_compactions),
            turns=list(self.turns),
            events=list(self.events),
        )

    def summary(self) -> SessionSummary:
        return SessionSummary.of(self.to_record())
