"""Ids are RFC 9562 UUIDv7 strings that sort in the order they were made."""

from __future__ import annotations

import time
import uuid

from shiro_lsp.ids import new_id


def test_ids_are_uuid7_with_the_rfc_variant_and_the_current_time() -> None:
    before = time.time_ns() // 1_000_000
    value = uuid.UUID(new_id())
    after = time.time_ns() // 1_000_000
    assert value.version == 7
    assert value.variant == uuid.RFC_4122
    assert before <= value.int >> 80 <= after + 1


def test_ids_made_in_a_row_are_distinct_and_sorted() -> None:
    ids = [new_id() for _ in range(2000)]  # many within one millisecond
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)
