"""First-update latency: `shiro-lsp acp` vs the language server, same scripted prompt (issue 13).

Each round sends the same prompt to both front doors (one process each, both running and warm,
the same scripted model, alternating which goes first) and times the request until the first piece of the answer arrives: the first
``agent_message_chunk`` ``session/update`` over ACP, the first ``text`` ``shiro/event`` over LSP.
The result is the ratio of the medians (target <= 1.2x).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import AgentMessageChunk, RequestPermissionResponse

from bench.common import Result
from bench.lsp import start, stop

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fakes.fake_openai import FakeOpenAI, Step, Text

ROUNDS = 20
QUIET_S = 0.6
ANSWER = Text("The answer, streamed in a few pieces.", chunks=4)


class FirstText:
    """An ACP client that stamps the first agent text after ``arm()``."""

    def __init__(self) -> None:
        self.first: asyncio.Future[float] | None = None

    def arm(self) -> asyncio.Future[float]:
        self.first = asyncio.get_running_loop().create_future()
        return self.first

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk) and self.first is not None and not self.first.done():
            self.first.set_result(time.perf_counter())

    async def request_permission(self, *args: Any, **kwargs: Any) -> RequestPermissionResponse:
        raise RuntimeError("the bench prompt asks for nothing")


class AcpDoor:
    def __init__(self, conn: Any, client: FirstText, session_id: str) -> None:
        self.conn, self.client, self.session_id = conn, client, session_id

    async def first_text(self, fake: FakeOpenAI) -> float:
        fake.script.append(Step(ANSWER))
        first = self.client.arm()
        began = time.perf_counter()
        await self.conn.prompt(session_id=self.session_id, prompt=[text_block("what is the answer?")])
        return await first - began


class LspDoor:
    def __init__(self, client: Any) -> None:
        self.client = client
        self.first: asyncio.Future[float] | None = None

        @client.feature("shiro/event")
        def on_event(params: Any) -> None:
            if params["event"]["type"] == "text" and self.first is not None and not self.first.done():
                self.first.set_result(time.perf_counter())

        for method in ("shiro/context/changed", "shiro/session/changed", "shiro/todos/changed"):
            client.feature(method)(lambda params: None)

    async def first_text(self, fake: FakeOpenAI) -> float:
        fake.script.append(Step(ANSWER))
        self.first = asyncio.get_running_loop().create_future()
        began = time.perf_counter()
        await self.client.protocol.send_request_async("shiro/chat", {"text": "what is the answer?"})
        return await self.first - began


async def _run() -> list[Result]:
    with FakeOpenAI() as fake, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in ("acp-ws", "lsp-ws"):
            (root / name).mkdir()
        env = {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "sk-bench", "SHIRO_MODEL": "gpt-5"}
        options = {
            "home": str(root / "lsp-state"),
            "baseUrl": fake.base_url,
            "apiKey": "sk-bench",
            "model": "gpt-5",
        }
        client = FirstText()
        command = (sys.executable, "-m", "shiro_lsp", "acp", "--home", str(root / "acp-state"))
        transport = {"shutdown_timeout": 30.0}  # a busy machine may need more than 2 s to save and exit
        async with spawn_agent_process(client, *command, env=env, transport_kwargs=transport) as (conn, _):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            session_id = (await conn.new_session(cwd=str(root / "acp-ws"), mcp_servers=[])).session_id
            acp = AcpDoor(conn, client, session_id)
            lsp_client, _ = await start(["-m", "shiro_lsp"], root / "lsp-ws", options)
            lsp = LspDoor(lsp_client)
            samples: dict[str, list[float]] = {"acp": [], "lsp": []}
            try:
                for round in range(ROUNDS + 1):
                    # the first round imports the SDK and builds the client; the order alternates
                    doors = [("acp", acp), ("lsp", lsp)] if round % 2 else [("lsp", lsp), ("acp", acp)]
                    for name, door in doors:
                        await asyncio.sleep(QUIET_S)  # both processes idle: the last turn's autosave is done
                        seconds = await door.first_text(fake)
                        if round:
                            samples[name].append(seconds)
            finally:
                await stop(lsp_client)
    ratio = statistics.median(samples["acp"]) / statistics.median(samples["lsp"])
    return [Result("ACP first session/update vs LSP first shiro/event", ratio, "x", "<= 1.2x", ratio <= 1.2)]


def run() -> list[Result]:
    return asyncio.run(_run())
