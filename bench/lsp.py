"""A minimal LSP client for benchmarks (the same pygls client the tests use)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from shiro_lsp.server.app import plain_dict_converter


def new_client() -> LanguageClient:
    return LanguageClient("bench", "0", converter_factory=plain_dict_converter)


async def start(
    args: list[str], workspace: Path, options: dict[str, Any] | None = None
) -> tuple[LanguageClient, float]:
    """Spawn a server and initialize it; returns the client and the seconds from spawn to reply."""
    client = new_client()
    began = time.perf_counter()
    await client.start_io(sys.executable, *args)
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            initialization_options=options or {},
        )
    )
    return client, time.perf_counter() - began


async def stop(client: LanguageClient) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
