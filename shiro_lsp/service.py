"""One workspace's Shiro: settings, stores and the live session. Every front door drives this.

Methods here are synchronous and may block on file I/O and cross-process locks; async callers
run them with ``asyncio.to_thread``.
"""

from __future__ import annotations

import re
from pathlib import Path

from shiro_lsp.config import Settings
from shiro_lsp.errors import ReadOnly, ShiroError
from shiro_lsp.state.history import PromptHistory
from shiro_lsp.state.jsonstore import Reporter, log_reporter
from shiro_lsp.state.memory import DISABLED_TEXT, ProjectMemory, RememberResult, Summarizer
from shiro_lsp.state.notes import Notes
from shiro_lsp.state.paths import StatePaths, project_key, state_root
from shiro_lsp.state.todos import TaskList, Todo

RESTRICTED_TEXT = (
    "This workspace is in restricted mode (not trusted), so Shiro is read-only here: "
    "no file changes, commands, memory or notes writes. Trust the workspace to allow them."
)


class Shiro:
    def __init__(self, workspace: str, settings: Settings, reporter: Reporter = log_reporter) -> None:
        self.workspace = workspace
        self.settings = settings
        self.reporter = reporter
        self.paths = StatePaths(state_root(settings.home))
        self.key = project_key(workspace)
        self.memory = ProjectMemory(self.paths.memory_file(self.key), reporter) if settings.memory else None
        self.history = PromptHistory(self.paths.history_file(self.key), reporter)
        self.tasks = TaskList()
        # Project and task notes; set ``notes.current_session`` once sessions exist.
        self.notes = Notes(workspace, self.paths.root)

    @property
    def workspace_path(self) -> Path:
        return Path(self.workspace)

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
        return self.tasks.replace(todos)

    def summarizer(self) -> Summarizer | None:
        """The model call used by memory compaction; None until a model is configured."""
        return None
