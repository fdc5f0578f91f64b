"""The workspace folders of one editor window: a :class:`Shiro` for each folder, and the active one.

Each session is bound to one folder (its root): its memory, prompt history, session list, notes
and checkpoints are that folder's, exactly as in a single-folder window (state keyed by the
folder's path). The tools of every session see all folders (``jail.Folders``, the session's root
first); with one folder they see only it, as they always have. A folder's service is made the
first time something needs it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from shiro_lsp.config import Settings
from shiro_lsp.errors import BadParams, ShiroError
from shiro_lsp.fs.jail import Folders, Roots
from shiro_lsp.service import Shiro
from shiro_lsp.state.jsonstore import Reporter, log_reporter
from shiro_lsp.state.sessions import LiveSession, NewOutcome, SearchHit, SessionSummary


@dataclass(frozen=True)
class Folder:
    name: str
    """How the model addresses it (``name/...``): the editor's name for it, unique in the window."""
    path: str


def same_path(a: str, b: str) -> bool:
    return os.path.normpath(a) == os.path.normpath(b)


def named_folders(given: Sequence[tuple[str | None, str]]) -> list[Folder]:
    """The folders with usable, unique names (a duplicate gets ``-2``, ``-3``...); same path once."""
    folders: list[Folder] = []
    for name, path in given:
        if any(same_path(f.path, path) for f in folders):
            continue
        base = (name or "").strip()
        if not base or "/" in base or "\\" in base or base in (".", ".."):
            base = Path(path).name or "root"
        unique, n = base, 1
        while any(f.name == unique for f in folders):
            n += 1
            unique = f"{base}-{n}"
        folders.append(Folder(unique, path))  # as given: the state of a folder is keyed by this string
    return folders


