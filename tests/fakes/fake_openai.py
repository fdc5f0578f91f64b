"""A scripted OpenAI-compatible HTTP server for tests (stdlib only, real SSE, real error bodies).

In-process use::

    fake = FakeOpenAI().start()
    fake.script.append(Step(Reasoning("thinking", id="rs_1"), Text("hi", chunks=5),
                            ToolCall("read_file", {"path": "a"}, call_id="call_1"), usage=Usage(10, 4)))
    client = openai.AsyncOpenAI(base_url=fake.base_url, api_key="sk-test")
    ...
    fake.requests[-1]["body"]            # every request is recorded: method, path, headers, body
    fake.stop()

As a separate process (the VS Code end-to-end tests)::

    python tests/fakes/fake_openai.py --port 8123 [--script steps.json] [--echo]

and script it over HTTP: ``POST /_control/script`` (a JSON list of steps, appended),
``GET /_control/requests``, ``POST /_control/reset``, ``POST /_control/release`` (``{"gate": name}``),
``POST /_control/images`` (``{"refuse": message | null}``: refuse every request with an image part),
``POST /_control/default`` (``{"mode": "echo"|null}``), ``POST /_control/models``
(``{"models": [id | entry], "get_routes": {path: json}}``: what ``GET /v1/models`` lists, plus other GET
answers such as llama.cpp's ``/props``). ``to_json``/``from_json`` give the JSON form of
every DSL item.

Each ``POST /v1/responses`` or ``/v1/chat/completions`` takes the next script entry: a ``Step`` (a reply,
streamed as OpenAI streams it when the request has ``stream: true``) or an ``HttpError``. An empty script
answers 500 saying so, unless a default reply mode is set (``echo``: "echo: <last user text>").

Like OpenAI, the fake checks what it can see: an ``item_reference`` to an item it never stored (items are
stored only for requests without ``store: false``) is a 404 ``Item with id '…' not found.``, an unknown
``previous_response_id`` a 400 ``previous_response_not_found``; a
``function_call_output`` (or Chat ``tool`` message) without its call is a 400, and so is a Chat
assistant ``tool_calls`` message missing a reply. Set ``fake.validate = False`` to turn that off.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# ---------------------------------------------------------------------------- the DSL


@dataclass
class Usage:
    input_tokens: int
    output_tokens: int
    cached_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass
class Reasoning:
    """A reasoning item whose summary streams as ``text`` (Chat: ``delta.reasoning_content``)."""

    text: str
    id: str | None = None
    chunks: int = 1
    encrypted_content: str | None = None


@dataclass
class Text:
    text: str
    id: str | None = None
    chunks: int = 1


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    call_id: str | None = None
    id: str | None = None
    chunks: int = 1

    def arguments_json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class StreamError:
    """Where it stands in a step: an error event (Responses `event: error`, Chat `{"error": …}`), then end."""

    message: str = "The server had an error while processing your request. Sorry about that!"
    code: str | None = "server_error"
    type: str = "server_error"


@dataclass
class Cut:
    """Close the connection mid-stream: at its place in a step, or after ``after_events`` events."""

    after_events: int | None = None


class Gate:
    """Holds a stream open at a ``WaitForRelease`` until ``release()``; ``reached`` is set when it blocks."""

    def __init__(self, name: str = "gate") -> None:
        self.name = name
        self.reached = threading.Event()
        self._released = threading.Event()

    def release(self) -> None:
        self._released.set()

    def wait(self, timeout: float = 60.0) -> None:
        self.reached.set()
        self._released.wait(timeout)


@dataclass
class WaitForRelease:
    gate: Gate


Item = Reasoning | Text | ToolCall | StreamError | Cut | WaitForRelease


@dataclass
class Step:
    """One model reply. Items stream in order; control items act where they stand."""

    items: tuple[Item, ...]
    usage: Usage | None = None
    delay_per_event: float = 0.0
    finish_reason: str | None = None  # Chat override; Responses: "length" makes it incomplete

    def __init__(
        self,
        *items: Item,
        usage: Usage | None = None,
        delay_per_event: float = 0.0,
        finish_reason: str | None = None,
    ) -> None:
        self.items = items
        self.usage = usage
        self.delay_per_event = delay_per_event
        self.finish_reason = finish_reason


@dataclass
class HttpError:
    """A JSON error reply shaped like OpenAI's: ``{"error": {"message", "type", "param", "code"}}``."""

    status: int
    message: str
    code: str | None = None
    type: str = "invalid_request_error"
    param: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def invalid_api_key(cls, key: str = "sk-wrong") -> HttpError:
        masked = key[:3] + "*" * 4 + key[-4:] if len(key) > 8 else key
        return cls(
            401,
            f"Incorrect API key provided: {masked}. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            code="invalid_api_key",
        )

    @classmethod
    def model_not_found(cls, model: str) -> HttpError:
        return cls(
            404,
            f"The model `{model}` does not exist or you do not have access to it.",
            code="model_not_found",
        )

    @classmethod
    def item_not_found(cls, item_id: str) -> HttpError:
        return cls(404, f"Item with id '{item_id}' not found.", param="input")

    @classmethod
    def rate_limited(cls, retry_after: float = 1, *, ms: bool = False) -> HttpError:
        header = (
            {"retry-after-ms": str(int(retry_after * 1000))} if ms else {"retry-after": f"{retry_after:g}"}
        )
        return cls(
            429,
            "Rate limit reached for gpt-5 in organization org-fake on tokens per min (TPM): Limit 30000, "
            f"Used 29000, Requested 2000. Please try again in {retry_after:g}s. "
            "Visit https://platform.openai.com/account/rate-limits to learn more.",
            code="rate_limit_exceeded",
            type="tokens",
            headers=header,
        )

    @classmethod
    def server_error(cls, status: int = 500) -> HttpError:
        return cls(
            status,
            "The server had an error while processing your request. Sorry about that!",
            code="server_error",
            type="server_error",
        )

    @classmethod
    def bad_request(cls, message: str, *, param: str | None = None, code: str | None = None) -> HttpError:
        return cls(400, message, code=code, param=param)

    @classmethod
    def tools_unsupported(cls, model: str) -> HttpError:
        """Ollama's answer to ``tools`` for a model whose template has no tool calling."""
        return cls(400, f"registry.ollama.ai/library/{model} does not support tools", type="api_error")


