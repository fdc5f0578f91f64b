"""A recording pass-through proxy on 127.0.0.1 between a harness and the model server.

Every request body and every raw response line (SSE ``data:`` lines included) is kept, in order, as
JSON records ``{"n", "dir": "req"|"resp"|"line", ...}`` (the format of shared/realmodel/*.wire.jsonl).
Responses stream through unchanged, line by line. A harness that closes its connection (a cut
stream, a killed run) closes the upstream one too, at once, as it would without the proxy between
them: llama-server then lets go of the request, even before its first byte.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import select
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

Record = dict[str, Any]
_HOP = {"host", "content-length", "connection", "accept-encoding", "keep-alive", "transfer-encoding"}


class RecordingProxy:
    """Forwards 127.0.0.1:<port><path> to the upstream URL's host and port; records the traffic."""

    def __init__(self, upstream_url: str, log_path: Path | None = None, timeout: float = 1800.0) -> None:
        parts = urlsplit(upstream_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"the eval proxy speaks plain http only, not {upstream_url!r}")
        self.upstream_host = parts.hostname
        self.upstream_port = parts.port or 80
        self.base_path = parts.path.rstrip("/")
        self.timeout = timeout
        self.log_path = log_path
        self.records: list[Record] = []
        self._lock = threading.Lock()
        self._counter = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The base URL a harness is given (same path as the upstream's, e.g. ``.../v1``)."""
        return f"http://127.0.0.1:{self.port}{self.base_path}"

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with self._lock, self.log_path.open("w", encoding="utf-8") as f:
                for record in self.records:
                    f.write(json.dumps(record, ensure_ascii=False) + "\n")

    def _record(self, record: Record) -> None:
        with self._lock:
            self.records.append(record)

    def _next(self) -> int:
        with self._lock:
            self._counter += 1
            return self._counter

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                n = proxy._next()
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                parsed: Any
                try:
                    parsed = json.loads(body) if body else None
                except ValueError:
                    parsed = body.decode("utf-8", "replace")
                proxy._record(
                    {"n": n, "dir": "req", "method": self.command, "path": self.path, "body": parsed}
                )
                conn = http.client.HTTPConnection(
                    proxy.upstream_host, proxy.upstream_port, timeout=proxy.timeout
                )
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                done = threading.Event()
                try:
                    self._relay(n, conn, body, headers, done)
                finally:
                    done.set()
                    conn.close()

            def _relay(
                self,
                n: int,
                conn: http.client.HTTPConnection,
                body: bytes,
                headers: dict[str, str],
                done: threading.Event,
            ) -> None:
                try:
                    conn.request(self.command, self.path, body=body or None, headers=headers)
                    watch = (self.connection, conn, done)
                    threading.Thread(target=_close_when_client_goes, args=watch, daemon=True).start()
                    resp = conn.getresponse()
                except OSError as error:
                    proxy._record({"n": n, "dir": "upstream-error", "error": repr(error)})
                    self.send_error(502, f"eval proxy: upstream unreachable ({error})")
                    return
                proxy._record(
                    {"n": n, "dir": "resp", "status": resp.status, "headers": dict(resp.getheaders())}
                )
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in _HOP:
                        self.send_header(k, v)
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Connection", "close")
                self.end_headers()
                while True:
                    line = resp.readline()
                    if not line:
                        break
                    text = line.decode("utf-8", "replace").rstrip("\r\n")
                    if text:
                        proxy._record({"n": n, "dir": "line", "text": text})
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                self.close_connection = True

            def _safe(self) -> None:
                try:
                    self._forward()
                except (BrokenPipeError, ConnectionResetError) as exc:  # the client went away (a killed run)
                    proxy._record({"n": proxy._counter, "dir": "client-gone", "error": type(exc).__name__})
                    self.close_connection = True

            do_GET = do_POST = _safe

        return Handler


def _close_when_client_goes(
    client: socket.socket, upstream: http.client.HTTPConnection, done: threading.Event
) -> None:
    """Shut the upstream connection as soon as the harness has closed its own (its socket reads as at
    its end), until ``done``: without this the proxy noticed only at its next write to the harness,
    which for a prompt still being processed is minutes later."""
    while not done.wait(0.25):
        try:
            readable, _, _ = select.select([client], [], [], 0)
            gone = bool(readable) and client.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):  # reset, or already closed by the handler
            gone = True
        if gone and not done.is_set():
            if upstream.sock is not None:
                with contextlib.suppress(OSError):
                    upstream.sock.shutdown(socket.SHUT_RDWR)
            return
