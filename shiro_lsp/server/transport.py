"""Outgoing JSON-RPC messages are encoded and written by one thread, in order, off the event loop.

pygls encodes and writes each message on the loop. A 20 MB export is one JSON string whose escaping
takes most of a second, and a client that reads slowly stalls the write: either would freeze every
turn that is streaming meanwhile. Here the loop only queues the message; the writer thread encodes
it (large strings in slices, so the GIL passes back to the loop between them) and writes it.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import queue
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
        # An `exit` right behind `shutdown` must not lose the answers still queued.
        atexit.register(self.flush_outbox)

    def _send_data(self, data: Any) -> None:
        if not data:
            return
        if self.writer is None:
            log.error("Unable to send data, no available transport!")
            return
        with self._writer_lock:
            if self._loop is None:
                self._loop = asyncio.get_running_loop()
            if self._writer_thread is None:
                self._writer_thread = threading.Thread(
                    target=self._write_loop, name="lsp-writer", daemon=True
                )
                self._writer_thread.start()
        self._outbox.put(data)

    def flush_outbox(self, timeout: float = 5.0) -> None:
        """Wait until every queued message is written (before the process exits)."""
        done = threading.Event()
        self._outbox.put(done)
        if self._writer_thread is not None:
            done.wait(timeout)

    def _write_loop(self) -> None:
        while True:
            data = self._outbox.get()
            if isinstance(data, threading.Event):
                data.set()
                continue
            try:
                body = encode_json(data, default=self._serialize_message)
                header = (
                    f"Content-Length: {len(body)}\r\n"
                    f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
                    if self._include_headers
                    else ""
                )
                self._write((header + body).encode(self.CHARSET))
            except BrokenPipeError:
                log.warning("the client closed the connection; nothing more can be sent")
                return
            except Exception:
                log.exception("a message could not be sent")

    def _write(self, payload: bytes) -> None:
        writer = self.writer
        if isinstance(writer, StdoutWriter):  # a blocking file: written from this thread
            writer.write(payload)
        elif writer is not None and self._loop is not None:  # asyncio streams belong to the loop
            self._loop.call_soon_threadsafe(writer.write, payload)
