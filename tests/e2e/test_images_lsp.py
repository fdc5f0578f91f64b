"""Images through the language server: kept by shiro/images/add, sent as image parts (Chat Completions
`image_url`, Responses `input_image`), kept by hash (never inline in the session file), shown again on
resume, exported; a model that refuses them gets words instead and the turn goes on."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from chat_helpers import model_bodies
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall, image_parts
from fakes.fixtures import options
from lsp_client import ShiroClient, start_server

pytest_plugins = ["fakes.fixtures"]

LLAMA_CPP_REFUSAL = (
    "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj"
)


def png(width: int = 40, height: int = 30, color: tuple[int, int, int] = (10, 200, 90)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI) -> dict[str, object]:
    return options(home, fake, approvalTimeoutMs=5000)


async def add(client: ShiroClient, name: str = "shot.png", data: bytes | None = None) -> dict[str, Any]:
    encoded = base64.b64encode(data if data is not None else png()).decode()
    result: dict[str, Any] = await client.call("shiro/images/add", {"name": name, "data": encoded})
    return result


async def test_a_pasted_image_reaches_the_model_as_an_image_part_and_the_session_keeps_its_hash(
    client: ShiroClient, fake: FakeOpenAI, home: Path
) -> None:
    kept = await add(client)
    assert kept["mediaType"] == "image/png" and (kept["width"], kept["height"]) == (40, 30)
    assert kept["thumbnail"].startswith("data:image/png;base64,")
    fake.script += [Step(Text("A green rectangle."))]
    images = [{"id": kept["id"], "name": "shot.png"}]
    result = await client.call("shiro/chat", {"text": "what is in this screenshot?", "images": images})
    assert result["stopReason"] == "done"
    [part] = image_parts(model_bodies(fake)[-1])
    assert part["image_url"]["url"].startswith("data:image/png;base64,")
    user = [m for m in model_bodies(fake)[-1]["messages"] if m["role"] == "user"][-1]
    assert user["content"][0] == {"type": "text", "text": "what is in this screenshot?"}

    await client.call("shiro/session/save")
    [session_file] = (home / "sessions").glob("*.json")
    saved = session_file.read_text()
    assert kept["id"] in saved and "base64" not in saved and len(saved) < 10_000
    assert (home / "images" / f"{kept['id']}.png").is_file()


async def test_a_resumed_session_shows_the_images_and_exports_them(
    client: ShiroClient, fake: FakeOpenAI
) -> None:
    kept = await add(client, "diagram.png")
    fake.script += [Step(Text("noted"))]
    await client.call(
        "shiro/chat", {"text": "keep this", "images": [{"id": kept["id"], "name": "diagram.png"}]}
    )
    session_id = (await client.call("shiro/session/current"))["id"]
    await client.call("shiro/session/new", {})
    resumed = await client.call("shiro/session/resume", {"id": session_id})
    prompt = resumed["transcript"][0]
    assert prompt["content"][1]["imageId"] == kept["id"] and prompt["content"][1]["name"] == "diagram.png"
    assert resumed["images"] == {kept["id"]: kept["thumbnail"]}
    assert resumed["session"]["title"] == "keep this"

    exported = json.loads((await client.call("shiro/session/export", {"format": "json"}))["content"])
    assert exported["images"][kept["id"]].startswith("data:image/png;base64,")
    markdown = (await client.call("shiro/session/export", {"format": "markdown"}))["content"]
    assert "![diagram.png](data:image/png;base64," in markdown


async def test_the_responses_api_gets_an_input_image(home: Path, fake: FakeOpenAI, workspace: Path) -> None:
    client = await start_server(workspace, **options(home, fake, api="responses"))
    try:
        kept = await add(client)
        fake.script += [Step(Text("seen"))]
        await client.call("shiro/chat", {"text": "look", "images": [{"id": kept["id"], "name": "shot.png"}]})
    finally:
        await client.shutdown_session()
    [part] = image_parts(model_bodies(fake)[-1])
    assert part["type"] == "input_image" and part["image_url"].startswith("data:image/png;base64,")


async def test_a_model_that_refuses_images_gets_words_and_the_turn_goes_on(
    client: ShiroClient, fake: FakeOpenAI
) -> None:
    fake.refuse_images = LLAMA_CPP_REFUSAL
    kept = await add(client, "error.png")
    fake.script += [Step(Text("I cannot see it, but tell me the message."))]
    result = await client.call(
        "shiro/chat", {"text": "why this error?", "images": [{"id": kept["id"], "name": "error.png"}]}
    )
    assert result["stopReason"] == "done"
    first, second = model_bodies(fake)
    assert image_parts(first) and not image_parts(second)
    words = json.dumps(second["messages"])
    assert "[Image error.png (40x30): not shown, this model does not take images.]" in words
    notices = [e["text"] for e in client.events() if e["type"] == "notice"]
    assert any("did not take the images" in n and "image input is not supported" in n for n in notices)

    # the next turn does not try again: the model is known to take none
    fake.script += [Step(Text("ok"))]
    await client.call(
        "shiro/chat", {"text": "and this one?", "images": [{"id": kept["id"], "name": "error.png"}]}
    )
    assert not image_parts(model_bodies(fake)[-1]) and len(model_bodies(fake)) == 3
    assert any("does not take images" in e["text"] for e in client.events() if e["type"] == "notice")


async def test_read_file_of_an_image_shows_it_to_the_model(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    (workspace / "ui").mkdir()
    (workspace / "ui" / "mock.png").write_bytes(png(64, 48))
    fake.script += [
        Step(ToolCall("read_file", {"path": "ui/mock.png"}, call_id="r1")),
        Step(Text("A mock-up.")),
    ]
    await client.call("shiro/chat", {"text": "describe the mock-up"})
    last = model_bodies(fake)[-1]["messages"]
    tool = next(m for m in last if m["role"] == "tool")
    assert tool["content"] == "ui/mock.png: an image, shown to you after this result (64x48)."
    after = last[last.index(tool) + 1]
    assert after["role"] == "user" and after["content"][0]["text"].startswith(
        "The image from the tool result"
    )
    assert after["content"][1]["type"] == "image_url"


async def test_an_image_file_of_the_workspace_is_attached_and_a_secret_or_outside_one_is_refused(
    client: ShiroClient, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "logo.png").write_bytes(png(20, 20))
    kept = await client.call("shiro/images/add", {"name": "logo.png", "path": str(workspace / "logo.png")})
    assert (kept["width"], kept["height"]) == (20, 20)
    (tmp_path / "elsewhere.png").write_bytes(png())
    with pytest.raises(Exception, match=r"escapes workspace|outside"):
        await client.call("shiro/images/add", {"name": "x.png", "path": str(tmp_path / "elsewhere.png")})
    with pytest.raises(Exception, match="is not an image Shiro can read"):
        await add(client, "notes.png", b"just text, not a picture")
    with pytest.raises(Exception, match=r"Invalid params"):
        await client.call("shiro/images/add", {"name": "none.png"})


async def test_with_image_input_off_the_model_is_told_in_words(
    home: Path, fake: FakeOpenAI, workspace: Path
) -> None:
    client = await start_server(workspace, **options(home, fake, imageInput="off"))
    try:
        kept = await add(client, "plot.png")
        fake.script += [Step(Text("fine"))]
        await client.call(
            "shiro/chat", {"text": "see plot", "images": [{"id": kept["id"], "name": "plot.png"}]}
        )
        notices = [e["text"] for e in client.events() if e["type"] == "notice"]
    finally:
        await client.shutdown_session()
    assert not image_parts(model_bodies(fake)[-1])
    assert "[Image plot.png (40x30): not shown" in json.dumps(model_bodies(fake)[-1]["messages"])
    assert any("does not take images" in n for n in notices)


async def test_compact_names_the_images_in_words_and_sends_no_pixels(
    client: ShiroClient, fake: FakeOpenAI
) -> None:
    kept = await add(client, "chart.png")
    fake.script += [Step(Text("A bar chart.")), Step(Text("Summary: the user showed a bar chart."))]
    await client.call(
        "shiro/chat", {"text": "read this chart", "images": [{"id": kept["id"], "name": "chart.png"}]}
    )
    result = await client.call("shiro/session/compact")
    assert result["after"] == 1
    summary_request = model_bodies(fake)[-1]
    assert not image_parts(summary_request)
    assert "[Image chart.png (40x30): not shown, this model does not take images.]" in json.dumps(
        summary_request
    )
