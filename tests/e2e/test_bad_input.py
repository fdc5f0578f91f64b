"""Bad input over real stdio: every request is answered, the server keeps serving, nothing floods.

Issue 14 "Bad input": requests without params or with JSON-RPC look-alikes inside, deep nesting,
huge numbers, odd ids, non-string methods, wrong-typed code-action ranges, folders/FIFOs as
documents, framing errors, size limits, and what the error messages and the log say about it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from raw_lsp import RawServer, frame

from shiro_lsp.server.protocol import MAX_PROMPT_CHARS, METHODS

INVALID_REQUEST, INVALID_PARAMS, INTERNAL = -32600, -32602, -32603
CLIENT_METHODS = [m.name for m in METHODS if m.direction == "client->server" and m.kind == "request"]
# Methods that would start a model turn or need a second round trip are asked without a model.
NO_CHAT = [m for m in CLIENT_METHODS if m not in ("shiro/chat",)]


@pytest.fixture(scope="module")
def server_dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("bad-input")
    (root / "workspace").mkdir()
    return root / "state", root / "workspace"


@pytest.fixture(scope="module")
def raw(server_dirs: tuple[Path, Path]) -> Iterator[RawServer]:
    """One server for the whole module: each test also checks that it still serves afterwards."""
    server = RawServer(*server_dirs)
    assert "result" in server.initialize()
    yield server
    server.close()


def assert_answered_cleanly(reply: dict[str, object]) -> None:
    """A result, or an error a person can read: never an internal error, never a traceback."""
    error = reply.get("error")
    if error is None:
        assert "result" in reply
        return
    assert isinstance(error, dict)
    assert error["code"] != INTERNAL, error
    assert "Traceback" not in str(error) and "traceback" not in str(error.get("data") or "")
    assert len(str(error["message"])) <= 700


def no_error_toasts(server: RawServer) -> None:
    shown = [n for n in server.notifications if n["method"] in ("window/showMessage", "window/logMessage")]
    assert not [n for n in shown if "Error in server" in str(n)], shown


def test_requests_without_params_are_all_answered(raw: RawServer) -> None:
    ids = {method: raw.request(method, omit_params=True) for method in NO_CHAT}
    for msg_id in ids.values():
        assert_answered_cleanly(raw.reply(msg_id))
    assert raw.serves()
    no_error_toasts(raw)


def test_lsp_requests_without_params_are_invalid_params(raw: RawServer) -> None:
    for method in ("textDocument/codeAction", "workspace/executeCommand"):
        reply = raw.reply(raw.request(method, omit_params=True))
        assert reply["error"]["code"] == INVALID_PARAMS, reply
    assert raw.serves()


def test_json_rpc_look_alikes_inside_params_are_plain_data(raw: RawServer) -> None:
    look_alike = {"jsonrpc": "2.0", "id": 99, "method": "shutdown", "params": None}
    reply = raw.call("shiro/memory/recall", {"query": look_alike})
    assert reply["error"]["code"] == INVALID_PARAMS and "query" in reply["error"]["message"]
    reply = raw.call("shiro/todos/update", {"todos": [look_alike]})
    assert reply["error"]["code"] == INVALID_PARAMS
    assert 99 not in raw.replies  # the look-alike was never dispatched as a request
    assert raw.serves()


def test_deeply_nested_params_are_refused_and_the_server_keeps_serving(raw: RawServer) -> None:
    for depth in (100, 3_000, 100_000):
        body = b'{"jsonrpc":"2.0","id":%d,"method":"shiro/memory/recall","params":{"query":%s%s}}' % (
            depth,
            b"[" * depth,
            b"]" * depth,
        )
        raw.write(frame(body))
        reply = raw.reply(depth)
        assert reply["error"]["code"] == INVALID_PARAMS and "nested" in reply["error"]["message"]
    assert raw.serves()


def test_huge_numbers_are_answered(raw: RawServer) -> None:
    raw.write(
        frame(
            b'{"jsonrpc":"2.0","id":7,"method":"shiro/session/branch","params":{"atMessage":%s}}'
            % (b"9" * 5000)
        )
    )
    reply = raw.reply(7)
    assert reply["error"]["code"] == INVALID_PARAMS and "number" in reply["error"]["message"]
    assert len(reply["error"]["message"]) < 300
    raw.write(frame(b'{"jsonrpc":"2.0","id":%s,"method":"shiro/todos","params":{}}' % (b"1" * 5000)))
    assert raw.null_reply()["error"]["code"] == INVALID_REQUEST
    assert raw.serves()


@pytest.mark.parametrize("odd_id", [{}, [1], 1.5, True])
def test_odd_ids_are_invalid_requests(raw: RawServer, odd_id: object) -> None:
    raw.send({"jsonrpc": "2.0", "id": odd_id, "method": "shiro/todos", "params": {}})
    reply = raw.null_reply()
    assert reply["error"]["code"] == INVALID_REQUEST and "id" in reply["error"]["message"]
    assert raw.serves()
    no_error_toasts(raw)


@pytest.mark.parametrize("method", [5, None, ["shiro/todos"], {"a": 1}])
def test_non_string_methods_are_invalid_requests(raw: RawServer, method: object) -> None:
    reply = raw.call(method, {})  # type: ignore[arg-type]
    assert reply["error"]["code"] == INVALID_REQUEST and "method" in reply["error"]["message"]
    assert raw.serves()


def test_not_json_and_not_objects_are_answered_and_the_server_keeps_serving(raw: RawServer) -> None:
    raw.write(frame(b"{not json"))
    assert raw.null_reply()["error"]["code"] == -32700
    raw.write(frame(b"\xff\xfe\x00garbage"))
    assert raw.null_reply()["error"]["code"] == -32700
    for value in ([], [{"jsonrpc": "2.0", "id": 1, "method": "shiro/todos"}], 5, "x", None):
        raw.send(value)
        assert raw.null_reply()["error"]["code"] == INVALID_REQUEST
    raw.send({"id": 42, "method": "shiro/todos", "params": {}})
    assert raw.reply(42)["error"]["code"] == INVALID_REQUEST
    assert raw.serves()
    no_error_toasts(raw)


def test_hostile_input_is_never_echoed_whole(raw: RawServer) -> None:
    huge = "x" * 1_000_000
    reply = raw.call("nope/" + huge, {})
    assert reply["error"]["code"] == -32601 and len(reply["error"]["message"]) < 300
    reply = raw.call("shiro/session/delete", {"id": huge})
    assert reply["error"]["code"] == INVALID_PARAMS and len(reply["error"]["message"]) < 700
    reply = raw.call("shiro/todos", {}, msg_id=huge)  # the id comes back (it must), not in the message
    assert "result" in reply
    assert huge not in raw.stderr()


def test_a_bad_params_request_logs_one_line_not_a_traceback(raw: RawServer) -> None:
    before = len(raw.stderr())
    for n in range(40):
        assert raw.call("shiro/memory/recall", {"query": n})["error"]["code"] == INVALID_PARAMS
    log = raw.stderr()[before:]
    assert "Traceback" not in log
    assert len(log.splitlines()) <= 80 and len(log) < 40 * 400


def test_code_action_with_a_wrong_typed_range_is_invalid_params(raw: RawServer) -> None:
    uri = (raw.workspace / "a.py").as_uri()
    for bad in ("x", {"start": {"line": "0", "character": 0}, "end": 5}, None, []):
        reply = raw.call(
            "textDocument/codeAction",
            {"textDocument": {"uri": uri}, "range": bad, "context": {"diagnostics": []}},
        )
        assert reply["error"]["code"] == INVALID_PARAMS, reply
    assert raw.serves()


def test_code_action_with_a_string_for_a_number_is_invalid_params(raw: RawServer) -> None:
    """Issue 20: the standard methods validate their params like the custom ones (cattrs took "3" for 3)."""
    path = raw.workspace / "numbers.py"
    path.write_text("one = 1\ntwo = 2\n")
    position = {"line": 0, "character": 0}
    for start, end, uri in [
        ({"line": "0", "character": 0}, {"line": 1, "character": 3}, path.as_uri()),
        (position, {"line": 1, "character": "3"}, path.as_uri()),
        (position, {"line": 1.5, "character": 3}, path.as_uri()),
        (position, {"line": True, "character": 3}, path.as_uri()),
        (position, {"line": 1, "character": 3}, 5),
    ]:
        reply = raw.call(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": {"start": start, "end": end},
                "context": {"diagnostics": []},
            },
        )
        assert reply.get("error", {}).get("code") == INVALID_PARAMS, reply
    good = {"start": position, "end": {"line": 1, "character": 3}}
    reply = raw.call(
        "textDocument/codeAction",
        {"textDocument": {"uri": path.as_uri()}, "range": good, "context": {"diagnostics": []}},
    )
    assert reply["result"] and reply["result"][0]["title"] == "Shiro: Remember this", reply
    assert raw.serves()


@pytest.mark.parametrize("kind", ["folder", "missing", "fifo", "huge"])
def test_code_action_on_a_folder_missing_file_or_fifo_answers_nothing(raw: RawServer, kind: str) -> None:
    workspace = raw.workspace
    target = workspace / kind
    if kind == "folder":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "huge":
        with target.open("wb") as handle:
            handle.truncate(64 * 1024 * 1024)
    selection = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}}
    reply = raw.call(
        "textDocument/codeAction",
        {"textDocument": {"uri": target.as_uri()}, "range": selection, "context": {"diagnostics": []}},
        timeout=10,
    )
    assert reply == {"jsonrpc": "2.0", "id": reply["id"], "result": None}
    assert raw.serves()


def test_code_action_reads_a_regular_file_that_is_not_open(raw: RawServer) -> None:
    workspace = raw.workspace
    (workspace / "a.py").write_text("hello world\n")
    selection = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}}
    reply = raw.call(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": (workspace / "a.py").as_uri()},
            "range": selection,
            "context": {"diagnostics": []},
        },
    )
    (action,) = reply["result"]
    assert action["command"]["arguments"][0]["text"] == "hello"


def test_size_limits_answer_a_clear_message_and_keep_nothing(raw: RawServer) -> None:
    reply = raw.call("shiro/chat", {"text": "p" * (MAX_PROMPT_CHARS + 1)})
    assert reply["error"]["code"] == INVALID_PARAMS
    assert f"at most {MAX_PROMPT_CHARS} character" in reply["error"]["message"]
    assert raw.call("shiro/history", {})["result"]["prompts"] == []
    reply = raw.call("shiro/todos/update", {"todos": [{"content": "t" * 10_000_000, "status": "pending"}]})
    assert reply["error"]["code"] == INVALID_PARAMS and "at most" in reply["error"]["message"]
    reply = raw.call("shiro/todos/update", {"todos": [{"content": "t", "status": "pending"}] * 1000})
    assert reply["error"]["code"] == INVALID_PARAMS
    assert raw.call("shiro/todos", {})["result"]["todos"] == []


# --- framing: the server exits with a logged reason (the client restarts it) --------------------

BAD_FRAMES = {
    "not-a-number": b"Content-Length: abc\r\n\r\n{}",
    "lf-only": b"Content-Length: 2\n\n{}",
    "random-bytes": bytes(range(256)) * 4 + b"\r\n",
    "no-length": b"Content-Type: application/json\r\n\r\n{}",
    "too-long-header": b"X" * 5000 + b"\r\n",
    "wrong-length": b'Content-Length: 500\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"shiro/todos"}',
    "random-no-newline": b"\x00\x01garbage without a newline",
}


@pytest.mark.parametrize("name", list(BAD_FRAMES))
def test_a_framing_error_ends_the_server_with_a_logged_reason(home: Path, workspace: Path, name: str) -> None:
    server = RawServer(home, workspace, env={"SHIRO_FRAME_TIMEOUT_S": "2"})
    try:
        server.initialize()
        assert server.serves()
        server.write(BAD_FRAMES[name])
        assert server.wait_exit(timeout=30) == 1
        log = server.stderr()
        assert "malformed frame" in log and "Traceback" not in log
    finally:
        server.close()


def test_a_clean_end_of_input_exits_quietly(home: Path, workspace: Path) -> None:
    server = RawServer(home, workspace)
    try:
        server.initialize()
        assert server.process.stdin is not None
        server.process.stdin.close()
        assert server.wait_exit(timeout=30) == 0
        assert "malformed" not in server.stderr()
    finally:
        server.close()
