"""Small helpers shared by the provider tests."""

from __future__ import annotations

from typing import Any

from shiro_lsp.providers import ModelClient, ModelEvent, ModelRequest, StepFinished, ToolSpec

READ_FILE = ToolSpec(
    "read_file",
    "Read a file of the workspace.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def request(messages: list[dict[str, Any]], **overrides: Any) -> ModelRequest:
    fields: dict[str, Any] = {"model": "gpt-5", "instructions": "You are Shiro.", "messages": messages}
    return ModelRequest(**{**fields, **overrides})


async def collect(client: ModelClient, req: ModelRequest) -> list[ModelEvent]:
    return [event async for event in client.stream(req)]


def finished(events: list[ModelEvent]) -> StepFinished:
    last = events[-1]
    assert isinstance(last, StepFinished), events
    return last
