"""Where bash runs by default (bashSandbox auto): bubblewrap, else Landlock, else unsandboxed and said
once, with how to get a sandbox. The machine's facts are stood in for; what runs is tested end to end
(tests/e2e/test_security_small_models.py, test_sandbox_reach_lsp.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiro_lsp.config import Settings
from shiro_lsp.errors import ToolError
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


def test_landlock_keeps_writes_in_the_given_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    # no state root of this process's earlier tests under /tmp (the registry is process-wide)
    monkeypatch.setattr(sandbox, "private_roots", lambda: ())
    argv = sandbox.wrap_landlock(["bash", "-c", "true"], [], network=False)
    assert argv[-3:] == ["bash", "-c", "true"] and "--no-network" in argv
    assert all(folder in argv for folder in sandbox.TEMPORARY_FOLDERS)


def test_landlock_grants_a_folder_holding_the_state_root_entry_by_entry(tmp_path: Path) -> None:
    home = tmp_path / "home"
    state = home / ".local" / "shiro"
    for folder in (state / "checkpoints", home / "project", home / ".local" / "bin"):
        folder.mkdir(parents=True)
    (home / "notes.txt").write_text("")
    (home / "outside").symlink_to("/")
    other = tmp_path / "elsewhere"
    other.mkdir()
    writable = sandbox.landlock_writable([str(home), str(other), str(state / "checkpoints")], [str(state)])
    assert writable == [
        str(home / ".local" / "bin"),
        str(home / "notes.txt"),
        str(home / "project"),
        str(other),
    ]  # never the state root, its folders, the folders holding it, or a link (a rule follows it)
    assert sandbox.landlock_writable([str(other)], [str(state)]) == [str(other)]


def test_landlock_refuses_a_folder_around_the_state_root_with_too_many_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "MAX_SPLIT_ENTRIES", 3)
    for name in ("a", "b", "c", ".shiro"):
        (tmp_path / name).mkdir()
    refused = sandbox.landlock_writable([str(tmp_path)], [str(tmp_path / ".shiro")])
    assert refused == sandbox.Refused(str(tmp_path), str(tmp_path / ".shiro"))
    with pytest.raises(ToolError, match="bash was not run: Shiro's state folder"):
        monkeypatch.setattr(sandbox, "private_roots", lambda: (tmp_path / ".shiro",))
        sandbox.wrap_landlock(["true"], [tmp_path], network=True)
