"""A raw stdio peer for the server: writes any bytes (malformed frames too) and reads framed replies.

pytest-lsp cannot send a bad frame, a non-string method or an id that is an object; this can.
The server is the real one (`python -m shiro_lsp --stdio`), over real pipes.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPLY_TIMEOUT_S = 20.0


def frame(message: Any) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawServer:
    def __init__(
        self, home: Path, workspace: Path, env: dict[str, str] | None = None, log_dir: Path | None = None
    ) -> None:
        self.home, self.workspace = home, workspace
        self.stderr_path = (log_dir or home.parent) / f"server-{id(self)}.stderr"
        self.stderr_file = self.stderr_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "shiro_lsp", "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr_file,
            env={**os.environ, "SHIRO_HOME": str(home.parent), **(env or {})},
        )
        self.buffer = b""
        self.notifications: list[dict[str, Any]] = []
        self.replies: dict[Any, dict[str, Any]] = {}
        self.null_replies: list[dict[str, Any]] = []
        self.next_id = 1000

    # --- writing ---

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: Any) -> None:
        self.write(frame(message))

    def request(
        self, method: Any, params: Any = None, *, omit_params: bool = False, msg_id: Any = None
    ) -> Any:
        if msg_id is None:
            self.next_id += 1
            msg_id = self.next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if not omit_params:
            message["params"] = params
        self.send(message)
        return msg_id

    def call(
        self, method: Any, params: Any = None, *, timeout: float = REPLY_TIMEOUT_S, **kwargs: Any
    ) -> dict[str, Any]:
        return self.reply(self.request(method, params, **kwargs), timeout=timeout)

    def initialize(self, **options: Any) -> dict[str, Any]:
        reply = self.call(
            "initialize",
            {
                "processId": None,
                "rootUri": self.workspace.as_uri(),
                "capabilities": {},
                "initializationOptions": {"home": str(self.home), "apiKey": "sk-test", **options},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return reply

    # --- reading ---

    def _pump(self, timeout: float) -> bool:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            return False
        chunk = os.read(self.process.stdout.fileno(), 1 << 20)
        if not chunk:
            return False
        self.buffer += chunk
        while b"\r\n\r\n" in self.buffer:
            head, rest = self.buffer.split(b"\r\n\r\n", 1)
            length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            if len(rest) < length:
                break
            message = json.loads(rest[:length])
            self.buffer = rest[length:]
            if "method" in message:
                self.notifications.append(message)
            elif message.get("id") is None:
                self.null_replies.append(message)
            else:
                self.replies[message["id"]] = message
        return True

    def reply(self, msg_id: Any, timeout: float = REPLY_TIMEOUT_S) -> dict[str, Any]:
        key = json.dumps(msg_id) if isinstance(msg_id, dict | list) else msg_id
        deadline = time.monotonic() + timeout
        while key not in self.replies:
            left = deadline - time.monotonic()
            if left <= 0 or (not self._pump(min(left, 0.5)) and self.process.poll() is not None):
                raise AssertionError(f"no reply to {str(msg_id)[:80]} within {timeout} s")
        return self.replies.pop(key)

    def null_reply(self, timeout: float = REPLY_TIMEOUT_S) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while not self.null_replies:
            if time.monotonic() > deadline:
                raise AssertionError("no reply with a null id")
            self._pump(0.5)
        return self.null_replies.pop(0)

    def drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self._pump(0.1)

    def stderr(self) -> str:
        self.stderr_file.flush()
        return self.stderr_path.read_text(errors="replace")

    def wait_exit(self, timeout: float = REPLY_TIMEOUT_S) -> int:
        return self.process.wait(timeout=timeout)

    def serves(self) -> bool:
        """The server still answers a plain request."""
        return "result" in self.call("shiro/todos", {})

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.call("shutdown", None, timeout=5)
                self.send({"jsonrpc": "2.0", "method": "exit"})
                self.process.wait(timeout=5)
            except (AssertionError, OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self.stderr_file.close()