@dataclass
class Recorded:
    """A reply replayed verbatim: the raw SSE lines a real server sent (``data: …``, ``: keep-alive``).

    Each line goes out as one SSE event (the line, then a blank line), with the recorded headers.
    """

    lines: list[str]
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/event-stream"})


Entry = Step | HttpError | Recorded

BAD_JSON = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP "
    "library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)"
)

# ---------------------------------------------------------------------------- JSON forms


def to_json(entry: Entry | Item | Usage) -> dict[str, Any]:
    match entry:
        case Step():
            out: dict[str, Any] = {"type": "step", "items": [to_json(i) for i in entry.items]}
            if entry.usage:
                out["usage"] = to_json(entry.usage)
            if entry.delay_per_event:
                out["delay_per_event"] = entry.delay_per_event
            if entry.finish_reason:
                out["finish_reason"] = entry.finish_reason
            return out
        case Usage():
            return {
                "input_tokens": entry.input_tokens,
                "output_tokens": entry.output_tokens,
                "cached_tokens": entry.cached_tokens,
                "reasoning_tokens": entry.reasoning_tokens,
            }
        case Reasoning():
            return {"type": "reasoning", **_fields(entry, "text", "id", "chunks", "encrypted_content")}
        case Text():
            return {"type": "text", **_fields(entry, "text", "id", "chunks")}
        case ToolCall():
            return {"type": "tool_call", **_fields(entry, "name", "arguments", "call_id", "id", "chunks")}
        case StreamError():
            return {
                "type": "stream_error",
                "message": entry.message,
                "code": entry.code,
                "error_type": entry.type,
            }
        case Cut():
            return {"type": "cut", "after_events": entry.after_events}
        case WaitForRelease():
            return {"type": "wait", "gate": entry.gate.name}
        case HttpError():
            return {
                "type": "http_error",
                "status": entry.status,
                "message": entry.message,
                "code": entry.code,
                "error_type": entry.type,
                "param": entry.param,
                "headers": entry.headers,
            }
    raise TypeError(f"not a fake_openai script item: {entry!r}")


