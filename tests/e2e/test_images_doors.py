"""Images through headless `shiro-lsp run --image FILE` and ACP image content blocks: the same image
parts reach the model, and a loaded ACP session replays the user's image."""

from __future__ import annotations

import asyncio
import base64
import io
import os
import sys
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, image_block, spawn_agent_process, text_block
from acp.schema import ClientCapabilities, ImageContentBlock, Implementation, UserMessageChunk
from PIL import Image

from chat_helpers import model_bodies
from fakes.fake_openai import FakeOpenAI, Step, Text, image_parts

pytest_plugins = ["fakes.fixtures"]


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (32, 16), (250, 10, 10)).save(out, "PNG")
    return out.getvalue()


def environment(fake: FakeOpenAI) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHIRO_"))}
    return env | {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "sk-test", "SHIRO_MODEL": "gpt-5"}


async def test_headless_sends_an_image_given_with_image(
    fake: FakeOpenAI, workspace: Path, home: Path, tmp_path: Path
) -> None:
    picture = tmp_path / "bug.png"
    picture.write_bytes(png())
    fake.script += [Step(Text("A red bar."))]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "shiro_lsp", "run", "--workspace", str(workspace), "--home", str(home),
        "--image", str(picture), "-p", "what is this?",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=environment(fake),
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 90)
    assert process.returncode == 0, err.decode()
    assert out.decode() == "A red bar.\n"
    [part] = image_parts(model_bodies(fake)[-1])
    assert part["image_url"]["url"].startswith("data:image/png;base64,")


async def test_headless_refuses_a_file_that_is_no_image(
    fake: FakeOpenAI, workspace: Path, home: Path, tmp_path: Path
) -> None:
    (tmp_path / "notes.png").write_text("not a picture")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "shiro_lsp", "run", "--workspace", str(workspace), "--home", str(home),
        "--image", str(tmp_path / "notes.png"), "-p", "look",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=environment(fake),
    )  # fmt: skip
    _, err = await asyncio.wait_for(process.communicate(), 90)
    assert process.returncode == 2
    assert "cannot send the image" in err.decode() and "is not an image Shiro can read" in err.decode()
    assert model_bodies(fake) == []


class Editor:
    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("nothing should ask")


async def test_acp_image_blocks_reach_the_model_and_a_loaded_session_replays_them(
    fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    fake.script += [Step(Text("A red bar."))]
    data = base64.b64encode(png()).decode()
    editor = Editor()
    async with spawn_agent_process(
        editor, sys.executable, "-m", "shiro_lsp", "acp", "--home", str(home), env=environment(fake),
        transport_kwargs={"stderr": None, "shutdown_timeout": 30.0},
    ) as (conn, _process):  # fmt: skip
        started = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="pytest", version="1"),
        )
        assert started.agent_capabilities.prompt_capabilities.image is True
        session_id = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        prompt = [text_block("what is this?"), image_block(data, "image/png")]
        response = await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=prompt), 90)
        assert response.stop_reason == "end_turn"
    [part] = image_parts(model_bodies(fake)[-1])
    assert part["image_url"]["url"].startswith("data:image/png;base64,")

    replayed = Editor()
    async with spawn_agent_process(
        replayed, sys.executable, "-m", "shiro_lsp", "acp", "--home", str(home), env=environment(fake),
        transport_kwargs={"stderr": None, "shutdown_timeout": 30.0},
    ) as (conn, _process):  # fmt: skip
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="pytest", version="1"),
        )
        await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
    user = [u.content for u in replayed.updates if isinstance(u, UserMessageChunk)]
    assert user[0].text == "what is this?"
    assert isinstance(user[1], ImageContentBlock) and user[1].mime_type == "image/png"
    assert base64.b64decode(user[1].data)[:8] == b"\x89PNG\r\n\x1a\n"
