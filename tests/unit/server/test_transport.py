"""The outgoing side of the stdio channel, on a real pipe: order, whole frames, and a loop that never waits.

A small message sent from the loop while nothing is queued is written by the loop itself (no thread
hand-off before a streamed delta reaches the editor); anything else, and whatever a full pipe did not
take, goes through the writer thread, in order.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from lsprotocol import types
from pygls.protocol import LanguageServerProtocol

from shiro_lsp.server.jsonrpc.edge import FrameReader, ShiroProtocol
from shiro_lsp.server.rpc import ShiroServer

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the direct write is POSIX only")


@pytest.fixture
def pipe() -> Iterator[tuple[ShiroProtocol, int]]:
    read, write = os.pipe()
    stream = os.fdopen(write, "wb")
    protocol = ShiroServer().protocol
    assert isinstance(protocol, ShiroProtocol)
    protocol.set_stdout(stream)
    yield protocol, read
    protocol.flush_outbox()
    stream.close()
    os.close(read)


def bodies(fd: int, count: int) -> list[dict[str, Any]]:
    reader = FrameReader(fd, frame_timeout=10)
    out = []
    for _ in range(count):
        body = reader.frame()
        assert body is not None
        out.append(json.loads(body))
    return out


def event(seq: int, text: str) -> dict[str, Any]:
    return {"sessionId": "s", "taskId": "t", "seq": seq, "event": {"type": "text", "text": text}}


async def test_a_small_message_is_on_the_pipe_before_the_send_returns(
    pipe: tuple[ShiroProtocol, int],
) -> None:
    protocol, read = pipe
    switch = sys.getswitchinterval()
    sys.setswitchinterval(5.0)  # the writer thread cannot take the GIL in between: only the loop writes
    try:
        protocol.notify("shiro/event", event(0, "Hello"))
        os.set_blocking(read, False)
        arrived = os.read(read, 65536)
    finally:
        sys.setswitchinterval(switch)
        os.set_blocking(read, True)
    header, _, body = arrived.partition(b"\r\n\r\n")
    assert header.startswith(b"Content-Length: %d" % len(body))
    assert json.loads(body)["params"] == event(0, "Hello")


async def test_a_full_pipe_never_blocks_the_loop_and_every_frame_arrives_whole_and_in_order(
    pipe: tuple[ShiroProtocol, int],
) -> None:
    protocol, read = pipe
    sent = threading.Event()
    blocked: list[bool] = []
    received: list[dict[str, Any]] = []
    count = 400  # ~2 KB each, plus two large answers: several times what a pipe holds

    def editor() -> None:  # reads only once every message was sent (or when sending got stuck)
        blocked.append(not sent.wait(20))
        received.extend(bodies(read, count + 2))

    reader = threading.Thread(target=editor)
    reader.start()
    for seq in range(count):
        protocol.notify("shiro/event", event(seq, f"{seq:04d}" + "x" * 2000))
        if seq in (100, 300):  # an export-sized answer goes through the writer thread, in its place
            protocol.notify("shiro/large", {"seq": seq, "text": "y" * 600_000})
    sent.set()
    reader.join(30)

    assert blocked == [False], "sending waited for the editor to read"
    order = [(m["method"], m["params"]["seq"]) for m in received]
    expected = []
    for seq in range(count):
        expected.append(("shiro/event", seq))
        if seq in (100, 300):
            expected.append(("shiro/large", seq))
    assert order == expected
    texts = [m["params"]["event"]["text"] for m in received if m["method"] == "shiro/event"]
    assert texts == [f"{seq:04d}" + "x" * 2000 for seq in range(count)]
    assert all(len(m["params"]["text"]) == 600_000 for m in received if m["method"] == "shiro/large")


async def test_shiros_own_notification_is_the_message_pygls_would_send(
    pipe: tuple[ShiroProtocol, int],
) -> None:
    """It skips pygls' attrs message and cattrs (plain JSON already), not a byte of what is sent:
    a tool card with a list of rows, text outside ASCII, numbers; an LSP notification keeps its type."""
    protocol, read = pipe
    params = {
        "sessionId": "s",
        "taskId": "t",
        "seq": 3,
        "event": {
            "type": "tool-result",
            "output": 'naïve ✓\n"quoted"',
            "files": [{"path": "a.txt", "added": 1, "removed": 0}],
            "input": {"n": 1.5, "flag": True, "none": None},
        },
    }
    protocol.notify("shiro/event", params)
    LanguageServerProtocol.notify(protocol, "shiro/event", params)  # pygls' own way
    protocol.notify("window/logMessage", types.LogMessageParams(types.MessageType.Info, "hi"))
    ours, theirs, typed = bodies(read, 3)
    assert ours == theirs == {"jsonrpc": "2.0", "method": "shiro/event", "params": params}
    assert typed["params"] == {"type": 3, "message": "hi"}