def _fields(obj: object, *names: str) -> dict[str, Any]:
    return {n: getattr(obj, n) for n in names if getattr(obj, n) is not None}


def from_json(data: dict[str, Any], gates: dict[str, Gate] | None = None) -> Any:
    """The DSL object for a JSON form (``gates`` resolves ``{"type": "wait", "gate": name}``)."""
    gates = {} if gates is None else gates
    kind = data.get("type")
    args = {k: v for k, v in data.items() if k != "type"}
    if kind == "step":
        usage = Usage(**args["usage"]) if args.get("usage") else None
        items = [from_json(i, gates) for i in args.get("items", [])]
        return Step(
            *items,
            usage=usage,
            delay_per_event=float(args.get("delay_per_event", 0.0)),
            finish_reason=args.get("finish_reason"),
        )
    simple: dict[str, type[Any]] = {"reasoning": Reasoning, "text": Text, "tool_call": ToolCall, "cut": Cut}
    if kind in simple:
        return simple[kind](**args)
    if kind == "stream_error":
        return StreamError(
            args.get("message", StreamError.message), args.get("code"), args.get("error_type", "server_error")
        )
    if kind == "wait":
        name = str(args["gate"])
        return WaitForRelease(gates.setdefault(name, Gate(name)))
    if kind == "http_error":
        return HttpError(
            int(args["status"]),
            str(args["message"]),
            code=args.get("code"),
            type=args.get("error_type", "invalid_request_error"),
            param=args.get("param"),
            headers=dict(args.get("headers") or {}),
        )
    raise ValueError(f"unknown fake_openai script item type: {kind!r}")


# ---------------------------------------------------------------------------- wire


