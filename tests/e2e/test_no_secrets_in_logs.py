"""The API key never reaches the server's log, even at DEBUG where every message is logged."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SECRET = "sk-proj-VERYSECRETkey1234567890"


def frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def test_debug_logging_redacts_the_api_key(tmp_path: Path) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "processId": None,
            "rootUri": tmp_path.as_uri(),
            "capabilities": {},
            "initializationOptions": {"home": str(tmp_path / "state"), "apiKey": SECRET},
        },
    }
    messages = frame(initialize) + frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    messages += frame({"jsonrpc": "2.0", "method": "exit"})
    done = subprocess.run(
        [sys.executable, "-m", "shiro_lsp", "--log-level", "DEBUG"],
        input=messages,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert b'"id": 1' in done.stdout or b'"id":1' in done.stdout  # it did answer initialize
    assert b"DEBUG" in done.stderr  # it did log at DEBUG
    assert SECRET.encode() not in done.stderr and b"VERYSECRET" not in done.stderr


def test_the_log_formatter_redacts_keys_and_url_credentials_in_any_message_shape() -> None:
    import logging

    from shiro_lsp.__main__ import RedactingFormatter

    shapes = [
        f"InitializeParams(initialization_options={{'home': '/x', 'apiKey': '{SECRET}'}})",
        f'Sending data: {{"apiKey": "{SECRET}"}}',
        f"Authorization: Bearer {SECRET}",
        f"key is {SECRET}",
        "Authorization: Bearer VERYSECRET-opaque-token",
        "POST http://user:VERYSECRET@10.0.0.5:8000/v1/chat/completions",
        "GET https://example.com/v1/models?key=VERYSECRET&x=1",
        '{"headers": {"authorization": "Basic VERYSECRET=="}}',
    ]
    formatter = RedactingFormatter("%(message)s")
    for shape in shapes:
        record = logging.LogRecord("pygls", logging.DEBUG, __file__, 1, "%s", (shape,), None)
        line = formatter.format(record)
        assert "VERYSECRET" not in line and "[redacted" in line, line
    try:
        raise RuntimeError("failed at http://u:VERYSECRET@h/v1")
    except RuntimeError:
        import sys

        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "boom", None, sys.exc_info())
    assert "VERYSECRET" not in formatter.format(record)  # tracebacks too
