"""`shiro-lsp mcp` driven by the MCP SDK's own stdio client, as another agent would use it."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from shiro_lsp.state.notes import Notes
from shiro_lsp.state.task_notes import EMPTY_HASH, note_hash


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "state"


@asynccontextmanager
async def mcp_session(workspace: Path, home: Path, *extra: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "shiro_lsp", "mcp", "--workspace", str(workspace), "--home", str(home), *extra],
        cwd=str(workspace),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> Any:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def refused(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error
    text: str = result.content[0].text
    return text


async def test_read_append_replace_project_and_task_notes(workspace: Path, home: Path) -> None:
    Notes(str(workspace), home).register_task("task-1", "session-1", "fix the parser")
    async with mcp_session(workspace, home, "--allow-write") as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert {"shiro_memory", "remember", "recall", "forget"} <= tools

        empty = await call(session, "shiro_memory", action="read")
        assert empty == {
            "project": "",
            "task": "",
            "project_hash": EMPTY_HASH,
            "task_hash": EMPTY_HASH,
            "task_id": None,
            "problems": [],
        }
        appended = await call(
            session, "shiro_memory", action="append", note="Run the offline fixtures first."
        )
        assert appended["project"] == "Run the offline fixtures first."
        assert (
            workspace / ".shiro" / "memory" / "project.md"
        ).read_text() == "Run the offline fixtures first."

        task = await call(
            session,
            "shiro_memory",
            action="append",
            scope="task",
            task_id="task-1",
            note="Keep the regression.",
        )
        assert task["task"] == "Keep the regression." and task["task_id"] == "task-1"

        replaced = await call(
            session,
            "shiro_memory",
            action="replace",
            scope="task",
            task_id="task-1",
            note="Revised",
            expected_hash=task["task_hash"],
        )
        assert replaced["task"] == "Revised" and replaced["task_hash"] == note_hash("Revised")

        stale = await refused(
            session,
            "shiro_memory",
            action="replace",
            scope="task",
            task_id="task-1",
            note="lost",
            expected_hash=task["task_hash"],
        )
        assert "changed since you read them" in stale
        assert "hash" in await refused(session, "shiro_memory", action="replace", note="no hash given")
        assert "task_id" in await refused(session, "shiro_memory", action="read", scope="task")
        assert "not a task id" in await refused(
            session, "shiro_memory", action="read", scope="task", task_id="../../x"
        )
        assert "no task" in await refused(
            session, "shiro_memory", action="read", scope="task", task_id="unknown-task"
        )

        remembered = await call(session, "remember", kind="gotcha", text="the seed runs after migrations")
        assert remembered == {"result": "Remembered as gotcha (1 stored): the seed runs after migrations"}
        assert (await call(session, "recall", query="seed"))[
            "result"
        ] == "(gotcha) the seed runs after migrations"
        assert (await call(session, "forget", text="seed"))["result"] == "Forgot 1 memory."

    reread = Notes(str(workspace), home).read("task-1")
    assert reread.task == "Revised" and reread.project == "Run the offline fixtures first."


async def test_without_allow_write_reads_work_and_writes_are_refused(workspace: Path, home: Path) -> None:
    notes = Notes(str(workspace), home)
    notes.register_task("task-1", "session-1", "x")
    notes.append("project", "keep me")
    notes.append("task", "task text", "task-1")
    async with mcp_session(workspace, home) as session:
        read = await call(session, "shiro_memory", action="read", scope="task", task_id="task-1")
        assert read["project"] == "keep me" and read["task"] == "task text"

        for arguments in (
            {"action": "append", "note": "x"},
            {"action": "append", "scope": "task", "task_id": "task-1", "note": "x"},
            {"action": "replace", "note": "", "expected_hash": read["project_hash"]},
        ):
            assert "read-only" in await refused(session, "shiro_memory", **arguments)
            assert "--allow-write" in await refused(session, "shiro_memory", **arguments)
        assert "read-only" in await refused(session, "remember", kind="fact", text="x")
        assert "read-only" in await refused(session, "forget", text="keep")
    after = Notes(str(workspace), home).read("task-1")
    assert (after.project, after.task) == ("keep me", "task text")
