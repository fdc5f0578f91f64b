from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from shiro_lsp.state.atomic import write_text_atomic
from shiro_lsp.state.paths import project_key, state_root


def test_project_key_is_sha256_prefix_of_the_path_string() -> None:
    assert project_key("/repo/a") == hashlib.sha256(b"/repo/a").hexdigest()[:16]


def test_state_root_option_then_shiro_home_then_home(tmp_path: Path) -> None:
    assert state_root(str(tmp_path)) == tmp_path
    assert state_root(None, {"SHIRO_HOME": "/x"}) == Path("/x/.shiro-neko")
    assert state_root(None, {}) == Path.home() / ".shiro-neko"


def test_atomic_write_leaves_the_old_file_when_the_write_fails(tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    write_text_atomic(target, "old")

    class Boom(str):
        def encode(self, *args: object, **kwargs: object) -> bytes:
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_text_atomic(target, Boom("new"))
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]
