"""One workspace's Shiro: settings, stores and the live session. Every front door drives this.

The synchronous methods may block on file I/O and cross-process locks; async callers run them
with ``asyncio.to_thread``. The async ones (notes blocks, session switches, export, branch,
delete, models) do their blocking work in threads themselves.
"""

from __future__ import annotations

import asyncio
import base64
import re
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from shiro_lsp.agent.runtime import AgentRuntime, Frontend
from shiro_lsp.checkpoints.review import ChatSession, Checkpoints
from shiro_lsp.commands import CommandCatalogue, Folder
from shiro_lsp.commands.files import display_path
from shiro_lsp.config import Settings, load_settings
from shiro_lsp.errors import ReadOnly, ShiroError, ToolError
from shiro_lsp.fs.jail import Folders, Roots
from shiro_lsp.fs.secrets import keep_private
from shiro_lsp.hooks import HookSettings
from shiro_lsp.images.files import read_image_file
from shiro_lsp.images.parts import stored_images
from shiro_lsp.images.process import data_url
from shiro_lsp.images.store import ImageStore, StoredImage
from shiro_lsp.mcp.client import McpManager
from shiro_lsp.messages import Message
from shiro_lsp.providers.models import ModelListing, list_endpoint_models
from shiro_lsp.state.atomic import clean_stale_temp_files
from shiro_lsp.state.checkpoints import CheckpointStore
from shiro_lsp.state.history import PromptHistory
from shiro_lsp.state.jsonstore import Reporter, log_reporter
from shiro_lsp.state.live_lock import LiveSessionLock
from shiro_lsp.state.memory import DISABLED_TEXT, ProjectMemory, RememberResult, Summarizer
from shiro_lsp.state.notes import Notes
from shiro_lsp.state.paths import StatePaths, project_key, state_root
from shiro_lsp.state.reservation import workspace_reservation
from shiro_lsp.state.sessions import (
    ExportFormat,
    LiveSession,
    NewOutcome,
    SessionManager,
    SessionStore,
    SessionSummary,
    export_text,
)
from shiro_lsp.state.todos import TaskList, Todo
from shiro_lsp.tools import Tool

PROVIDER = "openai"

RESTRICTED_TEXT = (
    "This workspace is in restricted mode (not trusted), so Shiro is read-only here: "
    "no file changes, commands, memory or notes writes. Trust the workspace to allow them."
)


