"""Outgoing JSON-RPC messages go out in order without the event loop ever waiting on the client.

pygls encodes and writes each message on the loop. A 20 MB export is one JSON string whose escaping
takes most of a second, and a client that reads slowly stalls the write: either would freeze every
turn that is streaming meanwhile. Here a writer thread encodes messages (large strings in slices, so
the GIL passes back to the loop between them) and writes them.

A small message sent from the loop while nothing is queued (a streamed delta, most answers) is not
handed over: the loop encodes it (microseconds) and writes what the pipe takes at once, without
blocking; the writer thread writes whatever the pipe did not take before anything else. Handing a
delta to a thread costs a wake-up and, while the loop is busy with the stream, a wait for the GIL
(milliseconds), which the editor would see as latency.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import queue
import sys
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

log = logging.getLogger(__name__)

LARGE_STRING = 256 * 1024  # strings longer than this are escaped slice by slice
DIRECT_LIMIT = 16 * 1024
"""A message whose strings add up to less than this (plus one per value) may be written by the loop."""
_SLICE = 64 * 1024
_PLACEHOLDER = "\x00shiro-large-{}\x00"


def encode_json(value: Any, default: Any = None) -> str:
    """``json.dumps(value, default=default)`` (ASCII), with long strings escaped in slices.

    One ``json.dumps`` of a long string is a single C call that holds the GIL throughout; slicing
    gives other threads (the event loop) a turn between slices. The text is identical.
    """
    large: list[str] = []

    def lift(item: Any) -> Any:
        if isinstance(item, str):
            if len(item) <= LARGE_STRING:
                return item
            large.append(item)
            return _PLACEHOLDER.format(len(large) - 1)
        if isinstance(item, dict):
            return {key: lift(val) for key, val in item.items()}
        if isinstance(item, list | tuple):
            return [lift(val) for val in item]
        return item

    body = json.dumps(lift(value), default=default)
    for index, text in enumerate(large):
        escaped = "".join(json.dumps(text[at : at + _SLICE])[1:-1] for at in range(0, len(text), _SLICE))
        body = body.replace(json.dumps(_PLACEHOLDER.format(index))[1:-1], escaped, 1)
    return body


class ThreadedWriterProtocol(LanguageServerProtocol):
    """pygls' LSP protocol whose ``_send_data`` hands the message to a writer thread.

    It also ignores ``didChange`` for a document it was never given (pygls raises ``KeyError`` there,
    which the client shows as "Error in server: KeyError: 'untitled:Untitled-1'").
    """

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Iterator[Any]:
        if unquote(params.text_document.uri) not in self.workspace.text_documents:
            log.debug("didChange for a document that is not open: %s", params.text_document.uri)
            return
        yield from super().lsp_text_document__did_change(params)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._writer_thread: threading.Thread | None = None
        self._writer_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._fd: int | None = None  # the stdio stream's file descriptor (set_stdout), for direct writes
        self._writing = threading.Lock()  # held by whoever puts bytes on the stream
        self._carry = b""  # the end of a direct write the pipe did not take: the next bytes to write
        self._counting = threading.Lock()
        self._pending = 0  # queued items not written yet
        # An `exit` right behind `shutdown` must not lose the answers still queued.
        atexit.register(self.flush_outbox)

    def notify(self, method: str, params: Any | None = None) -> None:
        """pygls' ``notify``; one of Shiro's own (no LSP type) whose params are already plain JSON
        goes out as a plain message, not an attrs one that cattrs walks value by value to make
        plain again (on every event of a turn: each MCP call's two cards, each delta)."""
        if not isinstance(params, dict) or self.get_message_type(method) is not None:
            super().notify(method, params)
            return
        log.debug("Sending notification: '%s' %s", method, params)
        self._send_data({"jsonrpc": self.VERSION, "method": method, "params": params})

    def set_stdout(self, stream: Any) -> None:
        """Write to a binary stdout (``sys.stdout.buffer``); small messages may then skip the thread."""
        self.set_writer(StdoutWriter(stream))
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):  # not a real file (a test's BytesIO)
            return
        if sys.platform != "win32":  # non-blocking writes to a pipe are POSIX
            self._fd = fd

    def _send_data(self, data: Any) -> None:
        if not data:
            return
        if self.writer is None:
            log.error("Unable to send data, no available transport!")
            return
        with self._writer_lock:
            if self._loop is None:
                self._loop = asyncio.get_running_loop()
                self._loop_thread = threading.get_ident()
            if self._writer_thread is None:
                self._writer_thread = threading.Thread(
                    target=self._write_loop, name="lsp-writer", daemon=True
                )
                self._writer_thread.start()
        if not self._send_now(data):
            self._enqueue(data)

    def _enqueue(self, item: Any) -> None:
        with self._counting:
            self._pending += 1
        self._outbox.put(item)

    def _send_now(self, data: Any) -> bool:
        """Write a small message from the loop when nothing is queued; False: queue it instead."""
        fd = self._fd
        if fd is None or threading.get_ident() != self._loop_thread or not is_small(data, DIRECT_LIMIT):
            return False
        if not self._writing.acquire(blocking=False):  # the writer thread is writing
            return False
        try:
            with self._counting:
                if self._pending or self._carry:
                    return False
            payload = self._frame(data, small=True)
            try:
                written = write_nonblocking(fd, payload)
            except BrokenPipeError:
                log.warning("the client closed the connection; nothing more can be sent")
                return True
            except OSError as error:
                log.error("a message could not be sent: %s", error)
                return True
            if written < len(payload):  # the pipe is full: the writer thread waits for room
                self._carry = payload[written:]
                self._enqueue(_CARRY)
            return True
        finally:
            self._writing.release()

    def flush_outbox(self, timeout: float = 5.0) -> None:
        """Wait until every queued message is written (before the process exits)."""
        done = threading.Event()
        self._outbox.put(done)
        if self._writer_thread is not None:
            done.wait(timeout)

    def _frame(self, data: Any, *, small: bool = False) -> bytes:
        """``small``: :func:`is_small` said so, so no string in it needs escaping in slices."""
        plain = self._serialize_message(data) if hasattr(data, "__attrs_attrs__") else data
        encode = json.dumps if small else encode_json
        body = encode(plain, default=self._serialize_message)
        header = (
            f"Content-Length: {len(body)}\r\n"
            f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            if self._include_headers
            else ""
        )
        return (header + body).encode(self.CHARSET)

    def _write_loop(self) -> None:
        while True:
            data = self._outbox.get()
            if isinstance(data, threading.Event):
                data.set()
                continue
            try:
                payload = b"" if data is _CARRY else self._frame(data)
                with self._writing:
                    carry, self._carry = self._carry, b""
                    if carry:
                        self._write(carry)
                    if payload:
                        self._write(payload)
            except BrokenPipeError:
                log.warning("the client closed the connection; nothing more can be sent")
                return
            except Exception:
                log.exception("a message could not be sent")
            finally:
                with self._counting:
                    self._pending -= 1

    def _write(self, payload: bytes) -> None:
        writer = self.writer
        if isinstance(writer, StdoutWriter):  # a blocking file: written from this thread
            writer.write(payload)
        elif writer is not None and self._loop is not None:  # asyncio streams belong to the loop
            self._loop.call_soon_threadsafe(writer.write, payload)


