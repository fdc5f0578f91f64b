"""The session's own tools (spec §1.3–1.5, §2.2): the task list and project memory.

Descriptions are the reference's, word for word: they are what teaches the model when to use them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import Field

from shiro_lsp.errors import ShiroError, ToolError
from shiro_lsp.state.memory import KINDS_DESCRIBED, Kind, ProjectMemory
from shiro_lsp.state.todos import Status, TaskList, parse_todos
from shiro_lsp.tools.base import Tool, ToolContext, ToolInput, ToolSpec, field_subject, typed_tool


class TodoItem(ToolInput):
    content: str = Field(
        description='One concrete action with a verifiable outcome, e.g. "add limit/offset to listUsers()"'
    )
    status: Status
    note: str | None = Field(
        None,
        description="Required for blocked: what is blocking it. Otherwise a short finding worth keeping.",
    )


class TodoWriteInput(ToolInput):
    todos: list[TodoItem] = Field(description="The complete list, in the order you will do them")


class RememberInput(ToolInput):
    kind: Kind = Field(description=KINDS_DESCRIBED)
    text: str = Field(description="One self-contained line, understandable with no other context")


class RecallInput(ToolInput):
    query: str = Field(description="Words that would appear in the note")


class ForgetInput(ToolInput):
    text: str = Field(description="Exact text of the memory to remove, or a distinctive part of it")


TODO_WRITE = ToolSpec(
    name="todo_write",
    description=(
        "Record or update your task list for a multi-step job. Send the whole list every time; it replaces "
        "the previous one. Exactly one task should be in_progress. Mark a task done the moment it is "
        "finished, not in a batch at the end. Use blocked with a note when something outside your control "
        "stops you. The list is shown to the user and survives context compaction, so it is where your plan "
        "lives. Skip it entirely for single-step work."
    ),
    input_model=TodoWriteInput,
    plan_safe=True,
    default_rule="allow",
    auto_approved=True,
    prompt_hint="your task list for multi-step work; send the whole list each time.",
)

REMEMBER = ToolSpec(
    name="remember",
    description=(
        "Record something about this project that will still be true next session: a decision and its "
        "reason, a command that works, a constraint, a trap you hit. Persisted across sessions and shown to "
        "you at start. Do not use it for narration or for anything specific to the current task only."
    ),
    input_model=RememberInput,
    mutating=True,
    subject=field_subject("text"),
    plan_safe=True,
    default_rule="allow",
    auto_approved=True,
    prompt_hint="record what stays true about this project for later sessions.",
)

RECALL = ToolSpec(
    name="recall",
    description=(
        "Search what you recorded about this project in earlier sessions. Use it before investigating "
        "anything that might already be known, and when the user refers to past work."
    ),
    input_model=RecallInput,
    subject=field_subject("query"),
    plan_safe=True,
    default_rule="allow",
    auto_approved=True,
    prompt_hint="search what you recorded in earlier sessions.",
)

FORGET = ToolSpec(
    name="forget",
    description=(
        "Remove a memory that turned out to be wrong or is now obsolete. Search with recall first to get its text."
    ),
    input_model=ForgetInput,
    mutating=True,
    subject=field_subject("text"),
    default_rule="allow",
    auto_approved=True,
    prompt_hint="remove a memory that is wrong or obsolete.",
)

SESSION_SPECS: tuple[ToolSpec, ...] = (TODO_WRITE, REMEMBER, RECALL, FORGET)
"""The tools that belong to the session (task list, project memory); handlers are made per session."""


def todo_tool(tasks: Callable[[], TaskList], on_change: Callable[[], None]) -> Tool:
    async def run(input: TodoWriteInput, ctx: ToolContext) -> str:
        try:
            todos = parse_todos([item.model_dump(exclude_none=True) for item in input.todos])
        except ShiroError as error:
            raise ToolError(error.message) from None
        reply = tasks().replace(todos)
        on_change()
        return reply

    return typed_tool(TODO_WRITE, TodoWriteInput, run)


def memory_tools(memory: ProjectMemory) -> list[Tool]:
    async def call(fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return await asyncio.to_thread(fn, *args)
        except ShiroError as error:
            raise ToolError(error.message) from None

    async def remember(input: RememberInput, ctx: ToolContext) -> str:
        return str((await call(memory.remember, input.kind, input.text)).text)

    async def recall(input: RecallInput, ctx: ToolContext) -> str:
        return str((await call(memory.recall, input.query)).text)

    async def forget(input: ForgetInput, ctx: ToolContext) -> str:
        return str((await call(memory.forget, input.text)).text)

    return [
        typed_tool(REMEMBER, RememberInput, remember),
        typed_tool(RECALL, RecallInput, recall),
        typed_tool(FORGET, ForgetInput, forget),
    ]
