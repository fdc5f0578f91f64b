"""Which test files a turn may still change once its check failed."""

from __future__ import annotations

from pathlib import Path

from shiro_lsp.agent.kept_tests import KeptTests

CHECK = "python3 -m pytest -q"


def kept(root: Path, *, on: bool = True) -> KeptTests:
    (root / "tests").mkdir()
    for name in ("tests/test_rota.py", "rota.py", "shift_test.py"):
        (root / name).write_text("")
    return KeptTests(root, on=on)


def test_nothing_is_kept_before_the_check_fails(tmp_path: Path) -> None:
    guard = kept(tmp_path)
    assert guard.refusal("write_file", {"path": "tests/test_rota.py"}) is None


def test_a_failed_check_keeps_the_tests_already_there_under_any_of_their_names(tmp_path: Path) -> None:
    guard = kept(tmp_path)
    guard.check_failed(CHECK)
    first = guard.refusal("edit_file", {"path": "./tests/test_rota.py"})
    assert first is not None and first[1] is not None and f"`{CHECK}` failed" in first[0]
    again = guard.refusal("write_file", {"path": str(tmp_path / "tests/test_rota.py")})
    assert again is not None and again[1] is None  # the user is told once
    assert guard.refusal("multi_edit", {"path": "shift_test.py"}) is not None
    assert guard.refusal("write_file", {"path": "rota.py"}) is None  # the code may change
    assert guard.refusal("read_file", {"path": "shift_test.py"}) is None


def test_tests_the_turn_changed_before_the_failure_or_created_stay_writable(tmp_path: Path) -> None:
    guard = kept(tmp_path)
    guard.wrote("write_file", {"path": "shift_test.py"})  # changed before the check failed
    guard.check_failed(CHECK)
    assert guard.refusal("write_file", {"path": "shift_test.py"}) is None
    assert guard.refusal("write_file", {"path": "tests/test_rota.py"}) is not None
    assert guard.refusal("write_file", {"path": "tests/test_leave.py"}) is None  # a new file
    guard.wrote("write_file", {"path": "tests/test_leave.py"})
    assert guard.refusal("write_file", {"path": "tests/test_leave.py"}) is None


def test_switched_off_it_keeps_nothing(tmp_path: Path) -> None:
    guard = kept(tmp_path, on=False)
    guard.check_failed(CHECK)
    assert guard.refusal("write_file", {"path": "tests/test_rota.py"}) is None
