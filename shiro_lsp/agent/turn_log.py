"""What a turn showed the user besides its messages, kept in the session so a resume shows it again.

The panel draws a turn from its events; the messages keep only what the model reads. A denial, an
approval, a notice, an error, a tool card's diff and how the turn ended would be lost on resume, so
``TurnLog`` records them in the live session (``turns`` and ``events`` in the session file), in the
events' wire form: a front end replays them with the builders it uses for live events.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any, Protocol

from shiro_lsp.adapt import NUDGE_MARK_KEY
from shiro_lsp.agent import events as ev
from shiro_lsp.agent.events import Event, event_json
from shiro_lsp.checkpoints.review import Checkpoints
from shiro_lsp.checkpoints.rows import TurnChangesView
from shiro_lsp.errors import ShiroError
from shiro_lsp.messages import Message
from shiro_lsp.state.checkpoints import Checkpoint
from shiro_lsp.state.sessions.record import SessionRecord, StopReason, TurnMark

log = logging.getLogger(__name__)

SHOWN_AS_IS = (ev.Notice, ev.Failed, ev.ToolDenied, ev.ToolApproval, ev.Compacted)


class LoggedSession(Protocol):
    @property
    def messages(self) -> list[Message]: ...

    def turn_started(self, task_id: str, model: str) -> None: ...

    def turn_ended(self, task_id: str, stop_reason: StopReason, error: str | None = None) -> None: ...

    def record_event(self, task_id: str, event: dict[str, Any], at: int | None = None) -> None: ...


def recorded_form(event: Event) -> dict[str, Any] | None:
    """The wire JSON kept for ``event``, or None when the messages already hold what it showed.

    A tool card's result is in the history; what the call changed on disk (its diff and files, so a
    resumed card counts its lines as the live one did) is not.
    """
    if isinstance(event, SHOWN_AS_IS):
        return event_json(event)
    if isinstance(event, ev.ToolResult) and event.diff:
        return event_json(replace(event, output=""))
    if isinstance(event, ev.ToolFailed) and event.diff:
        return event_json(replace(event, error=""))
    return None


class TurnLog:
    """One turn's record in ``session``: ``start`` before the turn, every event, then ``end``.

    An event is placed after the messages kept when it came, except one that comes while a reply
    is shown but not yet kept (a loop cut's notice, said as the reply is cut): it waits for that
    reply, so a resume shows it below the reply, where the live panel did.
    """

    def __init__(self, session: LoggedSession, task_id: str) -> None:
        self.session = session
        self.task_id = task_id
        self._reply_at: int | None = None
        """The messages kept when the reply being shown began (None: no reply is being shown)."""
        self._waiting: list[dict[str, Any]] = []

    def start(self, model: str) -> None:
        """The turn runs on ``model``: the session's model is the one it last ran on."""
        self.session.turn_started(self.task_id, model)

    def record(self, event: Event) -> None:
        kept = len(self.session.messages)
        if self._reply_at is not None and kept > self._reply_at:  # the reply is kept: right after it
            self._release(self._reply_at + 1)
        if isinstance(event, ev.Text | ev.Reasoning) and self._reply_at is None:
            self._reply_at = kept
        form = recorded_form(event)
        if form is None:
            return
        if self._reply_at is not None:
            self._waiting.append(form)
        else:
            self.session.record_event(self.task_id, form)

    def end(self, stop_reason: StopReason, error: str | None = None) -> None:
        if self._reply_at is not None:
            kept = len(self.session.messages)
            self._release(self._reply_at + 1 if kept > self._reply_at else None)
        self.session.turn_ended(self.task_id, stop_reason, error)

    def _release(self, at: int | None) -> None:
        self._reply_at = None
        for form in self._waiting:
            self.session.record_event(self.task_id, form, at)
        self._waiting.clear()


# --- a resumed session's turns --------------------------------------------------------------------


@dataclass(frozen=True)
class ResumedTurn:
    mark: TurnMark
    checkpoint_id: str | None
    changes: TurnChangesView | None
    """The turn's Changed files block as it stands now (None: the turn changed no files)."""


def resumed_turns(record: SessionRecord, checkpoints: Checkpoints | None) -> list[ResumedTurn]:
    """Each turn of ``record`` with its checkpoint and changes (blocking: reads the checkpoint store
    and the files). A session saved before turns were recorded gets one per checkpoint of a turn."""
    found = _turn_checkpoints(record.id, checkpoints)
    marks = list(record.turns)
    known = {mark.task_id for mark in marks}
    marks += [
        mark
        for c in found.values()
        if c.task_id not in known and (mark := _mark_of(c, record.messages)) is not None
    ]
    marks.sort(key=lambda mark: mark.at)
    out: list[ResumedTurn] = []
    for mark in marks:
        checkpoint = found.get(mark.task_id)
        view = (
            checkpoints.changes(record.id, checkpoint.task_id)
            if checkpoints is not None and checkpoint is not None
            else None
        )
        out.append(
            ResumedTurn(mark, checkpoint.id if checkpoint else None, view if view and view.files else None)
        )
    return out


def _turn_checkpoints(session_id: str, checkpoints: Checkpoints | None) -> dict[str, Checkpoint]:
    if checkpoints is None:
        return {}
    try:
        listed = checkpoints.store.list(session_id)
    except (OSError, ShiroError) as error:
        log.warning("could not read the checkpoints of %s: %s", session_id, error)
        return {}
    return {c.task_id: c for c in listed if c.kind == "turn" and c.files}


def _mark_of(checkpoint: Checkpoint, messages: list[Message]) -> TurnMark | None:
    """An older session's turn, from its checkpoint: it runs to the next prompt of the user."""
    at = checkpoint.message_index
    if not 0 <= at < len(messages) or messages[at].get("role") != "user":
        return None
    end = next(
        (i for i in range(at + 1, len(messages)) if _is_prompt(messages[i])),
        len(messages),
    )
    return TurnMark(checkpoint.task_id, at, end)


def _is_prompt(message: Message) -> bool:
    return (
        message.get("role") == "user"
        and isinstance(message.get("content"), str)
        and not message.get(NUDGE_MARK_KEY)
    )
