"""Hypothesis strategies for the wire contract, from docs/protocol.schema.json, plus hostile mutations.

Only the JSON Schema the generator emits is covered ($ref to $defs, type, enum, anyOf, properties,
required, items, min/max length and items, minimum/maximum). Generated strings stay short: the size
limits are tested on their own; here the point is shape.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "docs" / "protocol.schema.json"

JSON_SCALARS = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=12)
ANY_JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def load_schema() -> dict[str, Any]:
    value: dict[str, Any] = json.loads(SCHEMA_PATH.read_text())
    return value


def from_schema(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    if "$ref" in schema:
        return st.deferred(lambda: from_schema(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, depth + 1))
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema:
        return st.one_of([from_schema(s, defs, depth + 1) for s in schema["anyOf"]])
    kind = schema.get("type")
    if kind == "string":
        low = schema.get("minLength", 0)
        return st.text(min_size=low, max_size=max(low, min(schema.get("maxLength", 24), 24)))
    if kind == "integer":
        return st.integers(schema.get("minimum", -(2**31)), schema.get("maximum", 2**31))
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False, width=32)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = from_schema(schema.get("items", {}), defs, depth + 1) if depth < 6 else st.nothing()
        high = min(schema.get("maxItems", 3), 3)
        return st.lists(items, min_size=min(schema.get("minItems", 0), high), max_size=high)
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {k: from_schema(v, defs, depth + 1) for k, v in properties.items() if k in required},
            optional={k: from_schema(v, defs, depth + 1) for k, v in properties.items() if k not in required},
        )
    return ANY_JSON  # no constraint (an "Any" field)


LOOK_ALIKE = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "id": st.integers(1, 10**6) | st.text(max_size=4),
        "method": st.sampled_from(["shutdown", "exit", "shiro/session/delete", "initialize"]),
        "params": ANY_JSON,
    }
)


def to_bytes(message: Any) -> bytes:
    """JSON, with the ``__DEEP_n__`` / ``__HUGE_n__`` placeholders expanded (json cannot write them)."""
    text = json.dumps(message)
    text = re.sub(r'"__DEEP_(\d+)__"', lambda m: "[" * int(m.group(1)) + "]" * int(m.group(1)), text)
    text = re.sub(r'"__HUGE_(\d+)__"', lambda m: "9" * int(m.group(1)), text)
    return text.encode()


@st.composite
def mutated(draw: st.DrawFn, params: st.SearchStrategy[Any]) -> tuple[Any, bool]:
    """(params, omit): a valid value, or one with a hostile change; ``omit`` drops the params key."""
    value = draw(params)
    how = draw(
        st.sampled_from(
            ["valid", "valid", "omit", "replace", "drop-key", "retype", "extra", "look-alike", "deep", "huge"]
        )
    )
    if how == "omit":
        return None, True
    if how == "replace":
        return draw(ANY_JSON | st.text(max_size=8) | st.integers()), False
    if how == "deep":
        return {"x": f"__DEEP_{draw(st.integers(70, 3000))}__"}, False
    if how == "huge":
        return {"n": f"__HUGE_{draw(st.integers(1001, 5000))}__"}, False
    if isinstance(value, dict) and value:
        key = draw(st.sampled_from(sorted(value)))
        if how == "drop-key":
            value = {k: v for k, v in value.items() if k != key}
        elif how == "retype":
            value = {**value, key: draw(ANY_JSON)}
        elif how == "look-alike":
            value = {**value, key: draw(LOOK_ALIKE)}
    if how == "extra" and isinstance(value, dict):
        value = {**value, draw(st.text(max_size=8)): draw(ANY_JSON | LOOK_ALIKE)}
    return value, False
