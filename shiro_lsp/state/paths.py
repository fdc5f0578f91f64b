"""Where state lives (design: "State on disk")."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

STATE_DIR_NAME = ".shiro-neko"


def state_root(home: str | None = None, env: dict[str, str] | None = None) -> Path:
    """The state root: ``home`` itself, else ``$SHIRO_HOME/.shiro-neko``, else ``~/.shiro-neko``."""
    if home:
        return Path(home).expanduser()
    environ = os.environ if env is None else env
    parent = environ.get("SHIRO_HOME")
    return (Path(parent).expanduser() if parent else Path.home()) / STATE_DIR_NAME


def project_key(workspace: str) -> str:
    """First 16 hex chars of SHA-256 of the workspace path string, unnormalised (as the reference)."""
    return hashlib.sha256(workspace.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class CheckpointPaths:
    """Inside the checkpoints folder: one folder per session, the shared blobs and the scan caches."""

    root: Path

    @property
    def blobs_dir(self) -> Path:
        return self.root / "blobs"

    @property
    def scans_dir(self) -> Path:
        return self.root / "scans"

    def scan_cache(self, project_key: str) -> Path:
        return self.scans_dir / f"{project_key}.json"

    def is_shared(self, name: str) -> bool:
        """Whether a folder in ``root`` is shared by all sessions (not a session's)."""
        return name in (self.blobs_dir.name, self.scans_dir.name)


@dataclass(frozen=True)
class StatePaths:
    """The layout of the state root, the one place its names are written."""

    root: Path

    @property
    def memory_dir(self) -> Path:
        return self.root / "memory"

    def memory_file(self, key: str) -> Path:
        return self.memory_dir / f"{key}.json"

    @property
    def history_dir(self) -> Path:
        return self.root / "history"

    def history_file(self, key: str) -> Path:
        return self.history_dir / f"{key}.json"

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    @property
    def database(self) -> Path:
        return self.root / "shiro.db"

    @property
    def tasks_dir(self) -> Path:
        return self.root / "tasks"

    @property
    def checkpoints(self) -> CheckpointPaths:
        return CheckpointPaths(self.root / "checkpoints")

    @property
    def locks_dir(self) -> Path:
        return self.root / "locks"

    def session_lock(self, session_id: str) -> Path:
        return self.locks_dir / f"session-{session_id}.lock"

    @property
    def commands_dir(self) -> Path:
        """The user's own custom commands (``commands/*.md``)."""
        return self.root / "commands"

    @property
    def user_settings(self) -> Path:
        """The user's settings file: its ``hooks`` (Claude Code's format) run in every workspace."""
        return self.root / "settings.json"

    @property
    def hooks_trust(self) -> Path:
        """The repository hooks (``.shiro/settings.json``) the user trusted, per workspace."""
        return self.root / "hooks-trust.json"

    def workspace_lock(self, workspace_key: str) -> Path:
        return self.locks_dir / f"workspace-{workspace_key}.lock"
