"""What each harness's run gets of the caller's environment (eval/harnesses.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval import harnesses


def test_shiros_runs_keep_only_the_ablation_knobs_of_the_callers_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHIRO_ADAPT_OFF", "loop_cut,lint")
    monkeypatch.setenv("SHIRO_MODEL_PROFILE", "full")
    monkeypatch.setenv("SHIRO_CONTEXT_WINDOW", "4096")
    shiro = harnesses.invocation("shiro", "p", tmp_path, tmp_path / "home", "http://127.0.0.1:9/v1", "m")
    assert shiro.env["SHIRO_ADAPT_OFF"] == "loop_cut,lint" and shiro.env["SHIRO_MODEL_PROFILE"] == "full"
    assert "SHIRO_CONTEXT_WINDOW" not in shiro.env
    aider = harnesses.invocation("aider", "p", tmp_path, tmp_path / "home", "http://127.0.0.1:9/v1", "m")
    assert not any(key.startswith("SHIRO_") for key in aider.env)
