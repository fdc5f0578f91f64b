"""``SessionManager``: the live session of one workspace, its autosave, and every session action:
new, clear, resume, save, list, export, branch, delete."""

from __future__ import annotations

import asyncio
import builtins
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from shiro_lsp.errors import BadParams, NotFound, ShiroError
from shiro_lsp.state.autosave import Autosave
from shiro_lsp.state.jsonstore import Reporter, log_reporter
from shiro_lsp.state.live_lock import LiveSessionLock
from shiro_lsp.state.sessions.export import ExportFormat, export_text
from shiro_lsp.state.sessions.index import SessionSummary
from shiro_lsp.state.sessions.live import LiveSession
from shiro_lsp.state.sessions.record import MessageCache, SessionRecord, check_id, new_session_id, now_iso
from shiro_lsp.state.sessions.search import SearchHit
from shiro_lsp.state.sessions.store import DEFAULT_LIST_LIMIT, SessionStore

AUTOSAVE_DELAY_S = 0.4
MAX_TITLE_CHARS = 200
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_title(title: str) -> str:
    """A title as the user typed it, trimmed; empty, multi-line or overlong ones are refused."""
    clean = title.strip()
    if not clean:
        raise BadParams("A session title cannot be empty. Type a few words, or keep the current title.")
    if CONTROL.search(clean):
        raise BadParams("A session title is one line of text (no line breaks, tabs or control characters).")
    if len(clean) > MAX_TITLE_CHARS:
        raise BadParams(
            f"A session title can be at most {MAX_TITLE_CHARS} characters; this one has {len(clean)}."
        )
    return clean


@dataclass(frozen=True)
class SaveOutcome:
    id: str
    saved: bool
    reason: str | None = None


@dataclass(frozen=True)
class NewOutcome:
    session: SessionSummary
    previous: SessionSummary | None


EMPTY_REASON = "Nothing to save: this session has no messages yet."

SessionListener = Callable[[LiveSession], None]


