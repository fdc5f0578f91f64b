"""The session's own tools (spec §1.3–1.5, §2.2): the task list and project memory.

Descriptions are the reference's, word for word: they are what teaches the model when to use them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from shiro_lsp.agent.tools.base import JsonObject, Tool, ToolContext, ToolError, ToolSpec, field_subject
from shiro_lsp.errors import ShiroError
from shiro_lsp.state.memory import ProjectMemory
from shiro_lsp.state.todos import STATUSES, TaskList, parse_todos

TODO_WRITE = ToolSpec(
    name="todo_write",
    description=(
        "Record or update your task list for a multi-step job. Send the whole list every time; it replaces "
        "the previous one. Exactly one task should be in_progress. Mark a task done the moment it is "
        "finished, not in a batch at the end. Use blocked with a note when something outside your control "
        "stops you. The list is shown to the user and survives context compaction, so it is where your plan "
        "lives. Skip it entirely for single-step work."
    ),
    parameters={
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": "The complete list, in the order you will do them",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {
                            "type": "string",
                            "description": 'One concrete action with a verifiable outcome, e.g. "add limit/offset to listUsers()"',
                        },
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "note": {
                            "type": "string",
                            "description": "Required for blocked: what is blocking it. Otherwise a short finding worth keeping.",
                        },
                    },
                    "required": ["content", "status"],
                },
            }
        },
        "required": ["todos"],
    },
)

REMEMBER = ToolSpec(
    name="remember",
    description=(
        "Record something about this project that will still be true next session: a decision and its "
        "reason, a command that works, a constraint, a trap you hit. Persisted across sessions and shown to "
        "you at start. Do not use it for narration or for anything specific to the current task only."
    ),
    parameters={
        "type": "object",
        "properties": {
            "kind": {
                "type": "string",
                "enum": ["fact", "decision", "gotcha", "command"],
                "description": "fact: how it is. decision: what was chosen and why. gotcha: a trap. command: an invocation that works",
            },
            "text": {
                "type": "string",
                "description": "One self-contained line, understandable with no other context",
            },
        },
        "required": ["kind", "text"],
    },
    mutating=True,
    subject=field_subject("text"),
)

RECALL = ToolSpec(
    name="recall",
    description=(
        "Search what you recorded about this project in earlier sessions. Use it before investigating "
        "anything that might already be known, and when the user refers to past work."
    ),
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string", "description": "Words that would appear in the note"}},
        "required": ["query"],
    },
    subject=field_subject("query"),
)

FORGET = ToolSpec(
    name="forget",
    description=(
        "Remove a memory that turned out to be wrong or is now obsolete. Search with recall first to get its text."
    ),
    parameters={
        "type": "object",
        "properties": {
            "text": {
                "type": "string",
                "description": "Exact text of the memory to remove, or a distinctive part of it",
            }
        },
        "required": ["text"],
    },
    mutating=True,
    subject=field_subject("text"),
)


def todo_tool(tasks: Callable[[], TaskList], on_change: Callable[[], None]) -> Tool:
    async def run(input: JsonObject, ctx: ToolContext) -> str:
        try:
            todos = parse_todos(input.get("todos"))
        except ShiroError as error:
            raise ToolError(error.message) from None
        reply = tasks().replace(todos)
        on_change()
        return reply

    return Tool(TODO_WRITE, run)


def memory_tools(memory: ProjectMemory) -> list[Tool]:
    async def call(fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return await asyncio.to_thread(fn, *args)
        except ShiroError as error:
            raise ToolError(error.message) from None

    async def remember(input: JsonObject, ctx: ToolContext) -> str:
        return str((await call(memory.remember, input["kind"], input["text"])).text)

    async def recall(input: JsonObject, ctx: ToolContext) -> str:
        return str((await call(memory.recall, input["query"])).text)

    async def forget(input: JsonObject, ctx: ToolContext) -> str:
        return str((await call(memory.forget, input["text"])).text)

    return [Tool(REMEMBER, remember), Tool(RECALL, recall), Tool(FORGET, forget)]
