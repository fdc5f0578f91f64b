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
class StatePaths:
    root: Path

    def memory_file(self, key: str) -> Path:
        return self.root / "memory" / f"{key}.json"

    def history_file(self, key: str) -> Path:
        return self.root / "history" / f"{key}.json"

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    @property
    def database(self) -> Path:
        return self.root / "shiro.db"

    @property
    def tasks_dir(self) -> Path:
        return self.root / "tasks"