class SessionManager:
    """The live session of one workspace and every session action. Async methods run on the loop."""

    def __init__(
        self,
        store: SessionStore,
        *,
        cwd: str,
        provider: str,
        model: Callable[[], str],
        reporter: Reporter = log_reporter,
        autosave_delay: float = AUTOSAVE_DELAY_S,
        live_lock: LiveSessionLock | None = None,
    ) -> None:
        self.store = store
        self.live_lock = live_lock
        self.cwd = cwd
        self.provider = provider
        self.model = model
        self.reporter = reporter
        self.autosave_delay = autosave_delay
        # Called on the loop after every save, new, resume and clear with the live session.
        self.on_changed: SessionListener | None = None
        self._switching = asyncio.Lock()
        self.current = self._attach(LiveSession.fresh(cwd=cwd, provider=provider, model=model()))

    def _hold(self, session_id: str) -> None:
        """Hold the live session's lock (live_lock.py): Conflict if another process works on it.

        Taken on resume and before a fresh session's first save (no other window can know it sooner),
        so a lock file exists only for sessions that exist on disk.
        """
        if self.live_lock is not None:
            self.live_lock.take(session_id)

    def _held_only(self, session_id: str) -> None:
        if self.live_lock is not None:
            self.live_lock.release_others(session_id)

    def _attach(self, session: LiveSession) -> LiveSession:
        cache = MessageCache()
        autosave: Autosave[SessionRecord] = Autosave(
            snapshot=lambda: session.to_record() if session.messages else None,
            write=lambda record: self._save_live(record, cache),
            on_saved=lambda saved: self._saved(session, saved),
            on_error=self._autosave_failed,
            delay=self.autosave_delay,
        )
        session.on_change = autosave.poke
        self._autosave = autosave
        return session

    def _save_live(self, record: SessionRecord, cache: MessageCache) -> SessionRecord:
        self._hold(record.id)
        return self.store.save(record, cache)

    def _saved(self, session: LiveSession, saved: SessionRecord) -> None:
        session.updated_at = saved.updated_at
        if session is self.current:
            self._notify()

    def _autosave_failed(self, error: Exception) -> None:
        message = error.message if isinstance(error, ShiroError) else f"{type(error).__name__}: {error}"
        self.reporter(f"Autosave failed: {message}")

    def _notify(self) -> None:
        if self.on_changed is not None:
            self.on_changed(self.current)

    def info(self) -> SessionSummary:
        return self.current.summary()

    # -- saving

    async def save(self) -> SaveOutcome:
        """`/save`: write now; an empty session is not written and the reason says so."""
        if not self.current.messages:
            return SaveOutcome(self.current.id, saved=False, reason=EMPTY_REASON)
        self._autosave.poke()
        await self._autosave.flush(raise_errors=True)
        return SaveOutcome(self.current.id, saved=True)

    async def flush(self) -> None:
        """Save pending changes now (shutdown); errors are reported, not raised."""
        await self._autosave.flush()

    def flush_sync(self) -> None:
        """The final save on `exit` or interpreter exit, when there may be no loop to wait on."""
        self._autosave.flush_sync()

    # -- switching sessions

    async def new(self) -> NewOutcome:
        """Save the live session if it has messages, then start a fresh one (new id, empty list)."""
        async with self._switching:
            previous = await self._close_current()
            fresh = LiveSession.fresh(cwd=self.cwd, provider=self.provider, model=self.model())
            self.current = self._attach(fresh)
            await asyncio.to_thread(self._held_only, fresh.id)
        self._notify()
        return NewOutcome(self.info(), previous)

    async def clear(self) -> NewOutcome:
        """`/clear` is `new`: the old session stays on disk under its id (the reference overwrote it)."""
        return await self.new()

    async def resume(self, reference: str | None = None, *, latest: bool = False) -> LiveSession:
        async with self._switching:
            session_id = await asyncio.to_thread(self._resolve_for_resume, reference, latest)
            await asyncio.to_thread(self._hold, session_id)  # another window's session: refused here
            try:
                await self._close_current()
                record = await asyncio.to_thread(self.store.load, session_id)
            except BaseException:
                if session_id != self.current.id and self.live_lock is not None:
                    await asyncio.to_thread(self.live_lock.release, session_id)
                raise
            self.current = self._attach(
                LiveSession.from_record(record, provider=self.provider, model=self.model())
            )
            await asyncio.to_thread(self._held_only, session_id)
        self._notify()
        return self.current

    def _resolve_for_resume(self, reference: str | None, latest: bool) -> str:
        if reference is not None:
            return self.store.resolve(reference)
        if not latest:
            raise BadParams("Say which session to resume: an id (or a unique prefix), or latest: true.")
        found = self.store.latest(self.cwd)
        if found is None:
            raise NotFound("No saved session for this workspace.")
        return found

    async def _close_current(self) -> SessionSummary | None:
        """Save the live session; refuse to switch away if that fails, so nothing is lost."""
        await self._autosave.flush(raise_errors=True)
        return self.current.summary() if self.current.messages else None

    # -- other sessions

    async def list(
        self, limit: int = DEFAULT_LIST_LIMIT, all_workspaces: bool = False
    ) -> list[SessionSummary]:
        cwd = None if all_workspaces else self.cwd
        return await asyncio.to_thread(self.store.list, cwd=cwd, limit=limit)

    async def search(
        self, query: str, limit: int = DEFAULT_LIST_LIMIT, all_workspaces: bool = False
    ) -> builtins.list[SearchHit]:
        """Sessions whose saved messages (or given title) contain every word of ``query``, best first."""
        cwd = None if all_workspaces else self.cwd
        return await asyncio.to_thread(self.store.search, query, cwd=cwd, limit=limit)

    async def rename(self, reference: str, title: str) -> SessionSummary:
        """Give a session a title of the user's own; it is saved in the session file (``customTitle``).

        The live session is renamed in memory and saved (if it has messages; otherwise with its first
        save). A saved session is rewritten with its ``updatedAt`` kept, so the listing order stays.
        """
        clean = check_title(title)
        session_id = await asyncio.to_thread(self._resolve_or_live, reference)
        if session_id == self.current.id:
            self.current.custom_title = clean
            if self.current.messages:
                self.current.changed()
                await self._autosave.flush(raise_errors=True)
            else:
                self._notify()
            return self.current.summary()
        return await asyncio.to_thread(self._rename_saved, session_id, clean)

    def _rename_saved(self, session_id: str, title: str) -> SessionSummary:
        if self.live_lock is not None:
            self.live_lock.take(session_id)  # Conflict while another window works on it
        try:
            record = self.store.load(session_id)
            saved = self.store.save(replace(record, custom_title=title), touch=False)
        finally:
            if self.live_lock is not None:
                self.live_lock.release(session_id)
        return SessionSummary.of(saved)

    async def record_of(self, reference: str | None) -> SessionRecord:
        """The live session's snapshot (no reference or its id), else the saved record."""
        if reference is None:
            return self.current.to_record()
        session_id = await asyncio.to_thread(self._resolve_or_live, reference)
        if session_id == self.current.id:
            return self.current.to_record()
        return await asyncio.to_thread(self.store.load, session_id)

    def _resolve_or_live(self, reference: str) -> str:
        """The live session may not be saved yet, so its id (or a prefix of it) resolves to it too."""
        live_id = self.current.id
        if not live_id.startswith(check_id(reference)):
            return self.store.resolve(reference)
        try:
            found = self.store.resolve(reference)
        except NotFound:
            return live_id
        if found != live_id:
            raise BadParams(
                f'"{reference}" matches more than one session: {live_id} (live) and {found}. '
                "Type more of the id.",
                data={"candidates": [live_id, found]},
            )
        return found

    async def export(self, reference: str | None, format: ExportFormat) -> str:
        record = await self.record_of(reference)
        return await asyncio.to_thread(export_text, record, format)

    async def branch(self, reference: str | None, at_message: int | None) -> SessionSummary:
        """A new saved session holding the history up to and including message ``at_message``."""
        source = await self.record_of(reference)
        if not source.messages:
            raise ShiroError("That session has no messages yet, so there is nothing to branch from.")
        last = len(source.messages) - 1
        if at_message is not None and at_message > last:
            raise BadParams(f"atMessage {at_message} is past the end: that session has messages 0 to {last}.")
        kept = source.up_to((last if at_message is None else at_message) + 1)
        now = now_iso()
        branch = replace(
            kept,
            id=new_session_id(),
            created_at=now,
            updated_at=now,
            input_tokens=0,
            output_tokens=0,
            cost_usd=None,
            todos=list(source.todos),
            custom_title=None,  # a branch is titled by its first prompt, not a copy of the source's name
        )
        saved = await asyncio.to_thread(self.store.save, branch)
        return SessionSummary.of(saved)

    async def delete(self, reference: str) -> bool:
        session_id = await asyncio.to_thread(self.store.resolve, reference)
        if session_id == self.current.id:
            raise ShiroError("That is the live session. Start a new session first, then delete this one.")
        return await asyncio.to_thread(self.store.delete, session_id)
