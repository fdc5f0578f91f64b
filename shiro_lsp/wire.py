"""The base of every wire model: camelCase on the wire, strict types, unknown keys ignored.

A leaf, so a value type that travels as it is (a changed-file row: ``checkpoints/rows.py``) is
declared once, below the layers that carry it, and ``server/protocol.py`` names it in the contract.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class Wire(BaseModel):
    """camelCase on the wire, strict types (a string is not a number), unknown keys ignored."""

    # defer_build: each model builds its validator on first use, not at server start.
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", strict=True, defer_build=True
    )