class Workspaces:
    def __init__(
        self,
        folders: Sequence[tuple[str | None, str]],
        settings: Settings,
        reporter: Reporter = log_reporter,
        started: Callable[[Shiro], None] = lambda _shiro: None,
    ) -> None:
        """``folders``: (name, path) in the editor's order, at least one; ``started`` wires a new service."""
        self.folders = named_folders(folders)
        if not self.folders:
            raise ValueError("a window has at least one workspace folder")
        self.settings = settings
        self.reporter = reporter
        self.started = started
        self._services: dict[str, Shiro] = {}
        self.active_path = self.folders[0].path
        self._switching = asyncio.Lock()  # one move of the live session between folders at a time

    # --- which service

    @property
    def active(self) -> Shiro:
        """The service of the live session's root."""
        return self.service(self.active_path)

    def service(self, path: str) -> Shiro:
        """The service of the folder at ``path`` (made now if needed)."""
        folder = self.folder_at(path)
        shiro = self._services.get(folder.path)
        if shiro is None:
            shiro = Shiro(
                folder.path, self.settings, self.reporter, folders=lambda: self.tools_view(folder.path)
            )
            self._services[folder.path] = shiro
            self.started(shiro)
        return shiro

    def services(self) -> list[Shiro]:
        """The services made so far."""
        return list(self._services.values())

    def folder_at(self, path: str) -> Folder:
        """The folder that is ``path`` or holds it (the innermost, when folders nest)."""
        candidates = [
            f for f in self.folders if same_path(f.path, path) or _within(os.path.normpath(path), f.path)
        ]
        if not candidates:
            names = ", ".join(f"{f.name} ({f.path})" for f in self.folders)
            raise BadParams(f"{path} is not in a workspace folder of this window (the folders: {names}).")
        return max(candidates, key=lambda f: len(f.path))

    def root_for(self, path: str | None) -> str:
        """The root a new session gets: the folder holding ``path``, else the live session's."""
        return self.active_path if path is None else self.folder_at(path).path

    def activate(self, path: str) -> Shiro:
        """Make the folder at ``path`` the live session's root."""
        shiro = self.service(path)
        self.active_path = shiro.workspace
        return shiro

    # --- binding sessions to folders

    async def for_chat(self, root: str | None) -> Shiro:
        """The service a chat goes to: the live session's. A chat sent from another folder's editor
        moves a session that has no messages yet (and no running turn) to that folder."""
        if root is None:
            return self.active
        target = self.folder_at(root).path
        async with self._switching:
            active = self.active
            busy = active.runtime.queue.busy if active.has_agent else False
            if same_path(target, active.workspace) or active.sessions.current.messages or busy:
                return active
            shiro, _ = await self._switch(target)
            return shiro

    async def new_session(self, root: str | None) -> NewOutcome:
        """A fresh session in the folder holding ``root`` (default: the live session's folder)."""
        target = self.root_for(root)
        async with self._switching:
            if same_path(target, self.active_path):
                return await self.active.new_session()
            _, outcome = await self._switch(target)
            return outcome

    async def _switch(self, target: str) -> tuple[Shiro, NewOutcome]:
        """The live session becomes a fresh one in ``target``; the one left is saved where it is."""
        left = self.active
        await left.sessions.flush()
        previous = left.sessions.info() if left.sessions.current.messages else None
        shiro = self.activate(target)
        outcome = await shiro.new_session()  # the editor hears of the new session (and its meter)
        return shiro, NewOutcome(outcome.session, previous or outcome.previous)

    async def resume(self, reference: str | None, *, latest: bool = False) -> LiveSession:
        """Resume a session in its own folder (it becomes the live session's root); ``latest``: the
        live session's folder's newest. A session of a folder not open here resumes as it always did."""
        async with self._switching:
            active = self.active
            home = await asyncio.to_thread(self._home_of, active, reference) if reference else None
            if home is None or same_path(home, active.workspace):
                return await active.resume_session(reference, latest=latest)
            shiro = self.service(home)
            session = await shiro.resume_session(reference)
            await active.sessions.flush()
            self.activate(home)
            return session

    def _home_of(self, active: Shiro, reference: str) -> str | None:
        """The open folder a saved session is bound to (None: the live one, unknown, or not open)."""
        try:
            session_id = active.sessions.store.resolve(reference)
        except ShiroError:
            return None  # resume_session says what is wrong with the reference
        if session_id == active.sessions.current.id:
            return None
        summary = active.sessions.store.summary(session_id)
        if summary is None or not self.is_folder(summary.cwd):
            return None
        return next(f.path for f in self.folders if same_path(f.path, summary.cwd))

    async def list_sessions(self, root: str | None, limit: int, all_workspaces: bool) -> list[SessionSummary]:
        """The sessions of the folder holding ``root`` (default: the live session's), or of all."""
        shiro = self.active if root is None else self.service(self.folder_at(root).path)
        return await shiro.sessions.list(limit, all_workspaces)

    async def search_sessions(
        self, root: str | None, query: str, limit: int, all_workspaces: bool
    ) -> list[SearchHit]:
        """Like ``list_sessions``, only sessions whose message text holds every word of ``query``."""
        shiro = self.active if root is None else self.service(self.folder_at(root).path)
        return await shiro.sessions.search(query, limit, all_workspaces)

    def is_folder(self, path: str) -> bool:
        return any(same_path(f.path, path) for f in self.folders)

    # --- what the tools see

    def tools_view(self, root: str) -> Roots:
        """One folder: just it. Several: all of them, ``root`` first (a removed root still sees itself)."""
        own = next((f for f in self.folders if same_path(f.path, root)), None)
        if own is None:
            own = Folder(Path(root).name or "root", root)
        others = [f for f in self.folders if f is not own]
        if not others:
            return Path(own.path)
        return Folders([(f.name, Path(f.path)) for f in [own, *others]])

    # --- changes

    def change(self, added: Sequence[tuple[str | None, str]], removed: Sequence[str]) -> list[Shiro]:
        """``workspace/didChangeWorkspaceFolders``. Returns the services of removed folders (to close).

        The last folder is never removed (a window with none keeps working where it was). When
        the live session's root goes, the first remaining folder becomes active.
        """
        kept = [f for f in self.folders if not any(same_path(f.path, r) for r in removed)]
        if not kept and not added:
            return []
        self.folders = named_folders([(f.name, f.path) for f in kept] + list(added))
        gone = [path for path in self._services if not self.is_folder(path)]
        closed = [self._services.pop(path) for path in gone]
        if not self.is_folder(self.active_path):
            self.active_path = self.folders[0].path
        return closed

    def configure(self, raw: dict[str, object]) -> list[str]:
        """New settings for every folder's service (problems reported once)."""
        problems = self.active.configure(raw)
        self.settings = self.active.settings
        for shiro in self.services():
            if shiro is not self.active:
                shiro.configure(raw)
        return problems


def _within(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip(os.sep) + os.sep)
