"""Generate docs/protocol.md and docs/protocol.schema.json from the wire types.

`python -m shiro_lsp.server.protocol_docs --write` rewrites them; `--check` fails when stale.
"""

from __future__ import annotations

import argparse
import json
import sys
import types
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic.json_schema import models_json_schema
from pydantic_core import PydanticUndefined

from shiro_lsp.server import protocol as p
from shiro_lsp.server.jsonrpc.edge import MAX_DEPTH, MAX_NUMBER_CHARS
from shiro_lsp.server.protocol import EVENT_MODELS, METHODS
from shiro_lsp.wire import Wire

DOCS = Path(__file__).resolve().parents[2] / "docs"
MARKDOWN = DOCS / "protocol.md"
SCHEMA = DOCS / "protocol.schema.json"


def _models() -> list[type[Wire]]:
    seen: dict[str, type[Wire]] = {}
    for method in METHODS:
        for model in (method.params, method.result):
            if model is not None:
                seen.setdefault(model.__name__, model)
    for model in EVENT_MODELS:
        seen.setdefault(model.__name__, model)
    return list(seen.values())


def schema() -> dict[str, Any]:
    _, top = models_json_schema(
        [(m, "validation") for m in _models()], by_alias=True, ref_template="#/$defs/{model}"
    )
    methods = {
        m.name: {
            "kind": m.kind,
            "direction": m.direction,
            "description": m.doc,
            "params": {"$ref": f"#/$defs/{m.params.__name__}"},
            **({"result": {"$ref": f"#/$defs/{m.result.__name__}"}} if m.result else {}),
        }
        for m in METHODS
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Shiro wire protocol v1",
        "methods": methods,
        "$defs": top.get("$defs", {}),
    }


def type_name(annotation: Any) -> str:
    """A field's type as a reader writes it: ``str | null``, ``list[TodoItem]``, ``"once" | "deny"``."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return type_name(args[0])
    if origin in (Union, types.UnionType):
        return " | ".join(type_name(arg) for arg in args)
    if origin is Literal:
        return " | ".join(json.dumps(arg) for arg in args)
    if origin is not None:
        return f"{getattr(origin, '__name__', str(origin))}[{', '.join(type_name(arg) for arg in args)}]"
    if annotation is type(None):
        return "null"
    if annotation is Any:
        return "any"
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _default(value: Any) -> str:
    try:
        return json.dumps(value)
    except TypeError:
        return repr(value)


def _fields(model: type[Wire]) -> str:
    rows = []
    for name, field in model.model_fields.items():
        alias = field.serialization_alias or field.alias or name
        annotation = type_name(field.annotation).replace("|", "\\|")
        if field.is_required():
            required = "yes"
        elif field.default is PydanticUndefined:
            required = "no"
        else:
            required = f"no (default `{_default(field.default)}`)"
        rows.append(f"| `{alias}` | `{annotation}` | {required} | {field.description or ''} |")
    if not rows:
        return "`{}`\n"
    return "| field | type | required | notes |\n|---|---|---|---|\n" + "\n".join(rows) + "\n"


def markdown() -> str:
    out = [
        "# Shiro wire protocol v1",
        "",
        "Generated from `shiro_lsp/server/protocol.py` by `make protocol`; do not edit by hand.",
        "The JSON Schema of every shape is `docs/protocol.schema.json`.",
        "Bad params get JSON-RPC error -32602 with a message a person can act on.",
        "",
        "Every request is answered (shiro_lsp/server/rpc.py): a body that is not JSON is -32700; a",
        "message that is not a JSON-RPC 2.0 object, an id that is not an integer or string, or a method",
        "that is not a string is -32600 (id null when the id is unusable); params that are not an",
        f"object/array, nested more than {MAX_DEPTH} levels, holding a number longer than {MAX_NUMBER_CHARS}",
        "characters, or not matching the method's type are -32602. A frame that is not",
        "`Content-Length: N\\r\\n…\\r\\n` ends the server with a logged reason (exit 1; the client",
        "restarts it). Errors a person reads: -32000 Shiro, -32001 not found, -32002 conflict (also: a",
        "session live in another window), -32003 read-only workspace, -32004 too large, -32005 model,",
        "-32006 state unavailable (full disk, read-only or missing state folder, permissions;",
        "`data.errno` names it). -32603 means a bug; its details are only in the server log.",
        f"Size limits: chat text {p.MAX_PROMPT_CHARS:,} characters, a todo {p.MAX_TODO_CHARS:,} and at most",
        f"{p.MAX_TODOS} todos, a memory text {p.MAX_MEMORY_CHARS:,} (stored cut to 400), a query",
        f"{p.MAX_QUERY_CHARS:,}, a note {p.MAX_NOTE_CHARS:,}, an id {p.MAX_ID_CHARS}.",
        "",
        "| method | kind | direction | params | result |",
        "|---|---|---|---|---|",
    ]
    for m in METHODS:
        result = f"`{m.result.__name__}`" if m.result else ""
        out.append(f"| `{m.name}` | {m.kind} | {m.direction} | `{m.params.__name__}` | {result} |")
    out.append("")
    for m in METHODS:
        out += [f"## `{m.name}`", "", m.doc, "", f"Params `{m.params.__name__}`:", "", _fields(m.params)]
        if m.result:
            out += [f"Result `{m.result.__name__}`:", "", _fields(m.result)]
    out += [
        "## Events",
        "",
        "The `event` of a `shiro/event` notification (and one line of `shiro-lsp run --json`):",
        "an object whose `type` says which of these it is. Defined in `shiro_lsp/agent/events.py`.",
        "",
    ]
    for model in EVENT_MODELS:
        tag = type_name(model.model_fields["type"].annotation)
        out += [f"### {tag} (`{model.__name__}`)", "", (model.__doc__ or "").strip(), "", _fields(model)]
    return "\n".join(out)


def rendered() -> dict[Path, str]:
    return {MARKDOWN: markdown(), SCHEMA: json.dumps(schema(), indent=2, sort_keys=True) + "\n"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    stale = [path for path, text in rendered().items() if not path.exists() or path.read_text() != text]
    if args.write:
        for path, text in rendered().items():
            path.write_text(text)
        return 0
    for path in stale:
        print(f"{path} is stale: run `make protocol`", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
