"""The JSON-RPC edge's pure parts: salvaging an id from a too-deep message, params checks, excerpts."""

from __future__ import annotations

import json
import os

import pytest

from shiro_lsp.server.jsonrpc.edge import (
    MAX_DEPTH,
    FrameReader,
    FramingError,
    excerpt,
    loads,
    params_problem,
    without_params,
)


def test_a_too_deep_params_value_is_replaced_so_the_id_can_be_answered() -> None:
    body = (
        b'{"jsonrpc":"2.0","id":5,"params":{"q":"]\\"[","x":' + b"[" * 5000 + b"]" * 5000 + b'},"method":"m"}'
    )
    with pytest.raises(RecursionError):
        json.loads(body)
    salvaged = without_params(body)
    assert salvaged is not None
    assert json.loads(salvaged) == {"jsonrpc": "2.0", "id": 5, "params": None, "method": "m"}


def test_params_problems() -> None:
    assert params_problem({"a": [1, {"b": "c"}]}) is None and params_problem(None) is None
    assert "object or an array" in str(params_problem("text"))
    nested: object = []
    for _ in range(MAX_DEPTH + 1):
        nested = [nested]
    assert "nested" in str(params_problem(nested))
    assert "number" in str(params_problem(loads(b'{"n": ' + b"7" * 5000 + b"}")))
    assert "number" in str(params_problem(loads(b'{"n": NaN}')))
    assert "number" in str(params_problem(loads(b'{"n": 1e999}')))


def test_excerpts_are_short_and_single_line() -> None:
    text = excerpt("a\nb" * 100_000)
    assert "\n" not in text and len(text) < 100 and "300000 chars" in text


def frames(data: bytes) -> list[bytes | None]:
    read, write = os.pipe()
    os.write(write, data)
    os.close(write)
    reader = FrameReader(read, frame_timeout=1)
    try:
        out: list[bytes | None] = []
        while True:
            body = reader.frame()
            out.append(body)
            if body is None:
                return out
    finally:
        os.close(read)


def test_frames_are_read_whole_with_content_type_allowed() -> None:
    data = b"Content-Length: 2\r\n\r\n{}" + b"Content-Type: application/json\r\ncontent-length: 3\r\n\r\n[1]"
    assert frames(data) == [b"{}", b"[1]", None]


@pytest.mark.parametrize(
    "data",
    [
        b"Content-Length: abc\r\n\r\n",
        b"Content-Length: 2\n\n{}",
        b"X-Other: 1\r\n\r\n",
        b"Content-Length: 9\r\n\r\n{}",
    ],
)
def test_malformed_frames_raise(data: bytes) -> None:
    with pytest.raises(FramingError):
        frames(data)
