"""apply_patch, move_file, delete_file on a real folder: all or nothing, clear errors, jailed."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from shiro_lsp.errors import ToolError
from shiro_lsp.tools.edits import apply_patch_sync, delete_sync, move_sync, plan_patch


def test_a_patch_with_wrong_line_numbers_still_applies_by_its_context(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import os\n\ndef f():\n    return 1\n")
    patch = "--- a/a.py\n+++ b/a.py\n@@ -40,2 +40,2 @@\n def f():\n-    return 1\n+    return 2\n"
    assert "a.py (+1 -1)" in apply_patch_sync(tmp_path, {"patch": patch})
    assert (tmp_path / "a.py").read_text() == "import os\n\ndef f():\n    return 2\n"


def test_crlf_files_keep_their_line_endings(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    apply_patch_sync(tmp_path, {"patch": "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"})
    assert (tmp_path / "w.txt").read_bytes() == b"one\r\nTWO\r\n"


def test_a_failing_hunk_names_file_and_hunk_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    patch = (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n"
        "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n@@ -5 +5 @@\n-nope\n+x\n"
    )
    with pytest.raises(ToolError, match=r"hunk 2 of b\.txt \(@@ -5 \+5 @@\) does not apply"):
        apply_patch_sync(tmp_path, {"patch": patch})
    assert (tmp_path / "a.txt").read_text() == "a\n" and (tmp_path / "b.txt").read_text() == "b\n"


def test_new_and_deleted_files_and_escapes(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("bye\n")
    patch = "--- /dev/null\n+++ b/n/new.txt\n@@ -0,0 +1 @@\n+hi\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
    apply_patch_sync(tmp_path, {"patch": patch})
    assert (tmp_path / "n" / "new.txt").read_text() == "hi\n" and not (tmp_path / "old.txt").exists()
    with pytest.raises(ToolError, match="escapes workspace"):
        plan_patch(tmp_path, {"patch": "--- /dev/null\n+++ b/../out.txt\n@@ -0,0 +1 @@\n+x\n"})
    with pytest.raises(ToolError, match="no file headers"):
        plan_patch(tmp_path, {"patch": "just text"})


def test_move_keeps_mode_and_refuses_to_overwrite(tmp_path: Path) -> None:
    (tmp_path / "s.sh").write_text("#!/bin/sh\n")
    (tmp_path / "s.sh").chmod(0o755)
    (tmp_path / "taken.txt").write_text("x")
    with pytest.raises(ToolError, match="already exists"):
        move_sync(tmp_path, {"from": "s.sh", "to": "taken.txt"})
    move_sync(tmp_path, {"from": "s.sh", "to": "bin/s.sh"})
    assert stat.S_IMODE((tmp_path / "bin" / "s.sh").stat().st_mode) == 0o755
    assert delete_sync(tmp_path, {"path": "bin/s.sh"}).startswith("Deleted bin/s.sh")
    with pytest.raises(ToolError, match="No such file"):
        delete_sync(tmp_path, {"path": "bin/s.sh"})
