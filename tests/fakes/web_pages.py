"""A tiny web site on 127.0.0.1 for web_fetch's tests (stdlib only): pages, redirects, odd bodies.

In-process::

    site = WebPages().start()
    site.page("/guide", "<html>...</html>")                      # text/html; charset=utf-8
    site.page("/data.json", '{"a": 1}', content_type="application/json")
    site.redirect("/old", "http://127.0.0.1:9/")                  # 302 to anywhere
    site.url("/guide")                                            # http://127.0.0.1:<port>/guide
    site.hits                                                     # the paths requested, in order
    site.stop()

As a process (the VS Code end-to-end tests): ``python tests/fakes/web_pages.py --port N
--page /path=FILE [--page ...]`` serves each FILE (HTML) at its path until killed.
"""

from __future__ import annotations

import argparse
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


class WebPages:
    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.routes: dict[str, Answer] = {}
        self.hits: list[str] = []
        self.headers_seen: list[dict[str, str]] = []
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def page(
        self,
        path: str,
        body: str | bytes,
        *,
        content_type: str = "text/html; charset=utf-8",
        status: int = 200,
    ) -> WebPages:
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.routes[path] = Answer(status, data, {"Content-Type": content_type} if content_type else {})
        return self

    def redirect(self, path: str, location: str, status: int = 302) -> WebPages:
        self.routes[path] = Answer(status, b"", {"Location": location})
        return self

    def start(self) -> WebPages:
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.hits.append(self.path)
                site.headers_seen.append({k.lower(): v for k, v in self.headers.items()})
                answer = site.routes.get(self.path.split("?", 1)[0]) or Answer(404, b"not here")
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--page", action="append", default=[], help="/path=FILE")
    args = parser.parse_args()
    site = WebPages(port=args.port)
    for item in args.page:
        path, _, file = item.partition("=")
        site.page(path, Path(file).read_bytes())
    site._server.serve_forever()


if __name__ == "__main__":
    main()
