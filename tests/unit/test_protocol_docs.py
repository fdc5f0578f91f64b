"""docs/protocol.md and docs/protocol.schema.json are generated from the wire types; stale docs fail."""

from __future__ import annotations

import json

from shiro_lsp.server import protocol_docs
from shiro_lsp.server.protocol import METHODS


def test_generated_protocol_docs_are_current() -> None:
    for path, text in protocol_docs.rendered().items():
        assert path.exists(), f"{path} is missing: run `make protocol`"
        assert path.read_text() == text, f"{path} is stale: run `make protocol`"


def test_schema_names_every_method_with_camel_case_fields() -> None:
    schema = json.loads(protocol_docs.SCHEMA.read_text())
    assert set(schema["methods"]) == {m.name for m in METHODS}
    session_info = schema["$defs"]["SessionInfo"]["properties"]
    assert {"messageCount", "createdAt", "costUsd"} <= set(session_info)


def test_every_client_request_of_the_contract_has_a_handler() -> None:
    from shiro_lsp.server.app import create_server, register_features

    server = create_server()
    register_features(server)  # what initialize does right behind its reply
    registered = set(server.protocol.fm.features)
    wanted = {m.name for m in METHODS if m.direction == "client->server"}
    assert wanted - registered == set()
