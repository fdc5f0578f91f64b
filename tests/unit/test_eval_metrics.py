"""The eval's recording proxy and traffic metrics, against a stub upstream (no model)."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from eval.metrics import duplicated_files, echoed_sentences, example_values, repeated_blocks, traffic
from eval.proxy import RecordingProxy

SYSTEM = (
    "You are a coding agent that reads files before it edits them and never guesses a path. "
    "Use paths like `path/to/file` and patterns like `src/**/*.ts` in searches."
)
CHUNKS: list[dict[str, Any]] = [
    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Reading "}}]},
    {"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "c1", "function": {"name": "read_file", "arguments": '{"path": '}}]}}]},
    {"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "function": {"arguments": '"a.py"}'}}]}, "finish_reason": "tool_calls"}]},
    {"choices": [], "usage": {"prompt_tokens": 900, "completion_tokens": 12,
                              "prompt_tokens_details": {"cached_tokens": 800}},
     "timings": {"cache_n": 850, "prompt_n": 50}},
]  # fmt: skip
SSE = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in CHUNKS) + b"data: [DONE]\n\n"


class Upstream(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(SSE)))
        self.end_headers()
        self.wfile.write(SSE)


@pytest.fixture
def upstream() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_the_proxy_streams_through_unchanged_and_records_what_it_saw(upstream: str) -> None:
    body = {"model": "m", "stream": True, "messages": [{"role": "system", "content": SYSTEM},
                                                       {"role": "user", "content": "hi"}]}  # fmt: skip
    with RecordingProxy(upstream) as proxy:
        request = urllib.request.Request(
            proxy.url + "/chat/completions", data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=10) as response:
            received = response.read()
    assert received == SSE
    seen = traffic(proxy.records)
    assert seen.requests == 1
    assert seen.native_tool_calls == 1
    assert seen.tool_call_texts == ['read_file {"path": "a.py"}']
    assert seen.first_prompt_tokens == 900
    assert seen.cached_tokens == 850  # llama.cpp's timings win over usage
    assert seen.last_content == "Reading "
    assert "src/**/*.ts" in seen.examples and "path/to/" in seen.examples


def test_an_answer_that_repeats_the_system_prompt_is_caught() -> None:
    body = {"messages": [{"role": "system", "content": SYSTEM}]}
    sentences = traffic(
        [{"n": 1, "dir": "req", "method": "POST", "path": "/v1/chat/completions", "body": body}]
    )
    assert sentences.system_sentences
    answer = "Sure. You are a coding agent that reads files before it edits them and never guesses a path."
    assert echoed_sentences(answer, sentences.system_sentences)
    assert not echoed_sentences("The constant is in settings.py.", sentences.system_sentences)
    assert "path/to/file" in example_values(body)


def test_shiros_final_answer_is_the_reply_that_wrote_the_files_when_none_followed() -> None:
    from eval.harnesses import shiro_final_text

    wrote = [
        {"type": "text", "text": "main.py\n```python\nx = 1\n```\n"},
        {"type": "text", "text": "main.py sets x."},
        {"type": "notice", "text": "The model wrote out main.py in its reply; Shiro writes it (write_file)."},
        {"type": "tool-call", "id": "c1", "name": "write_file", "input": {}, "origin": "text"},
        {"type": "tool-result", "id": "c1", "name": "write_file", "output": "Wrote"},
        {"type": "done"},
    ]
    assert shiro_final_text(wrote).endswith("main.py sets x.")
    native = [*wrote[:3], {**wrote[3], "origin": "native"}, *wrote[4:]]
    assert shiro_final_text(native) == ""  # a native call: the turn owed an answer after it


LISTING = (
    "def area(w, h):\n    if w < 0:\n        raise ValueError('w')\n    return w * h\n\n\nprint(area(2, 3))\n"
)


def test_a_listing_written_twice_into_a_file_is_a_duplicated_file() -> None:
    before = {"area.py": b"def area(w, h):\n    pass\n", "other.py": b"x = 1\n"}
    written = {"area.py": (LISTING + LISTING).encode(), "other.py": b"x = 2\n"}
    assert duplicated_files(before, written) == ["area.py"]
    assert duplicated_files(before, {"area.py": LISTING.encode()}) == []


def test_a_repeat_the_start_already_had_is_not_counted_but_a_new_one_is() -> None:
    block = "\n".join(f"line {i}" for i in range(5)) + "\n"
    start = (block + "middle\n" + block).encode()
    assert duplicated_files({"a.txt": start}, {"a.txt": start + b"end\n"}) == []
    other = "\n".join(f"other {i}" for i in range(6)) + "\n"
    assert duplicated_files({"a.txt": start}, {"a.txt": start + (other * 2).encode()}) == ["a.txt"]


def test_blank_lines_do_not_hide_a_repeat_and_overlapping_windows_are_not_one() -> None:
    assert repeated_blocks("a\nb\n\nc\nd\ne\n\n" * 2)
    assert not repeated_blocks("x\n" * 9)  # one run of the same line: windows overlap, no second copy
    assert repeated_blocks("x\n" * 10)