def image_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The image parts a request carries: Chat ``image_url`` and Responses ``input_image``, in order."""
    found: list[dict[str, Any]] = []
    for message in [*(body.get("messages") or []), *(body.get("input") or [])]:
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") in ("image_url", "input_image"):
                found.append(part)
    return found


class _Cut(Exception):
    """Raised inside a handler to drop the connection without finishing the reply."""


class _Writer:
    """Writes one SSE reply with chunked transfer encoding (so a cut is a detectable truncation)."""

    def __init__(self, handler: BaseHTTPRequestHandler, step: Step, cut_after: int | None) -> None:
        self.handler = handler
        self.step = step
        self.cut_after = cut_after
        self.count = 0
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream; charset=utf-8")
        handler.send_header("transfer-encoding", "chunked")
        handler.send_header("x-request-id", _request_id())
        handler.send_header("connection", "close")
        handler.end_headers()
        handler.close_connection = True

    def event(self, name: str | None, data: Any) -> None:
        if self.cut_after is not None and self.count >= self.cut_after:
            raise _Cut
        payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
        text = (f"event: {name}\n" if name else "") + f"data: {payload}\n\n"
        raw = text.encode()
        self.handler.wfile.write(b"%x\r\n%s\r\n" % (len(raw), raw))
        self.count += 1
        if self.step.delay_per_event:
            time.sleep(self.step.delay_per_event)

    def finish(self) -> None:
        self.handler.wfile.write(b"0\r\n\r\n")


def _request_id() -> str:
    return f"req_{uuid.uuid4().hex}"


def _split(text: str, chunks: int) -> list[str]:
    """``text`` in ``chunks`` nearly equal pieces (at least one piece, possibly empty)."""
    if chunks <= 1 or len(text) <= 1:
        return [text]
    chunks = min(chunks, len(text))
    size, extra = divmod(len(text), chunks)
    pieces, start = [], 0
    for i in range(chunks):
        end = start + size + (1 if i < extra else 0)
        pieces.append(text[start:end])
        start = end
    return pieces


def _hex_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


# ---------------------------------------------------------------------------- server


class FakeOpenAI:
    def __init__(self, port: int = 0) -> None:
        self.script: list[Entry] = []
        self.requests: list[dict[str, Any]] = []
        self.stored: dict[str, dict[str, Any]] = {}
        self.gates: dict[str, Gate] = {}
        self.default_reply: str | None = None  # "echo" or None
        self.validate = True
        self.api_key: str | None = None  # when set, any other bearer token gets 401
        # ids, or whole /v1/models entries (a local server's metadata: owned_by, max_model_len, meta)
        self.models: list[str | dict[str, Any]] = ["gpt-5", "gpt-5-mini", "gpt-4o"]
        # other GET paths and their JSON answers, e.g. llama.cpp's "/props"
        self.get_routes: dict[str, Any] = {}
        # POST paths answered by a function of the request body -> (status, JSON), e.g. Ollama's /api/show
        self.post_routes: dict[str, Callable[[dict[str, Any]], tuple[int, Any]]] = {}
        # models whose chat requests with ``tools`` are refused as Ollama refuses them
        self.no_native_tools: set[str] = set()
        # set: every request that carries an image part is refused (400) with this message, as llama.cpp
        # without a vision projector refuses it (``POST /_control/images {"refuse": message | null}``)
        self.refuse_images: str | None = None
        # or "ollama-legacy": no tool-call index, delta.reasoning; "llamacpp": llama-server's chunk shapes
        self.chat_dialect = "openai"
        self.disconnects = 0  # streams the client closed before the end
        # set (seconds): GET /slots answers as llama.cpp's slot monitor, one slot, busy while a chat stream
        # is sent and for this long after its client closed it (llama.cpp lets go of a closed stream only
        # at its next write); ``busy_on_arrival`` then says, per chat request, whether the slot was busy
        self.slot_linger: float | None = None
        self.busy_on_arrival: list[bool] = []
        self._streaming = 0
        self._busy_until = 0.0
        self._port = port
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    # -- lifecycle
    def start(self) -> FakeOpenAI:
        self._httpd = _QuietServer(("127.0.0.1", self._port), _handler_for(self))
        self._httpd.daemon_threads = True
        threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="fake-openai", daemon=True
        ).start()
        return self

    def stop(self) -> None:
        for gate in self.gates.values():
            gate.release()
        for entry in self.script:
            for item in entry.items if isinstance(entry, Step) else ():
                if isinstance(item, WaitForRelease):
                    item.gate.release()
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "call start() first"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting helpers
    def gate(self, name: str = "gate") -> Gate:
        return self.gates.setdefault(name, Gate(name))

    def reset(self) -> None:
        with self._lock:
            held = list(self.gates.values())
            self.script.clear()
            self.requests.clear()
            self.stored.clear()
            self.gates.clear()
        for gate in held:  # a stream held at a gate ends instead of waiting out its timeout
            gate.release()

    def bodies(self, path_suffix: str = "") -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].endswith(path_suffix)]

    def _next(self, body: dict[str, Any]) -> Entry:
        with self._lock:
            if self.script:
                return self.script.pop(0)
        if self.default_reply == "echo":
            return Step(Text(f"echo: {_last_user_text(body)}", chunks=4), usage=Usage(10, 5))
        return HttpError(
            500,
            f"fake_openai: the script is empty; nothing scripted for request #{len(self.requests)}",
            code="fake_script_empty",
            type="server_error",
            headers={"x-should-retry": "false"},
        )

    # -- request handling
    def handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        path = h.path.split("?", 1)[0]
        raw = h.rfile.read(int(h.headers.get("content-length") or 0)) if method == "POST" else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return _send_error(h, HttpError(400, BAD_JSON))
        if path.startswith("/_control/"):
            return self._control(h, method, path, body)
        self.requests.append(
            {
                "method": method,
                "path": path,
                "headers": {k.lower(): v for k, v in h.headers.items()},
                "body": body,
                "received": time.perf_counter(),
            }
        )
        if self.api_key is not None:
            given = (h.headers.get("authorization") or "").removeprefix("Bearer ")
            if given != self.api_key:
                return _send_error(h, HttpError.invalid_api_key(given))
        if method == "GET" and path in self.get_routes:
            return _send_json(h, 200, self.get_routes[path])
        if method == "GET" and path == "/slots" and self.slot_linger is not None:
            return _send_json(h, 200, [{"id": 0, "is_processing": self._slot_busy()}])
        if method == "POST" and path in self.post_routes:
            return _send_json(h, *self.post_routes[path](body))
        if method == "GET" and path.endswith("/models"):
            data = [
                m
                if isinstance(m, dict)
                else {"id": m, "object": "model", "created": 1700000000, "owned_by": "fake"}
                for m in self.models
            ]
            return _send_json(h, 200, {"object": "list", "data": data})
        if method != "POST" or not path.endswith(("/responses", "/chat/completions")):
            return _send_json(
                h,
                404,
                {
                    "error": {
                        "message": f"Unknown path {path}",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": None,
                    }
                },
            )
        responses = path.endswith("/responses")
        problem = (self.check_responses(body) if responses else check_chat(body)) if self.validate else None
        if body.get("tools") and body.get("model") in self.no_native_tools:
            problem = HttpError.tools_unsupported(str(body["model"]))
        if self.refuse_images is not None and image_parts(body):
            problem = HttpError(400, self.refuse_images, type="invalid_request_error")
        entry = problem or self._next(body)
        if isinstance(entry, HttpError):
            return _send_error(h, entry)
        if isinstance(entry, Recorded):
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                _replay(h, entry)
            return None
        if self.slot_linger is not None and not responses:
            self.busy_on_arrival.append(self._slot_busy())
        with self._lock:
            self._streaming += 1
        try:
            if responses:
                self._responses(h, body, entry)
            else:
                _chat(h, body, entry, self.chat_dialect)
        except _Cut:
            pass
        except (BrokenPipeError, ConnectionResetError):
            self.disconnects += 1
            self._busy_until = time.monotonic() + (self.slot_linger or 0.0)
        finally:
            with self._lock:
                self._streaming -= 1

    def _slot_busy(self) -> bool:
        return self._streaming > 0 or time.monotonic() < self._busy_until

    def _control(self, h: BaseHTTPRequestHandler, method: str, path: str, body: Any) -> None:
        if path == "/_control/script" and method == "POST":
            with self._lock:
                self.script.extend(from_json(e, self.gates) for e in body)
            return _send_json(h, 200, {"queued": len(self.script)})
        if path == "/_control/requests":
            return _send_json(h, 200, self.requests)
        if path == "/_control/reset":
            self.reset()
            return _send_json(h, 200, {"ok": True})
        if path == "/_control/images" and method == "POST":
            self.refuse_images = body.get("refuse")
            return _send_json(h, 200, {"ok": True})
        if path == "/_control/release":
            self.gate(str(body["gate"])).release()
            return _send_json(h, 200, {"ok": True})
        if path == "/_control/models" and method == "POST":
            self.models = list(body.get("models", self.models))
            self.get_routes.update(body.get("get_routes") or {})
            return _send_json(h, 200, {"ok": True})
        if path == "/_control/default":
            self.default_reply = body.get("mode")
            return _send_json(h, 200, {"ok": True})
        return _send_json(h, 404, {"error": f"unknown control path {path}"})

    # -- Responses API
    def check_responses(self, body: dict[str, Any]) -> HttpError | None:
        previous = body.get("previous_response_id")
        if previous is not None and previous not in self.stored:
            return HttpError.bad_request(
                f"Previous response with id '{previous}' not found.",
                param="previous_response_id",
                code="previous_response_not_found",
            )
        items = body.get("input")
        if not isinstance(items, list):
            return None
        earlier = self.stored.get(previous, {}).get("output", []) if previous else []
        calls = {i["call_id"] for i in earlier if i.get("type") == "function_call"}
        for item in items:
            kind = item.get("type")
            if kind == "item_reference":
                stored = self.stored.get(item.get("id", ""))
                if stored is None:
                    return HttpError.item_not_found(str(item.get("id")))
                if stored.get("type") == "function_call":
                    calls.add(stored["call_id"])
            elif kind == "function_call":
                calls.add(item.get("call_id", ""))
            elif kind == "function_call_output" and item.get("call_id") not in calls:
                return HttpError.bad_request(
                    f"No tool call found for function call output with call_id {item.get('call_id')}.",
                    param="input",
                )
        return None

    def _responses(self, h: BaseHTTPRequestHandler, body: dict[str, Any], step: Step) -> None:
        response_id = _hex_id("resp")
        model = str(body.get("model", "gpt-5"))
        created = int(time.time())
        output = [
            _response_item(item) for item in step.items if isinstance(item, Reasoning | Text | ToolCall)
        ]
        incomplete = step.finish_reason == "length"
        if body.get("store", True) is not False:
            self.stored[response_id] = {"type": "response", "output": output}
            for item in output:
                self.stored[item["id"]] = item
        final = _response_object(response_id, model, created, body, output, step.usage, incomplete)
        if not body.get("stream"):
            _hold(step)
            return _send_json(h, 200, final)
        cut = next(
            (i.after_events for i in step.items if isinstance(i, Cut) and i.after_events is not None), None
        )
        w = _Writer(h, step, cut)
        seq = itertools.count()
        base = {**final, "status": "in_progress", "output": [], "usage": None}

        def send(kind: str, **data: Any) -> None:
            w.event(kind, {"type": kind, **data, "sequence_number": next(seq)})

        send("response.created", response=base)
        send("response.in_progress", response=base)
        index = 0
        for item in step.items:
            if isinstance(item, Reasoning | Text | ToolCall):
                _stream_output_item(send, index, item, output[index])
                index += 1
            elif not self._control_item(item, w, send):
                return
        if incomplete:
            send("response.incomplete", response=final)
        else:
            send("response.completed", response=final)
        w.finish()

    @staticmethod
    def _control_item(item: Item, w: _Writer, send: Any) -> bool:
        """Act on a control item; False when the stream ends here."""
        if isinstance(item, WaitForRelease):
            w.handler.wfile.flush()
            item.gate.wait()
            return True
        if isinstance(item, Cut) and item.after_events is None:
            raise _Cut
        if isinstance(item, StreamError):
            send("error", code=item.code, message=item.message, param=None)
            w.finish()
            return False
        return True


def _response_item(item: Reasoning | Text | ToolCall) -> dict[str, Any]:
    match item:
        case Reasoning():
            out: dict[str, Any] = {
                "id": item.id or _hex_id("rs"),
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": item.text}] if item.text else [],
            }
            if item.encrypted_content is not None:
                out["encrypted_content"] = item.encrypted_content
            return out
        case Text():
            return {
                "id": item.id or _hex_id("msg"),
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": item.text, "annotations": [], "logprobs": []}],
            }
        case ToolCall():
            return {
                "id": item.id or _hex_id("fc"),
                "type": "function_call",
                "status": "completed",
                "call_id": item.call_id or _hex_id("call"),
                "name": item.name,
                "arguments": item.arguments_json(),
            }


def _stream_output_item(
    send: Any, index: int, item: Reasoning | Text | ToolCall, done: dict[str, Any]
) -> None:
    item_id = done["id"]
    ref = {"item_id": item_id, "output_index": index}
    match item:
        case Reasoning():
            send("response.output_item.added", output_index=index, item={**done, "summary": []})
            if item.text:
                part = {"type": "summary_text", "text": ""}
                send("response.reasoning_summary_part.added", **ref, summary_index=0, part=part)
                for piece in _split(item.text, item.chunks):
                    send("response.reasoning_summary_text.delta", **ref, summary_index=0, delta=piece)
                send("response.reasoning_summary_text.done", **ref, summary_index=0, text=item.text)
                send(
                    "response.reasoning_summary_part.done",
                    **ref,
                    summary_index=0,
                    part={"type": "summary_text", "text": item.text},
                )
        case Text():
            send(
                "response.output_item.added",
                output_index=index,
                item={**done, "status": "in_progress", "content": []},
            )
            empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            send("response.content_part.added", **ref, content_index=0, part=empty)
            for piece in _split(item.text, item.chunks):
                send("response.output_text.delta", **ref, content_index=0, delta=piece, logprobs=[])
            send("response.output_text.done", **ref, content_index=0, text=item.text, logprobs=[])
            send("response.content_part.done", **ref, content_index=0, part=done["content"][0])
        case ToolCall():
            send(
                "response.output_item.added",
                output_index=index,
                item={**done, "status": "in_progress", "arguments": ""},
            )
            for piece in _split(done["arguments"], item.chunks):
                send("response.function_call_arguments.delta", **ref, delta=piece)
            send("response.function_call_arguments.done", **ref, name=item.name, arguments=done["arguments"])
    send("response.output_item.done", output_index=index, item=done)


def _response_object(
    response_id: str,
    model: str,
    created: int,
    body: dict[str, Any],
    output: list[dict[str, Any]],
    usage: Usage | None,
    incomplete: bool,
) -> dict[str, Any]:
    u = usage or Usage(0, 0)
    return {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "status": "incomplete" if incomplete else "completed",
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
        "store": body.get("store", True),
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": body.get("tools") or [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": u.input_tokens,
            "input_tokens_details": {"cached_tokens": u.cached_tokens},
            "output_tokens": u.output_tokens,
            "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
            "total_tokens": u.input_tokens + u.output_tokens,
        },
        "metadata": {},
    }


# -- Chat Completions


def check_chat(body: dict[str, Any]) -> HttpError | None:
    waiting: list[str] = []
    for message in body.get("messages") or []:
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in waiting:
                return HttpError.bad_request(
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
                    "with 'tool_calls'.",
                    param="messages",
                )
            waiting.remove(message["tool_call_id"])
            continue
        if waiting:
            return HttpError.bad_request(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                "'tool_call_id'. The following tool_call_ids did not have response messages: "
                + ", ".join(waiting),
                param="messages",
            )
        if role == "assistant":
            waiting = [c["id"] for c in message.get("tool_calls") or []]
    return None


def _hold(step: Step) -> None:
    """A plain (not streamed) reply, such as a summary, waits at its gates as a stream would."""
    for item in step.items:
        if isinstance(item, WaitForRelease):
            item.gate.wait()


def _chat(h: BaseHTTPRequestHandler, body: dict[str, Any], step: Step, dialect: str = "openai") -> None:
    chat_id = f"chatcmpl-{uuid.uuid4().hex[:29]}"
    model = str(body.get("model", "gpt-5"))
    created = int(time.time())
    calls = [i for i in step.items if isinstance(i, ToolCall)]
    call_ids = [c.call_id or _hex_id("call") for c in calls]
    finish = step.finish_reason or ("tool_calls" if calls else "stop")
    usage = _chat_usage(step.usage)
    if not body.get("stream"):
        _hold(step)
        text = "".join(i.text for i in step.items if isinstance(i, Text))
        message: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": None}
        reasoning = "".join(i.text for i in step.items if isinstance(i, Reasoning))
        if reasoning:
            message["reasoning_content"] = reasoning
        if calls:
            message["tool_calls"] = [
                {"id": cid, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json()}}
                for c, cid in zip(calls, call_ids, strict=True)
            ]
        return _send_json(
            h,
            200,
            {
                "id": chat_id,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                "usage": usage,
                "system_fingerprint": "fp_fake",
            },
        )
    cut = next(
        (i.after_events for i in step.items if isinstance(i, Cut) and i.after_events is not None), None
    )
    w = _Writer(h, step, cut)

    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))

    llamacpp = dialect == "llamacpp"
    fingerprint = "b0-unknown" if llamacpp else "fp_fake"

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> None:
        if dialect == "ollama-legacy":
            delta = _ollama_legacy(delta)
        choice: dict[str, Any] = {
            "index": 0,
            "delta": delta,
            "logprobs": None,
            "finish_reason": finish_reason,
        }
        if llamacpp:  # llama-server: no logprobs key, finish_reason first
            choice = {"finish_reason": finish_reason, "index": 0, "delta": delta}
        data = {
            "id": chat_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": fingerprint,
            "choices": [choice],
        }
        if include_usage and not llamacpp:  # OpenAI then sends "usage": null on every chunk before the last
            data["usage"] = None
        w.event(None, data)

    if llamacpp:
        chunk({"role": "assistant", "content": None})
    else:
        chunk({"role": "assistant", "content": "", "refusal": None})
    call_index = 0
    for item in step.items:
        for delta in _chat_deltas(item, call_index, call_ids):
            chunk(delta)
        if isinstance(item, ToolCall):
            call_index += 1
        if isinstance(item, WaitForRelease):
            item.gate.wait()
        elif isinstance(item, Cut) and item.after_events is None:
            raise _Cut
        elif isinstance(item, StreamError):
            w.event(
                None,
                {"error": {"message": item.message, "type": item.type, "param": None, "code": item.code}},
            )
            w.finish()
            return
    chunk({}, finish)
    if include_usage:
        last: dict[str, Any] = {
            "id": chat_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": fingerprint,
            "choices": [],
            "usage": usage,
        }
        if llamacpp:  # llama-server's own counters, and cached_tokens even when 0
            cached = usage.get("prompt_tokens_details", {}).get("cached_tokens", 0)
            prompt = usage.get("prompt_tokens", 0)
            last["usage"] = {k: v for k, v in usage.items() if k != "completion_tokens_details"}
            last["usage"]["prompt_tokens_details"] = {"cached_tokens": cached}
            last["timings"] = {
                "cache_n": cached,
                "prompt_n": prompt - cached,
                "prompt_ms": 100.0,
                "predicted_n": usage.get("completion_tokens", 0),
                "predicted_ms": 100.0,
            }
        w.event(None, last)
    w.event(None, "[DONE]")
    w.finish()


def _replay(h: BaseHTTPRequestHandler, entry: Recorded) -> None:
    h.send_response(200)
    for name, value in entry.headers.items():
        if name.lower() not in ("transfer-encoding", "content-length", "keep-alive", "connection"):
            h.send_header(name, value)
    h.send_header("transfer-encoding", "chunked")
    h.send_header("connection", "close")
    h.end_headers()
    h.close_connection = True
    for line in entry.lines:
        raw = (line + "\n\n").encode()
        h.wfile.write(b"%x\r\n%s\r\n" % (len(raw), raw))
    h.wfile.write(b"0\r\n\r\n")


def _chat_deltas(item: Item, call_index: int, call_ids: list[str]) -> Iterator[dict[str, Any]]:
    match item:
        case Reasoning():
            for piece in _split(item.text, item.chunks):
                yield {"reasoning_content": piece}
        case Text():
            for piece in _split(item.text, item.chunks):
                yield {"content": piece}
        case ToolCall():
            head = {
                "index": call_index,
                "id": call_ids[call_index],
                "type": "function",
                "function": {"name": item.name, "arguments": ""},
            }
            yield {"tool_calls": [head]}
            for piece in _split(item.arguments_json(), item.chunks):
                yield {"tool_calls": [{"index": call_index, "function": {"arguments": piece}}]}


def _ollama_legacy(delta: dict[str, Any]) -> dict[str, Any]:
    """Older Ollama: tool-call fragments without ``index``, reasoning as ``delta.reasoning``."""
    out = dict(delta)
    if "reasoning_content" in out:
        out["reasoning"] = out.pop("reasoning_content")
    if "tool_calls" in out:
        out["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in out["tool_calls"]]
    return out


def _chat_usage(usage: Usage | None) -> dict[str, Any]:
    u = usage or Usage(0, 0)
    return {
        "prompt_tokens": u.input_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.input_tokens + u.output_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cached_tokens, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": u.reasoning_tokens, "audio_tokens": 0},
    }


# -- plain JSON replies


def _send_json(
    h: BaseHTTPRequestHandler, status: int, payload: Any, headers: dict[str, str] | None = None
) -> None:
    data = json.dumps(payload).encode()
    h.send_response(status)
    h.send_header("content-type", "application/json")
    h.send_header("x-request-id", _request_id())
    for name, value in (headers or {}).items():
        h.send_header(name, value)
    h.send_header("content-length", str(len(data)))
    h.end_headers()
    h.wfile.write(data)


def _send_error(h: BaseHTTPRequestHandler, error: HttpError) -> None:
    body = {"error": {"message": error.message, "type": error.type, "param": error.param, "code": error.code}}
    _send_json(h, error.status, body, error.headers)


def _last_user_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or body.get("input") or []
    if isinstance(messages, str):
        return messages
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [p.get("text", "") for p in content or [] if isinstance(p, dict)]
        return "".join(texts)
    return ""


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that hung up is not news
            super().handle_error(request, client_address)


def _handler_for(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            fake.handle(self, "POST")

        def do_GET(self) -> None:
            fake.handle(self, "GET")

    return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A scripted OpenAI-compatible server for tests and demos.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="a JSON file holding a list of steps")
    parser.add_argument(
        "--echo", action="store_true", help="when the script is empty, echo the last user message"
    )
    args = parser.parse_args(argv)
    fake = FakeOpenAI(args.port)
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            fake.script.extend(from_json(e, fake.gates) for e in json.load(f))
    fake.default_reply = "echo" if args.echo else None
    fake.start()
    print(f"fake_openai listening on {fake.base_url}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()
    fake.stop()


if __name__ == "__main__":
    sys.exit(main())
