"""An MCP result as the model reads it: the secrets policy applies to what a server embeds."""

from __future__ import annotations

from mcp.types import CallToolResult, EmbeddedResource, ImageContent, TextContent, TextResourceContents

from shiro_lsp.images.store import StoredImage
from shiro_lsp.mcp.client import result_text


def embedded(uri: str, text: str) -> EmbeddedResource:
    return EmbeddedResource(type="resource", resource=TextResourceContents(uri=uri, text=text))


def test_an_embedded_secrets_file_is_withheld_and_other_files_are_shown() -> None:
    result = CallToolResult(
        content=[
            TextContent(type="text", text="two files:"),
            embedded("file:///srv/app/.env", "DB_PASS=zq7-hunter2-9f4e\n"),
            embedded("file:///srv/app/main.py", "print('hi')\n"),
        ]
    )
    text = result_text(result)
    assert "zq7-hunter2-9f4e" not in text
    assert "is a secrets file" in text and "print('hi')" in text


def test_an_image_is_a_note_unless_the_model_is_shown_it() -> None:
    result = CallToolResult(
        content=[
            TextContent(type="text", text="plot:"),
            ImageContent(type="image", data="iVBORw0K", mimeType="image/png"),
        ]
    )
    assert result_text(result) == "plot:\n[image returned by the tool (image/png, 6 bytes); not shown here]"
    shown = {1: StoredImage("a" * 64, "image/png", 640, 480, "plot image 1")}
    assert (
        result_text(result, shown)
        == "plot:\n[image returned by the tool (640x480): shown to you after this result]"
    )
