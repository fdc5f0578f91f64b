"""An MCP result as the model reads it: the secrets policy applies to what a server embeds."""

from __future__ import annotations

from mcp.types import CallToolResult, EmbeddedResource, TextContent, TextResourceContents

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
