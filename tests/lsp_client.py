"""A pytest-lsp client that speaks Shiro: plain-dict params, recorded notifications, scripted approvals."""

from __future__ import annotations

import asyncio
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from shiro_lsp.server.app import plain_dict_converter
from shiro_lsp.server.protocol import METHODS

SERVER_COMMAND = [sys.executable, "-m", "shiro_lsp"]


def _converter() -> Any:
    """Plain dicts, plus the lsprotocol CodeAction-vs-Command workaround (libraries.md §2.4)."""
    from typing import Union

    converter = plain_dict_converter()

    def code_action_hook(obj: Any, _: Any) -> Any:
        target = types.Command if isinstance(obj.get("command"), str) else types.CodeAction
        return converter.structure(obj, target)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], code_action_hook)  # noqa: UP007
    return converter


class ShiroClient(LanguageClient):
    """Records every Shiro notification and answers `shiro/approve` from a script."""

    def __init__(self) -> None:
        super().__init__(converter_factory=_converter)
        self.notifications: dict[str, list[Any]] = defaultdict(list)
        self.approvals: list[Any] = []
        self.decisions: list[str | dict[str, str]] = []  # answered in order; empty -> "deny"
        self.approval_delay = 0.0
        self.answering = 0  # approval requests being answered right now

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await self.protocol.send_request_async(method, params or {})

    def events(self, task_id: str | None = None) -> list[dict[str, Any]]:
        return [
            n["event"] for n in self.notifications["shiro/event"] if task_id is None or n["taskId"] == task_id
        ]


def make_client() -> ShiroClient:
    client = ShiroClient()
    register_lsp_features(client)
    for method in METHODS:
        if method.direction == "server->client" and method.kind == "notification":

            def record(c: ShiroClient, params: Any, name: str = method.name) -> None:
                c.notifications[name].append(params)

            client.feature(method.name)(record)

    @client.feature("shiro/approve")
    async def approve(c: ShiroClient, params: Any) -> dict[str, str]:
        c.approvals.append(params)
        c.answering += 1
        try:
            if c.approval_delay:
                await asyncio.sleep(c.approval_delay)
            answer = c.decisions.pop(0) if c.decisions else "deny"
            return answer if isinstance(answer, dict) else {"decision": answer}
        finally:
            c.answering -= 1

    return client


CONFIG = ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_client)


async def initialize(client: LanguageClient, workspace: Path, **options: Any) -> types.InitializeResult:
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name=workspace.name)],
            root_uri=workspace.as_uri(),
            initialization_options=options,
        )
    )


async def start_server(workspace: Path, **options: Any) -> ShiroClient:
    """A server process of its own (for tests that restart, kill or run two servers), initialized."""
    client = make_client()
    await client.start_io(*SERVER_COMMAND)
    await initialize(client, workspace, **options)
    return client
