"""``atomic.locked`` (an flock on a sibling file) and ``ArrayEncoder`` (re-encode only what changed)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock
from hypothesis import given, settings
from hypothesis import strategies as st

from shiro_lsp.errors import StateUnavailable
from shiro_lsp.fs import locks
from shiro_lsp.state.atomic import ArrayEncoder, locked, pretty_json
from shiro_lsp.state.jsonstore import JsonArrayFile

HOLD = """
import sys, time
from pathlib import Path
from shiro_lsp.state.atomic import locked
with locked(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_another_process_holding_the_lock_makes_a_writer_wait_then_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "memory" / "store.json"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(StateUnavailable) as raised, locked(path, timeout=0.3):
            pass
        assert str(path) in raised.value.message and "Nothing was changed" in raised.value.message
        assert raised.value.data == {"errno": "EBUSY", "path": str(path)}
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)
    with locked(path, timeout=5):  # given back when the holder let go
        pass


def test_a_thread_of_the_same_process_waits_for_the_holder(tmp_path: Path) -> None:
    path = tmp_path / "store.json"
    order: list[str] = []
    entered = threading.Event()

    def second() -> None:
        entered.set()
        with locked(path):
            order.append("second")

    with locked(path):
        thread = threading.Thread(target=second)
        thread.start()
        entered.wait(5)
        time.sleep(0.1)
        order.append("first")
    thread.join(10)
    assert order == ["first", "second"]


def test_filelocks_lock_excludes_it_so_an_older_shiro_on_the_same_files_waits(tmp_path: Path) -> None:
    path = tmp_path / "store.json"
    with FileLock(f"{path}.lock"), pytest.raises(StateUnavailable), locked(path, timeout=0.2):
        pass
    with locked(path, timeout=0.2), pytest.raises(TimeoutError), FileLock(f"{path}.lock", timeout=0.2):
        pass


def test_without_fcntl_filelock_does_it_with_the_same_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "new" / "store.json"
    with locked(path):
        monkeypatch.setattr(locks, "fcntl", None)
        with pytest.raises(StateUnavailable, match="stayed locked"), locked(path, timeout=0.2):
            pass
    with locked(path):
        pass


json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(json_values, max_size=6), min_size=1, max_size=4))
def test_an_array_encoded_again_and_again_is_byte_for_byte_pretty_json(saves: list[list[Any]]) -> None:
    encoder = ArrayEncoder()
    for items in saves:
        assert encoder.encode(items) == pretty_json(items)


def test_reuse_never_confuses_equal_values_of_other_types() -> None:
    encoder = ArrayEncoder()
    items: list[Any] = [{"hits": 1}, {"hits": 1.0}, {"hits": True}, "a\nb\u2028", {"t": 'ü "q"'}, [], {}]
    assert encoder.encode(items) == pretty_json(items)
    shuffled = [items[2], items[0], {"hits": 2}, items[1], items[3]]
    assert encoder.encode(shuffled) == pretty_json(shuffled)
    assert encoder.encode([]) == pretty_json([]) == "[]\n"


def test_a_store_save_writes_what_write_json_atomic_would_and_its_next_read_is_not_a_reparse(
    tmp_path: Path,
) -> None:
    store = JsonArrayFile(tmp_path / "s.json", label="test", is_valid=lambda item: isinstance(item, dict))
    items = [{"id": str(i), "text": f"note {i} ü", "hits": i} for i in range(5)]
    with store.locked_items():
        store.save(items)
    with store.locked_items() as again:
        again[2]["hits"] = 40
        store.save(again[1:])
    expected = items[1:]
    expected[1] = {**expected[1], "hits": 40}
    assert (tmp_path / "s.json").read_text(encoding="utf-8") == pretty_json(expected)
    assert json.loads((tmp_path / "s.json").read_text(encoding="utf-8")) == expected
    assert store.view() is store.view() and store.view() == expected  # the cache matches the file
