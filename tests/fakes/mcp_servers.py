"""Real MCP servers for the tests, written with the mcp SDK's MCPServer (the 1.x FastMCP).

``python tests/fakes/mcp_servers.py stdio [--marker FILE]`` serves over stdio;
``python tests/fakes/mcp_servers.py http PORTFILE`` serves streamable HTTP on 127.0.0.1 (a free
port, written to PORTFILE once listening). ``--marker FILE`` appends one line per start, so a
test can tell whether (and how often) the server was started. ``--stderr-line TEXT`` writes TEXT
to stderr at start (a token a careless server logs). ``--hang-at-start``: the process runs but never
answers ``initialize``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image

PNG_1X1 = bytes.fromhex(  # one red pixel
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c63f8cfc0f01f00050001ff89993d1d0000000049454e44ae426082"
)


def build() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("testkit")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back, upper-cased."""
        return text.upper()

    @server.tool()
    def add(a: int, b: int) -> dict[str, int]:
        """Add two numbers (structured result)."""
        return {"sum": a + b}

    @server.tool()
    def write(path: str, text: str) -> str:
        """Write the text to a file (an absolute path)."""
        Path(path).write_text(text)
        return f"wrote {len(text)} characters"

    @server.tool()
    def huge(size: int) -> str:
        """A result of `size` characters."""
        return "x" * size

    @server.tool()
    def fail(reason: str) -> str:
        """Always fails with the reason."""
        raise ToolError(reason)

    @server.tool()
    def crash() -> str:
        """The server process dies mid-call."""
        print("testkit: crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)

    @server.tool()
    async def hang() -> str:
        """Never answers."""
        await asyncio.sleep(3600)
        return "never"

    @server.tool()
    def leak(text: str) -> str:
        """Return the text as a config dump would show it (tokens included)."""
        return f"config: {text}"

    @server.tool()
    def picture() -> Image:
        """A 1x1 PNG."""
        return Image(data=PNG_1X1, format="png")

    return server


def main(argv: list[str]) -> None:
    mode = argv[0]
    if "--marker" in argv:
        marker = Path(argv[argv.index("--marker") + 1])
        with marker.open("a") as f:
            f.write(f"{os.getpid()}\n")
    print("testkit: starting", file=sys.stderr, flush=True)
    if "--stderr-line" in argv:
        print(argv[argv.index("--stderr-line") + 1], file=sys.stderr, flush=True)
    if "--hang-at-start" in argv:  # started, never answers initialize (a server stuck in its set-up)
        while True:
            time.sleep(3600)
    server = build()
    if mode == "stdio":
        server.run("stdio")
        return
    import socket

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    uv = uvicorn.Server(config)

    async def serve() -> None:
        task = asyncio.create_task(uv.serve(sockets=[sock]))
        while not uv.started:
            await asyncio.sleep(0.02)
        Path(argv[1]).write_text(str(port))
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    main(sys.argv[1:])
