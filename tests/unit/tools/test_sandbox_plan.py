"""Where bash runs by default (bashSandbox auto): bubblewrap, else Landlock, else unsandboxed and said
once, with how to get a sandbox. The machine's facts are stood in for; what runs is tested end to end
(tests/e2e/test_security_small_models.py, test_sandbox_reach_lsp.py)."""

from __future__ import annotations

import pytest

from shiro_lsp.config import Settings
from shiro_lsp.tools import landlock, sandbox


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setattr(sandbox, "_said_unavailable", False)
    return monkeypatch


def test_the_default_is_auto_with_the_network_kept() -> None:
    settings = Settings()
    assert (settings.bash_sandbox, settings.bash_sandbox_network) == ("auto", True)


def test_auto_takes_bubblewrap_then_landlock(machine: pytest.MonkeyPatch) -> None:
    machine.setattr(sandbox, "probe", lambda: None)
    assert sandbox.plan("auto").kind == "bubblewrap"
    machine.setattr(sandbox, "probe", lambda: "bubblewrap (bwrap) is not installed")
    machine.setattr(landlock, "can_confine_writes", lambda: True)
    assert sandbox.plan("auto").kind == "landlock"
    assert sandbox.warning("auto", True).startswith("bash runs sandboxed (Landlock")
    assert sandbox.unavailable_notice("auto") is None


def test_no_sandbox_at_all_is_said_once_with_how_to_get_one(machine: pytest.MonkeyPatch) -> None:
    machine.setattr(sandbox, "probe", lambda: "bubblewrap (bwrap) is not installed")
    machine.setattr(landlock, "can_confine_writes", lambda: False)
    assert not sandbox.plan("auto").sandboxed
    notice = sandbox.unavailable_notice("auto")
    assert notice is not None and "unsandboxed" in notice and "Install bubblewrap" in notice
    assert sandbox.unavailable_notice("auto") is None  # once per server
    assert sandbox.unavailable_notice("off") is None  # the user chose it


def test_landlock_keeps_writes_in_the_given_folders() -> None:
    argv = sandbox.wrap_landlock(["bash", "-c", "true"], [], network=False)
    assert argv[-3:] == ["bash", "-c", "true"] and "--no-network" in argv
    assert all(folder in argv for folder in sandbox.TEMPORARY_FOLDERS)
