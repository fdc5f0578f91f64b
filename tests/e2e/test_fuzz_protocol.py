"""Property: every request built from the wire schema, valid or mutated, is answered in bounded time
with a result or a clear error (-32602/-32600 or a ShiroError), never an internal error, and the
server still serves afterwards. One server for the whole run; a few hundred requests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from raw_lsp import RawServer, frame
from schema_strategies import from_schema, load_schema, mutated, to_bytes

SCHEMA = load_schema()
# Methods that call a model or probe the network are left out: without a model they only wait.
SKIP = {"shiro/chat", "shiro/memory/compact", "shiro/session/compact", "shiro/models/detect", "shiro/models"}
METHODS = sorted(
    name
    for name, method in SCHEMA["methods"].items()
    if method["direction"] == "client->server" and method["kind"] == "request" and name not in SKIP
)
FUZZ_EXAMPLES = 250
ANSWER_WITHIN_S = 15.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    root = tmp_path_factory.mktemp("fuzz")
    (root / "workspace").mkdir()
    raw = RawServer(root / "state", root / "workspace")
    assert "result" in raw.initialize()
    yield raw
    assert raw.serves()
    log = raw.stderr()
    assert "Traceback" not in log, log[-2000:]
    assert len(log) < FUZZ_EXAMPLES * 1000  # one line per bad request, not a traceback
    raw.close()


def request_strategy() -> st.SearchStrategy[tuple[str, Any, bool]]:
    def for_method(name: str) -> st.SearchStrategy[tuple[str, Any, bool]]:
        params = from_schema(SCHEMA["methods"][name]["params"], SCHEMA["$defs"])
        return mutated(params).map(lambda pair: (name, pair[0], pair[1]))

    return st.sampled_from(METHODS).flatmap(for_method)


def check_answer(reply: dict[str, Any], method: str, params: Any) -> None:
    where = f"{method} {json.dumps(params)[:300]}"
    if "result" in reply:
        return
    error = reply["error"]
    code = error["code"]
    assert code in (-32602, -32600) or -32099 <= code <= -32000, f"{where}: {error}"
    assert "Traceback" not in json.dumps(error), where
    assert len(error["message"]) <= 700, where


@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(request=request_strategy())
def test_every_request_from_the_schema_is_answered_and_the_server_keeps_serving(
    server: RawServer, request: tuple[str, Any, bool]
) -> None:
    method, params, omit = request
    server.next_id += 1
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": server.next_id, "method": method}
    if not omit:
        message["params"] = params
    server.write(frame(to_bytes(message)))
    reply = server.reply(server.next_id, timeout=ANSWER_WITHIN_S)
    check_answer(reply, method, params)
    shown = [n for n in server.notifications if n["method"] == "window/showMessage"]
    assert not [n for n in shown if "Error in server" in json.dumps(n)]


def test_the_fuzzed_methods_cover_the_contract() -> None:
    assert len(METHODS) >= 25 and "shiro/todos/update" in METHODS and "shiro/session/resume" in METHODS
    assert Path(SCHEMA["methods"]["shiro/todos/update"]["params"]["$ref"]).name == "TodosUpdateParams"
