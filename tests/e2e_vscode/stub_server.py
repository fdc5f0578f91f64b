"""A stand-in for shiro_lsp that speaks the client-facing part of the wire contract (design.md v1).

Only for the VS Code end-to-end harness while the real turn engine is being built: it lets the client's
chat, approvals, cancel, queue, task list, meter and sessions be exercised in a real VS Code against the
scripted model (tests/fakes/fake_openai.py). Select it with ``SHIRO_E2E_SERVER=stub scripts/e2e.sh``.
It is deliberately tiny: Chat Completions only, two tools (write_file asks for approval, todo_write
does not), sessions in memory. Delete it once the real server passes the same scenarios.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import openai
from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "todo_write",
            "parameters": {
                "type": "object",
                "properties": {"todos": {"type": "array", "items": {"type": "object"}}},
                "required": ["todos"],
            },
        },
    },
]


def plain_dict_converter() -> Any:
    converter = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, lambda obj, cls: cls(**obj))
    return converter


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class Stub:
    def __init__(self) -> None:
        self.options: dict[str, Any] = {}
        self.workspace = Path.cwd()
        self.sessions: dict[str, dict[str, Any]] = {}
        self.session = self.fresh_session()
        self.lock = asyncio.Lock()
        self.queued: list[dict[str, str]] = []
        self.waiters: dict[str, asyncio.Future[None]] = {}
        self.tokens = 0
        self.cost = 0.0

    def fresh_session(self) -> dict[str, Any]:
        return {
            "id": str(uuid.uuid4()),
            "title": "untitled",
            "createdAt": now(),
            "updatedAt": now(),
            "messages": [],
            "wire": [],
            "todos": [],
        }

    def info(self, s: dict[str, Any] | None = None) -> dict[str, Any]:
        s = s or self.session
        return {
            "id": s["id"],
            "title": s["title"],
            "cwd": str(self.workspace),
            "createdAt": s["createdAt"],
            "updatedAt": s["updatedAt"],
            "messageCount": len(s["messages"]),
            "model": self.model,
            "inputTokens": 0,
            "outputTokens": 0,
            "costUsd": self.cost,
        }

    @property
    def model(self) -> str:
        return str(self.options.get("model") or "fake-model")

    def todos(self) -> dict[str, Any]:
        todos = self.session["todos"]
        done = sum(1 for t in todos if t.get("status") == "done")
        blocked = sum(1 for t in todos if t.get("status") == "blocked")
        bar = "#" * round(40 * done / len(todos)) if todos else ""
        rendered = "\n".join(
            [f"tasks {bar.ljust(40, '.')} {done}/{len(todos)}"] + [t["content"] for t in todos]
        )
        return {
            "todos": todos,
            "progress": {"done": done, "total": len(todos), "blocked": blocked},
            "rendered": rendered if todos else "",
        }

    def meter(self) -> dict[str, Any]:
        threshold = int(self.options.get("compactThreshold") or 100_000)
        percent = round(100 * self.tokens / threshold)
        level = (
            "critical"
            if self.tokens >= 0.9 * threshold
            else "warn"
            if 3 * self.tokens >= 2 * threshold
            else "ok"
        )
        return {
            "tokens": self.tokens,
            "threshold": threshold,
            "percent": percent,
            "level": level,
            "estimated": False,
        }

    def save(self) -> None:
        if self.session["messages"]:
            self.session["updatedAt"] = now()
            self.sessions[self.session["id"]] = self.session


stub = Stub()
server = LanguageServer("shiro-e2e-stub", "0", converter_factory=plain_dict_converter)


def notify(method: str, params: Any) -> None:
    server.protocol.notify(method, params)


@server.feature(types.INITIALIZE)
def on_initialize(ls: LanguageServer, params: types.InitializeParams) -> None:
    stub.options = params.initialization_options or {}
    if params.root_uri:
        stub.workspace = Path(params.root_uri.removeprefix("file://"))


async def run_turn(task_id: str, text: str) -> str:
    seq = 0

    def event(payload: dict[str, Any]) -> None:
        nonlocal seq
        notify(
            "shiro/event", {"sessionId": stub.session["id"], "taskId": task_id, "seq": seq, "event": payload}
        )
        seq += 1

    session = stub.session
    if session["title"] == "untitled":
        session["title"] = text[:60]
    session["messages"].append({"role": "user", "content": text})
    session["wire"].append({"role": "user", "content": text})
    client = openai.AsyncOpenAI(
        base_url=stub.options.get("baseUrl"), api_key=os.environ.get("OPENAI_API_KEY", "x")
    )
    try:
        for _ in range(5):
            stream = await client.chat.completions.create(
                model=stub.model,
                messages=session["wire"],
                tools=TOOLS,
                stream=True,
                stream_options={"include_usage": True},
            )
            answer, calls = "", {}
            async with stream:
                async for chunk in stream:
                    if chunk.usage:
                        stub.tokens = chunk.usage.prompt_tokens
                    for choice in chunk.choices:
                        if choice.delta.content:
                            answer += choice.delta.content
                            event({"type": "text", "text": choice.delta.content})
                        for call in choice.delta.tool_calls or []:
                            slot = calls.setdefault(call.index, {"id": call.id, "name": "", "args": ""})
                            slot["id"] = call.id or slot["id"]
                            if call.function:
                                slot["name"] += call.function.name or ""
                                slot["args"] += call.function.arguments or ""
            notify("shiro/context/changed", stub.meter())
            parts: list[dict[str, Any]] = [{"type": "text", "text": answer}] if answer else []
            parts += [
                {
                    "type": "tool-call",
                    "toolCallId": c["id"],
                    "toolName": c["name"],
                    "input": json.loads(c["args"] or "{}"),
                }
                for c in calls.values()
            ]
            session["messages"].append({"role": "assistant", "content": parts or answer})
            wire_calls = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["args"]}}
                for c in calls.values()
            ]
            session["wire"].append(
                {
                    "role": "assistant",
                    "content": answer or None,
                    **({"tool_calls": wire_calls} if calls else {}),
                }
            )
            if not calls:
                break
            for call in calls.values():
                await run_tool(task_id, call, event, session)
        event({"type": "done"})
        return "done"
    except asyncio.CancelledError:
        event({"type": "done"})
        return "cancelled"
    finally:
        stub.save()


async def run_tool(task_id: str, call: dict[str, Any], event: Any, session: dict[str, Any]) -> None:
    args = json.loads(call["args"] or "{}")
    event({"type": "tool-call", "id": call["id"], "name": call["name"], "input": args})
    output = "ok"
    if call["name"] == "write_file":
        reply = await server.protocol.send_request_async(
            "shiro/approve",
            {
                "taskId": task_id,
                "toolName": "write_file",
                "input": args,
                "suggestedPattern": args.get("path", ""),
                "repeated": False,
            },
        )
        if reply.get("decision") not in ("once", "always"):
            event({"type": "tool-denied", "id": call["id"], "name": call["name"]})
            output = "denied by the user"
        else:
            (stub.workspace / args["path"]).write_text(args["content"], encoding="utf-8")
            output = f"wrote {args['path']}"
    elif call["name"] == "todo_write":
        session["todos"] = args["todos"]
        notify("shiro/todos/changed", stub.todos())
    event(
        {
            "type": "tool-result",
            "id": call["id"],
            "name": call["name"],
            "output": {"type": "text", "value": output},
        }
    )
    session["wire"].append({"role": "tool", "tool_call_id": call["id"], "content": output})
    session["messages"].append(
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": call["id"],
                    "toolName": call["name"],
                    "output": {"type": "text", "value": output},
                }
            ],
        }
    )


def chat_result(task_id: str, stop: str) -> dict[str, Any]:
    return {
        "sessionId": stub.session["id"],
        "taskId": task_id,
        "stopReason": stop,
        "usage": {"inputTokens": stub.tokens, "outputTokens": 0, "costUsd": stub.cost},
    }


@server.feature("shiro/chat")
async def chat(ls: LanguageServer, params: dict[str, Any]) -> dict[str, Any]:
    task_id = f"t{uuid.uuid4().hex[:8]}"
    entry = {"taskId": task_id, "text": params["text"]}
    stub.queued.append(entry)
    try:
        async with stub.lock:
            if entry not in stub.queued:
                return chat_result(task_id, "queue-cleared")
            stub.queued.remove(entry)
            return chat_result(task_id, await run_turn(task_id, params["text"]))
    except asyncio.CancelledError:
        if entry in stub.queued:
            stub.queued.remove(entry)
        return chat_result(task_id, "cancelled")


@server.feature("shiro/queue")
async def queue(ls: LanguageServer, params: Any) -> dict[str, Any]:
    return {"queued": list(stub.queued)}


@server.feature("shiro/queue/clear")
async def queue_clear(ls: LanguageServer, params: Any) -> dict[str, Any]:
    cleared = len(stub.queued)
    stub.queued.clear()
    return {"cleared": cleared}


@server.feature("shiro/todos")
async def todos(ls: LanguageServer, params: Any) -> dict[str, Any]:
    return stub.todos()


@server.feature("shiro/context")
async def context(ls: LanguageServer, params: Any) -> dict[str, Any]:
    return stub.meter()


@server.feature("shiro/history")
async def history(ls: LanguageServer, params: Any) -> dict[str, Any]:
    return {"prompts": []}


@server.feature("shiro/session/current")
async def current(ls: LanguageServer, params: Any) -> dict[str, Any]:
    return stub.info()


@server.feature("shiro/session/list")
async def session_list(ls: LanguageServer, params: Any) -> dict[str, Any]:
    stub.save()
    ordered = sorted(stub.sessions.values(), key=lambda s: s["updatedAt"], reverse=True)
    return {"sessions": [stub.info(s) for s in ordered]}


@server.feature("shiro/session/new")
async def session_new(ls: LanguageServer, params: Any) -> dict[str, Any]:
    previous = stub.session
    stub.save()
    stub.session = stub.fresh_session()
    stub.tokens = 0
    notify("shiro/context/changed", stub.meter())
    return {
        "session": stub.info(),
        "previous": {
            "id": previous["id"],
            "title": previous["title"],
            "messageCount": len(previous["messages"]),
        },
    }


@server.feature("shiro/session/resume")
async def session_resume(ls: LanguageServer, params: dict[str, Any]) -> dict[str, Any]:
    stub.save()
    matches = [s for sid, s in stub.sessions.items() if sid.startswith(params.get("id") or "")]
    if len(matches) != 1:
        raise ValueError(f'no session matching "{params.get("id")}"')
    stub.session = matches[0]
    notify("shiro/todos/changed", stub.todos())
    return {"session": stub.info(), "transcript": stub.session["messages"], "todos": stub.todos()}


if __name__ == "__main__":
    print("shiro e2e stub server on stdio", file=sys.stderr)
    server.start_io()
