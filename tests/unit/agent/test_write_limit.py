"""How many steps of a turn may change one file."""

from __future__ import annotations

from pathlib import Path

from shiro_lsp.agent.write_limit import WriteLimit


def test_one_file_under_any_of_its_names_is_counted_once_per_step(tmp_path: Path) -> None:
    (tmp_path / "dock.py").write_text("")
    limit = WriteLimit(tmp_path, 2)
    for name in ("dock.py", "./dock.py"):  # one step, two writes: one step counted
        limit.next_step()
        assert limit.refusal("edit_file", {"path": name}) is None
        limit.wrote("edit_file", {"path": name})
        limit.wrote("write_file", {"path": str(tmp_path / "dock.py")})
    limit.next_step()
    refused = limit.refusal("multi_edit", {"path": "dock.py"})
    assert refused is not None and "already changed in 2 steps" in refused[0] and refused[1] is not None
    again = limit.refusal("write_file", {"path": "./dock.py"})
    assert again is not None and again[1] is None  # the user is told once
    assert limit.refusal("write_file", {"path": "other.py"}) is None
    assert limit.refusal("read_file", {"path": "dock.py"}) is None


def test_no_limit_refuses_nothing(tmp_path: Path) -> None:
    limit = WriteLimit(tmp_path, None)
    for _ in range(10):
        limit.next_step()
        limit.wrote("write_file", {"path": "a.py"})
    assert limit.refusal("write_file", {"path": "a.py"}) is None
