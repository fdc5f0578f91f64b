"""The JSON-RPC edge: framing, parsing and envelope checks before pygls dispatches anything.

pygls 2.1 reads frames leniently (a bad header is skipped, so the server goes deaf), parses with
an ``object_hook`` that turns any JSON-RPC look-alike object *inside* params into a message, drops
a request whose params do not structure without answering it, and logs a traceback for each
failure. Here every request gets an answer:

* a frame that is not ``Content-Length: N\\r\\n ... \\r\\n`` ends the server with a logged reason
  (the client restarts it): after a framing error the byte stream cannot be trusted again;
* a body that is not JSON is ``-32700``; a message that is not a JSON-RPC 2.0 object, an id that
  is not an integer or a string, or a method that is not a string is ``-32600``;
* params that are not an object/array, nested deeper than ``MAX_DEPTH``, holding a number longer
  than ``MAX_NUMBER_CHARS`` or not matching the method's type are ``-32602``;
* a handler's ``ShiroError`` or ``OSError`` is a message a person can act on; anything else is
  ``-32603`` with no Python text on the wire (the traceback goes to the log, once).

Error messages quote hostile input only as a short excerpt, and a bad request logs one line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import re
import select
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import cattrs
from lsprotocol.types import CANCEL_REQUEST
from pygls.exceptions import JsonRpcException
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage

from shiro_lsp.errors import INVALID_PARAMS, SHIRO_ERROR, ShiroError, from_os_error, from_sqlite_error
from shiro_lsp.server.jsonrpc.transport import ThreadedWriterProtocol

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800

MAX_HEADER_LINE = 1024
MAX_HEADERS = 16
MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 64
MAX_NUMBER_CHARS = 1000
MAX_MESSAGE_CHARS = 2_000
EXCERPT_CHARS = 60
FRAME_TIMEOUT_S = float(os.environ.get("SHIRO_FRAME_TIMEOUT_S", "30"))


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """A short, single-line quote of something a client sent (never the whole of it)."""
    text = value if isinstance(value, str) else repr(value)
    size = len(text)
    text = text[: limit + 1].replace("\n", "\\n").replace("\r", "\\r")
    return text if size <= limit else f"{text[:limit]}… ({size} chars)"


def cap(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    return message if len(message) <= limit else message[:limit] + "…"


class FramingError(Exception):
    """The byte stream on stdin is not LSP framing: nothing after it can be trusted."""


class _Unrepresentable:
    """Stands in for a number the server refuses to convert (too long, NaN, infinite)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return excerpt(self.text, 20)


def _parse_int(text: str) -> object:
    return int(text) if len(text) <= MAX_NUMBER_CHARS else _Unrepresentable(text)


def _parse_float(text: str) -> object:
    if len(text) > MAX_NUMBER_CHARS:
        return _Unrepresentable(text)
    value = float(text)
    return value if math.isfinite(value) else _Unrepresentable(text)


def loads(body: bytes) -> Any:
    return json.loads(body, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_Unrepresentable)


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)
_COLON = re.compile(rb"\s*:\s*")


def without_params(body: bytes) -> bytes | None:
    """``body`` with a nested top-level ``params`` value replaced by ``null`` (to answer its id)."""
    depth, start = 0, -1
    for match in _TOKEN.finditer(body):
        token = match.group()
        if token[:1] == b'"':
            if depth == 1 and start < 0 and token == b'"params"':
                colon = _COLON.match(body, match.end())
                if colon and body[colon.end() : colon.end() + 1] in (b"[", b"{"):
                    start = colon.end()
            continue
        if token in (b"[", b"{"):
            depth += 1
        else:
            depth -= 1
            if depth == 1 and start >= 0:
                return body[:start] + b"null" + body[match.end() :]
    return None