class Shiro:
    def __init__(
        self,
        workspace: str,
        settings: Settings,
        reporter: Reporter = log_reporter,
        folders: Callable[[], Roots] | None = None,
    ) -> None:
        """``folders``: in a multi-root workspace, what the tools see (every folder, this one first);
        memory, history, sessions, notes and checkpoints stay this workspace's own."""
        self.workspace = workspace
        self.folders = folders
        self.settings = settings
        self.reporter = reporter
        self.paths = StatePaths(state_root(settings.home))
        keep_private(self.paths.root)  # no tool reaches it, even when a workspace holds it
        self.key = project_key(workspace)
        self.memory = ProjectMemory(self.paths.memory_file(self.key), reporter) if settings.memory else None
        self.history = PromptHistory(self.paths.history_file(self.key), reporter)
        self.sessions = SessionManager(
            SessionStore(self.paths, reporter),
            cwd=workspace,
            provider=PROVIDER,
            model=lambda: self.settings.model,
            reporter=reporter,
            live_lock=LiveSessionLock(self.paths.root),
        )
        self.checkpoints = Checkpoints(
            CheckpointStore(self.paths.checkpoints.root, reporter),
            self.workspace_path,
            self.key,
            self.paths.root,
            folders,
        )
        self._runtime: AgentRuntime | None = None
        self.mcp = McpManager(
            self.workspace_path,
            self.paths.root,
            trusted=lambda: self.settings.trusted,
            timeout=lambda: self.settings.mcp_timeout_ms / 1000,
            reporter=reporter,
        )
        self.commands = CommandCatalogue(self.command_folders, self.paths.commands_dir)
        self.hooks = HookSettings(
            self.workspace_path,
            self.paths.user_settings,
            self.paths.hooks_trust,
            trusted=lambda: self.settings.trusted,
            user_label=display_path(self.paths.user_settings),
            reporter=reporter,
        )
        # Project and task notes; task scope without an id means the live session's latest task.
        self.notes = Notes(workspace, self.paths.root, current_session=lambda: self.sessions.current.id)
        self._notes_cache: tuple[tuple[object, ...], str] | None = None
        self.images = ImageStore(self.paths.root)

    def start_agent(self, frontend: Frontend, *, yolo: bool = False, can_ask: bool = True) -> AgentRuntime:
        """Make chat turns possible, reporting to ``frontend`` (the editor, or the terminal)."""
        self._runtime = AgentRuntime(self, frontend, yolo=yolo, can_ask=can_ask)
        return self._runtime

    # --- what a turn needs (agent.runtime.TurnServices) -----------------------------------------

    def current_settings(self) -> Settings:
        return self.settings

    def live_session(self) -> LiveSession:
        return self.sessions.current

    def roots(self) -> Roots:
        return self.folders() if self.folders is not None else self.workspace_path

    def transcript_path(self, session_id: str) -> Path:
        return self.sessions.store.path_of(session_id)

    def command_folders(self) -> list[Folder]:
        """Where the repository's custom commands are: every workspace folder, this one first."""
        roots = self.roots()
        if isinstance(roots, Folders):
            return [(name, path) for name, path in roots.entries]
        return [(None, Path(root)) for root in ([roots] if isinstance(roots, Path) else roots)]

    def reservation(self) -> AbstractAsyncContextManager[object]:
        return workspace_reservation(self.paths.root, self.workspace)

    def register_task(self, task_id: str, session_id: str, prompt: str) -> None:
        self.notes.register_task(task_id, session_id, prompt)

    async def extra_tools(self) -> list[Tool]:
        return await self.mcp.tools()

    async def notes_blocks(self) -> str:
        """Project notes and the live session's recent task notes, for the system prompt.

        Reading them means SQLite and a file, so it happens in a thread, and only when something
        changed since the last read: every write changes the database or the notes file on disk
        (whoever made it: this server, another window, the MCP server).
        """
        session_id = self.sessions.current.id
        signature = (session_id, *(_signature(p) for p in self._notes_sources()))
        if self._notes_cache is not None and self._notes_cache[0] == signature:
            return self._notes_cache[1]
        blocks = await asyncio.to_thread(self._read_notes_blocks, session_id)
        self._notes_cache = (signature, blocks)
        return blocks

    def _notes_sources(self) -> tuple[Path, ...]:
        database = self.paths.database
        return (self.notes.project_file.path, database, database.with_name(database.name + "-wal"))

    def _read_notes_blocks(self, session_id: str) -> str:
        project = self.notes.project_notes_block()
        tasks = self.notes.task_notes_block(session_id)
        return "".join(
            block if block.startswith("\n") else "\n" + block for block in (project, tasks) if block
        )

    # --- settings --------------------------------------------------------------------------------

    def configure(self, raw: dict[str, Any]) -> list[str]:
        """Apply changed settings over the current ones; returns the problems (bad keys are dropped).

        A new compaction threshold changes what the meter means, so the front end hears of it.
        """
        updated, problems = load_settings(raw, base=self.settings)
        threshold_changed = updated.compact_threshold != self.settings.compact_threshold
        self.settings = updated
        if threshold_changed and self._runtime is not None:
            self._runtime.refresh_meter_soon()
        return problems

    # --- switching sessions ----------------------------------------------------------------------

    async def resume_session(self, reference: str | None, *, latest: bool = False) -> LiveSession:
        session = await self.sessions.resume(reference, latest=latest)
        await self._session_switched()
        return session

    async def new_session(self) -> NewOutcome:
        """A fresh session (also ``/clear``): the old one is saved and stays on disk."""
        outcome = await self.sessions.new()
        await self._session_switched()
        return outcome

    async def _session_switched(self) -> None:
        """The front end hears of the new session's task list and context meter (once per switch)."""
        if self._runtime is not None:
            self._runtime.frontend.todos_changed()
            await self._runtime.announce_context()

    # --- sessions with their notes ---------------------------------------------------------------

    async def export_session(self, reference: str | None, format: ExportFormat) -> str:
        """The session (JSON or Markdown) with its task notes, within the 32 MB export limit."""
        record = await self.sessions.record_of(reference)
        notes = await asyncio.to_thread(self.notes.store.notes_for_export, record.id)
        return await asyncio.to_thread(
            export_text,
            record,
            format,
            extra_json={"notes": notes.to_json()},
            extra_markdown=notes.to_markdown(),
            images=self.image_data,
        )

    async def add_image(
        self, name: str, *, data: bytes | None = None, path: str | None = None
    ) -> tuple[StoredImage, str]:
        """Keep an image the user gave (its bytes, or a file of the workspace): the kept image and a
        thumbnail (``data:`` URL). ``ShiroError`` says why it cannot be kept."""

        def add() -> tuple[StoredImage, str]:
            try:
                raw = data if data is not None else read_image_file(self.roots(), path or "")
            except ToolError as error:
                raise ShiroError(error.message) from None
            kept = self.images.add(raw, name)
            return kept, self.images.thumbnail(kept.id) or ""

        return await asyncio.to_thread(add)

    def image_thumbnails(self, messages: list[Message]) -> dict[str, str]:
        """Thumbnails of the images ``messages`` hold, by id (blocking: reads the store)."""
        found: dict[str, str] = {}
        for part in stored_images(messages):
            image_id = str(part["imageId"])
            if image_id not in found and (thumbnail := self.images.thumbnail(image_id)) is not None:
                found[image_id] = thumbnail
        return found

    def image_base64(self, image_id: str) -> tuple[str, str] | None:
        """A kept image as (base64, media type), or None when it is gone (ACP replays it so)."""
        found = self.images.read(image_id)
        return (base64.b64encode(found[0]).decode("ascii"), found[1]) if found is not None else None

    def image_data(self, image_id: str) -> str | None:
        """A kept image as a ``data:`` URL (an export carries its images), or None when it is gone."""
        found = self.images.read(image_id)
        return data_url(*found) if found is not None else None

    async def branch_session(self, reference: str | None, at_message: int | None) -> SessionSummary:
        """A new session with the history up to a message and a full copy of the source's task notes.

        If the notes cannot all be copied (over the archive limits), the branch is removed again:
        a branch never exists without its notes.
        """
        source = await self.sessions.record_of(reference)
        branch = await self.sessions.branch(source.id, at_message)
        try:
            await asyncio.to_thread(self.notes.store.copy_notes_for_branch, source.id, branch.id)
        except ShiroError:
            await self.sessions.delete(branch.id)
            raise
        return branch

    async def delete_session(self, reference: str) -> bool:
        """Explicit user action: the session file, its index row, its task notes (not a branch's copy)
        and its checkpoints."""
        session_id = await asyncio.to_thread(self.sessions.store.resolve, reference)
        deleted = await self.sessions.delete(session_id)
        await asyncio.to_thread(self.notes.store.delete_session_notes, session_id)
        await asyncio.to_thread(self.checkpoints.delete_session, session_id)
        return deleted

    def live_chat(self) -> ChatSession:
        """The live session's messages, for a chat restore running in a thread (call on the loop).

        The replacement itself runs on the loop, as every change of the live session does.
        """
        loop = asyncio.get_running_loop()
        session = self.sessions.current

        def put(messages: list[Message]) -> None:
            async def apply() -> None:
                session.replace(messages)

            asyncio.run_coroutine_threadsafe(apply(), loop).result()

        return ChatSession(lambda: list(session.messages), put)

    async def stop_agent(self) -> None:
        """Shutdown: waiting chats are cleared and the running one is cancelled (bounded wait)."""
        if self._runtime is not None:
            await self._runtime.queue.stop()

    @property
    def has_agent(self) -> bool:
        return self._runtime is not None

    @property
    def runtime(self) -> AgentRuntime:
        if self._runtime is None:
            raise ShiroError("Chat is not available: the agent was not started.")
        return self._runtime

    @property
    def tasks(self) -> TaskList:
        """The live session's task list (it is saved and restored with the session)."""
        return self.sessions.current.tasks

    @property
    def workspace_path(self) -> Path:
        return Path(self.workspace)

    def clean_stale_temp_files(self) -> list[Path]:
        """Temp files that interrupted writes (a kill, a power cut) left in Shiro's folders."""
        paths = self.paths
        folders = [paths.root, paths.memory_dir, paths.history_dir, paths.sessions_dir, paths.tasks_dir]
        folders.append(self.notes.project_file.path.parent)
        return clean_stale_temp_files(folders)

    def require_memory(self) -> ProjectMemory:
        if self.memory is None:
            raise ShiroError(DISABLED_TEXT)
        return self.memory

    def require_writable(self) -> None:
        if not self.settings.trusted:
            raise ReadOnly(RESTRICTED_TEXT)

    def remember(self, kind: str, text: str) -> RememberResult:
        self.require_writable()
        return self.require_memory().remember(kind, text)

    def remember_selection(self, kind: str, text: str) -> RememberResult:
        """'Remember this' on a selection: many lines become one line."""
        return self.remember(kind, re.sub(r"\s+", " ", text))

    def update_todos(self, todos: list[Todo]) -> str:
        return self.sessions.current.set_todos(todos)

    async def list_models(self, base_url: str | None = None) -> ModelListing:
        """The models at ``base_url`` (default: the configured endpoint).

        The configured API key goes only to the configured endpoint; another address is asked
        without it (a local server needs none).
        """
        configured = self.settings.base_url
        same = base_url is None or (configured or "").rstrip("/") == base_url.rstrip("/")
        if same:
            return await list_endpoint_models(configured, self.settings.api_key)
        return await list_endpoint_models(base_url, None, use_environment_key=False)

    def summarizer(self) -> Summarizer | None:
        """The model call used by memory compaction."""
        return self._runtime.summarize_memory if self._runtime is not None else None


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_ino, stat.st_mtime_ns, stat.st_size)