_CARRY = object()
"""Queued after a direct write the pipe took only part of: the writer writes the rest first."""


def is_small(value: Any, limit: int, nodes: int = 256) -> bool:
    """Whether ``value`` (a message, or plain JSON) holds less than ``limit`` characters of strings
    (each value counting one) in at most ``nodes`` values; stops looking as soon as it knows, so a
    20 MB answer or a list of 100,000 numbers costs next to nothing here."""
    budget = limit
    stack = [value]
    while stack:
        nodes -= 1
        item = stack.pop()
        if isinstance(item, str):
            budget -= len(item)
        elif isinstance(item, dict):
            budget -= 1 + len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            budget -= 1 + len(item)
            stack.extend(item)
        else:
            budget -= 1
            fields = getattr(type(item), "__attrs_attrs__", ())  # pygls' messages, lsprotocol types
            stack.extend(getattr(item, field.name) for field in fields)
        if budget < 0 or nodes < 0:
            return False
    return True


def write_nonblocking(fd: int, payload: bytes) -> int:
    """Write what ``fd`` takes now (a pipe may take part of it, or nothing); the bytes written."""
    blocking = os.get_blocking(fd)
    if blocking:
        os.set_blocking(fd, False)
    try:
        return os.write(fd, payload)
    except BlockingIOError:
        return 0
    finally:
        if blocking:
            os.set_blocking(fd, True)