def params_problem(params: Any) -> str | None:
    """Why ``params`` cannot be handled at all (shape, depth, numbers), or None."""
    if params is not None and not isinstance(params, dict | list):
        return "params must be an object or an array"
    stack: list[tuple[Any, int]] = [(params, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, _Unrepresentable):
            return f"a number is too long or not finite ({excerpt(value.text, 20)})"
        if isinstance(value, dict | list):
            if depth > MAX_DEPTH:
                return f"params are nested more than {MAX_DEPTH} levels deep"
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)
    return None


def _valid_id(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _structure_problem(error: Exception) -> str:
    try:
        problems = cattrs.transform_error(error)
    except Exception:
        problems = [type(error).__name__]
    shown = [excerpt(p, 120) for p in problems[:3]]
    more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
    return "; ".join(shown) + more


NOT_INITIALIZED = "The server is not initialized yet."


class ShiroProtocol(ThreadedWriterProtocol):
    """pygls' LSP protocol, fed whole frames by ``serve`` and answering every request."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._methods: dict[Any, str] = {}
        self._after_reply: list[Callable[[], None]] = []
        self.unavailable: str | None = NOT_INITIALIZED
        """Why Shiro's own methods (``shiro/...``) cannot be answered yet: before ``initialize`` has
        registered them, or the reason they could not be; None once they are."""

    # --- receiving -------------------------------------------------------------------------------

    def receive(self, body: bytes) -> None:
        """Handle one frame's body, then the work it left for after its reply; never raises."""
        try:
            self._receive(body)
        except Exception:
            log.exception("Unexpected failure handling a message; it was dropped")
        while self._after_reply:
            work = self._after_reply.pop(0)
            try:
                work()
            except Exception:
                log.exception("Unexpected failure in work left for after a reply")

    def after_reply(self, work: Callable[[], None]) -> None:
        """Run ``work`` on the loop once the message being handled has been answered (the answer
        is queued for the writer thread) and before the next message is read: a handler can answer
        first and finish behind its answer, and no later message sees the work half done."""
        self._after_reply.append(work)

    def _receive(self, body: bytes) -> None:
        deep = False
        try:
            data = loads(body)
        except RecursionError:
            salvaged = without_params(body)
            try:
                data = loads(salvaged) if salvaged is not None else None
            except (RecursionError, ValueError):
                data = None
            if not isinstance(data, dict):
                self._reject(None, PARSE_ERROR, "Parse error: the message is nested too deeply")
                return
            deep = True
        except ValueError as error:  # includes UnicodeDecodeError
            self._reject(None, PARSE_ERROR, f"Parse error: the message is not JSON ({excerpt(str(error))})")
            return
        if not isinstance(data, dict):
            self._reject(None, INVALID_REQUEST, "Invalid request: a message must be a JSON object")
            return
        has_id = "id" in data
        msg_id = data.get("id")
        reply_id = msg_id if has_id and _valid_id(msg_id) else None
        if data.get("jsonrpc") != "2.0":
            self._reject(reply_id, INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"')
            return
        if has_id and not _valid_id(msg_id):
            self._reject(None, INVALID_REQUEST, "Invalid request: the id must be an integer or a string")
            return
        if "method" not in data:
            self._receive_response(data, msg_id)
            return
        method = data["method"]
        if not isinstance(method, str):
            self._reject(reply_id, INVALID_REQUEST, "Invalid request: the method must be a string")
            return
        params = data.get("params")
        problem = f"params are nested more than {MAX_DEPTH} levels deep" if deep else params_problem(params)
        if not has_id:
            self._receive_notification(method, params, problem)
            return
        if method not in self.fm.builtin_features and method not in self.fm.features:
            if self.unavailable is not None and method.startswith("shiro/"):
                self._reject(msg_id, SHIRO_ERROR, self.unavailable)
            else:
                self._reject(msg_id, METHOD_NOT_FOUND, f"Method not found: {excerpt(method)}")
            return
        if problem is not None:
            self._reject(msg_id, INVALID_PARAMS, f"Invalid params for {excerpt(method)}: {problem}")
            return
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
        try:
            structured = self._converter.structure(
                message, self.get_message_type(method) or JsonRPCRequestMessage
            )
        except Exception as error:
            self._reject(
                msg_id, INVALID_PARAMS, f"Invalid params for {excerpt(method)}: {_structure_problem(error)}"
            )
            return
        self._methods[msg_id] = method
        self.handle_message(structured)

    def _receive_notification(self, method: str, params: Any, problem: str | None) -> None:
        known = method in self.fm.builtin_features or method in self.fm.features or method == CANCEL_REQUEST
        if not known:
            if not method.startswith("$/"):
                log.info("Ignored a notification for an unknown method %s", excerpt(method))
            return
        if problem is not None:
            log.warning("Dropped notification %s: %s", excerpt(method), problem)
            return
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        try:
            structured = self._converter.structure(
                message, self.get_message_type(method) or JsonRPCNotification
            )
        except Exception as error:
            log.warning("Dropped notification %s: %s", excerpt(method), _structure_problem(error))
            return
        self.handle_message(structured)

    def _receive_response(self, data: dict[str, Any], msg_id: Any) -> None:
        future = self._request_futures.get(msg_id) if _valid_id(msg_id) else None
        if future is None:
            log.info("Ignored a response to an unknown request id %s", excerpt(msg_id))
            return
        try:
            structured = self.structure_message(data)
        except Exception:
            self._request_futures.pop(msg_id, None)
            future.set_exception(
                JsonRpcException(code=INVALID_REQUEST, message="The client's reply was malformed")
            )
            return
        self.handle_message(structured)

    def structure_message(self, data: dict[str, Any]) -> Any:
        # pygls logs a traceback here for every bad message: one line is enough.
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            log.warning("Could not read a message: %s", excerpt(error.message))
            raise

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        future = self._request_futures.pop(msg_id, None)
        if future is not None and future.cancel():
            log.info("Cancelled request %s", excerpt(msg_id))

    # --- answering -------------------------------------------------------------------------------

    def _reject(self, msg_id: Any, code: int, message: str) -> None:
        log.warning("Rejected a message (%d): %s", code, cap(message, 200))
        self._send_error(msg_id, code, message)

    def _send_error(self, msg_id: Any, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": cap(message)}
        if data is not None:
            error["data"] = data
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": error})

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        self._request_futures.pop(msg_id, None)
        method = self._methods.pop(msg_id, "request")
        if future.cancelled():
            self._send_error(msg_id, REQUEST_CANCELLED, "The request was cancelled")
            return
        error = future.exception()
        if error is None:
            self._send_response(msg_id, result=future.result())
            return
        if isinstance(error, OSError):
            log.warning("%s failed: %s", method, error)
            error = from_os_error(error)
        elif isinstance(error, sqlite3.Error):
            log.warning("%s failed in the database: %s", method, error)
            error = from_sqlite_error(error)
        if isinstance(error, ShiroError):
            self._send_error(msg_id, error.code, error.message, error.data)
        elif isinstance(error, JsonRpcException):
            log.info("%s answered %s: %s", method, error.code, cap(error.message, 200))
            self._send_error(msg_id, error.code, error.message, error.data)
        else:
            log.error("Internal error in %s", method, exc_info=error)
            self._send_error(
                msg_id,
                INTERNAL_ERROR,
                f"Shiro hit an internal error handling {excerpt(method)}; the details are in the Shiro log.",
            )


# --- the stdio loop ------------------------------------------------------------------------------


class FrameReader:
    """Reads LSP frames from a file descriptor, with a time limit once a frame has begun.

    A client writes a frame at once, so a frame that stops arriving half-way (a wrong
    Content-Length, bytes that are not a frame) is broken, not slow: after
    ``frame_timeout`` seconds without a byte inside a frame, reading raises FramingError.
    """

    def __init__(self, fd: int, frame_timeout: float = FRAME_TIMEOUT_S) -> None:
        self.fd = fd
        self.frame_timeout = frame_timeout
        self.buffer = bytearray()
        self.eof = False

    def _fill(self, in_frame: bool) -> None:
        if in_frame and self.frame_timeout > 0 and os.name != "nt":
            ready, _, _ = select.select([self.fd], [], [], self.frame_timeout)
            if not ready:
                raise FramingError(f"a message stopped arriving half-way ({self.frame_timeout:g} s)")
        chunk = os.read(self.fd, 65536)
        if chunk:
            self.buffer += chunk
        else:
            self.eof = True

    def readline(self, limit: int, in_frame: bool) -> bytes:
        while True:
            end = self.buffer.find(b"\n", 0, limit)
            if end >= 0 or len(self.buffer) >= limit or self.eof:
                size = end + 1 if end >= 0 else min(limit, len(self.buffer))
                line = bytes(self.buffer[:size])
                del self.buffer[:size]
                return line
            self._fill(in_frame or bool(self.buffer))

    def read(self, size: int) -> bytes:
        while len(self.buffer) < size and not self.eof:
            self._fill(True)
        body = bytes(self.buffer[:size])
        del self.buffer[:size]
        return body

    def frame(self) -> bytes | None:
        """One frame's body; None at a clean end of input. Raises FramingError."""
        length: int | None = None
        count = 0
        while True:
            line = self.readline(MAX_HEADER_LINE + 1, in_frame=count > 0)
            if not line:
                if count:
                    raise FramingError("the input ended inside a header")
                return None
            if len(line) > MAX_HEADER_LINE:
                raise FramingError("a header line is too long")
            if not line.endswith(b"\r\n"):
                raise FramingError(f"a header line does not end with CRLF: {excerpt(line)}")
            if line == b"\r\n":
                if length is None:
                    raise FramingError("a message has no Content-Length header")
                break
            count += 1
            if count > MAX_HEADERS:
                raise FramingError("too many header lines")
            name, sep, value = line[:-2].partition(b":")
            header = name.strip().lower()
            if not sep or header not in (b"content-length", b"content-type"):
                raise FramingError(f"not an LSP header: {excerpt(line)}")
            if header == b"content-length":
                text = value.strip()
                if not text.isdigit() or len(text) > 12:
                    raise FramingError(f"Content-Length is not a number: {excerpt(text)}")
                length = int(text)
                if length > MAX_BODY_BYTES:
                    raise FramingError(f"a message of {length} bytes is over the {MAX_BODY_BYTES} byte limit")
        body = self.read(length)
        if len(body) < length:
            raise FramingError(f"the input ended inside a message ({len(body)} of {length} bytes)")
        return body


async def serve(reader: FrameReader, protocol: ShiroProtocol, stop: threading.Event) -> str | None:
    """Feed frames to ``protocol`` until the input ends (None) or breaks (the logged reason).

    Frames are read on a daemon thread, so a read blocked on stdin never holds up the exit.
    """
    loop = asyncio.get_running_loop()
    frames: asyncio.Queue[bytes | FramingError | None] = asyncio.Queue(maxsize=0)

    def pump() -> None:
        while True:
            try:
                body: bytes | FramingError | None = reader.frame()
            except FramingError as error:
                body = error
            except OSError as error:
                body = FramingError(f"stdin could not be read: {error}")
            try:
                loop.call_soon_threadsafe(frames.put_nowait, body)
            except RuntimeError:  # the loop is closed: the server is exiting
                return
            if not isinstance(body, bytes):
                return

    threading.Thread(target=pump, name="shiro-stdin", daemon=True).start()
    while not stop.is_set():
        item = await frames.get()
        if item is None:
            return None
        if isinstance(item, FramingError):
            reason = f"the client sent a malformed frame ({item})"
            log.error("Shiro is stopping: %s; the editor restarts the server.", reason)
            return reason
        protocol.receive(item)
    return None
