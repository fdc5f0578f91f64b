"""The task list (spec §2): where the agent's plan lives, shown to the user and the model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from shiro_lsp.errors import BadParams

Status = Literal["pending", "in_progress", "done", "blocked"]
STATUSES: tuple[str, ...] = get_args(Status)
MARKS = {"pending": "[ ]", "in_progress": "[~]", "done": "[x]", "blocked": "[!]"}
BAR_WIDTH = 40


@dataclass(frozen=True)
class Todo:
    content: str
    status: str
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"content": self.content, "status": self.status}
        if self.note is not None:
            value["note"] = self.note
        return value

    @property
    def line(self) -> str:
        note = f"  ({self.note.strip()})" if self.note and self.note.strip() else ""
        return f"{MARKS[self.status]} {self.content}{note}"


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    blocked: int
    current: str | None

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"done": self.done, "total": self.total, "blocked": self.blocked}
        if self.current is not None:
            value["current"] = self.current
        return value


def parse_todos(value: Any) -> list[Todo]:
    """Validate a todo list from the model or the user; a bad item is an error naming it."""
    if not isinstance(value, list):
        raise BadParams("todos must be a list of {content, status, note?}")
    todos = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise BadParams(f"todos[{index}] must be an object with content and status")
        content, status, note = item.get("content"), item.get("status"), item.get("note")
        if not isinstance(content, str) or not content.strip():
            raise BadParams(f"todos[{index}].content must be non-empty text")
        if status not in STATUSES:
            raise BadParams(f'todos[{index}].status "{status}" is not one of: {", ".join(STATUSES)}')
        if note is not None and not isinstance(note, str):
            raise BadParams(f"todos[{index}].note must be text")
        todos.append(Todo(content, status, note))
    return todos


def restore_todos(value: Any) -> list[Todo]:
    """Lenient restore from a saved session (§2.4): keep only valid items, silently."""
    if not isinstance(value, list):
        return []
    return [
        Todo(item["content"], item["status"], item.get("note") if isinstance(item.get("note"), str) else None)
        for item in value
        if isinstance(item, dict) and isinstance(item.get("content"), str) and item.get("status") in STATUSES
    ]


@dataclass
class TaskList:
    todos: list[Todo] = field(default_factory=list)
    rev: int = 0

    def replace(self, todos: list[Todo]) -> str:
        """`todo_write`: replace the whole list; returns the tool's reply with its warnings."""
        self.todos = list(todos)
        self.rev += 1
        progress = self.progress()
        lines = [f"Task list updated: {progress.done}/{progress.total} done.", *(t.line for t in self.todos)]
        warnings = self.warnings()
        if warnings:
            lines.append("Warning: " + " ".join(warnings))
        return "\n".join(lines)

    def clear(self) -> None:
        if self.todos:
            self.todos = []
            self.rev += 1

    def progress(self) -> Progress:
        done = sum(t.status == "done" for t in self.todos)
        blocked = sum(t.status == "blocked" for t in self.todos)
        current = next((t.content for t in self.todos if t.status == "in_progress"), None)
        return Progress(done, len(self.todos), blocked, current)

    def warnings(self) -> list[str]:
        progress = self.progress()
        in_progress = sum(t.status == "in_progress" for t in self.todos)
        warnings = []
        if in_progress > 1:
            warnings.append(f"{in_progress} tasks are in_progress; keep it to one.")
        remaining = progress.total - progress.done
        if in_progress == 0 and progress.done < progress.total and progress.blocked < remaining:
            warnings.append("nothing is in_progress; mark what you are working on.")
        warnings += [
            f'"{t.content}" is blocked with no note saying why.'
            for t in self.todos
            if t.status == "blocked" and not (t.note or "").strip()
        ]
        return warnings

    def prompt_block(self) -> str:
        """The system-prompt block, appended last (§2.3); '' when the list is empty."""
        if not self.todos:
            return ""
        p = self.progress()
        blocked = f", {p.blocked} blocked" if p.blocked > 0 else ""
        header = f"\nYour task list ({p.done}/{p.total} done{blocked}). Keep it current with todo_write:"
        return header + "\n" + "\n".join(t.line for t in self.todos)

    def progress_line(self) -> str:
        """`tasks ####.... 1/4  1 blocked`, 40 cells."""
        p = self.progress()
        filled = round(p.done / p.total * BAR_WIDTH) if p.total else 0
        blocked = f"  {p.blocked} blocked" if p.blocked > 0 else ""
        return f"tasks {'#' * filled}{'.' * (BAR_WIDTH - filled)} {p.done}/{p.total}{blocked}"

    def rendered(self) -> str:
        """The live panel: the progress line, then one line per task ('' when empty)."""
        if not self.todos:
            return ""
        return "\n".join([self.progress_line(), *(t.line for t in self.todos)])

    def markdown(self) -> str:
        """The `/todos` panel body."""
        if not self.todos:
            return "No task list yet."
        return "\n".join(
            f"- {MARKS[t.status]} {t.content}" + (f" ({t.note})" if t.note else "") for t in self.todos
        )

    def to_json(self) -> list[dict[str, Any]]:
        return [t.to_json() for t in self.todos]
