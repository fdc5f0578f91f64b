"""Which profile a turn gets, and what it makes of the endpoint's call format (adapt/profiles.py)."""

from __future__ import annotations

from pathlib import Path

from shiro_lsp.adapt.formats.native import NativeCalls
from shiro_lsp.adapt.formats.text_calls import TextCalls
from shiro_lsp.adapt.formats.whole_file import WholeFile
from shiro_lsp.adapt.profiles import COMPACT, FULL, SMALL_CONTEXT_WINDOW, choose_profile

NO_KNOBS: dict[str, str] = {}


def test_the_setting_comes_first_and_the_window_is_only_the_default() -> None:
    assert choose_profile("full", 8_192, NO_KNOBS) == FULL
    assert choose_profile("compact", 200_000, NO_KNOBS) == COMPACT
    assert choose_profile("auto", SMALL_CONTEXT_WINDOW, NO_KNOBS) == COMPACT
    assert choose_profile("auto", SMALL_CONTEXT_WINDOW + 1, NO_KNOBS) == FULL
    assert choose_profile("auto", None, NO_KNOBS) == FULL  # nothing known: the full profile


def test_the_reply_format_follows_how_calls_travel() -> None:
    offered = ["read_file", "write_file", "bash"]
    assert isinstance(FULL.reply_format("native", offered), NativeCalls)
    assert isinstance(FULL.reply_format("auto", offered), TextCalls)
    compact = COMPACT.reply_format("text", offered)
    assert isinstance(compact, WholeFile) and compact.tools_in_prompt and compact.writes_out
    assert isinstance(COMPACT.reply_format("native", offered), NativeCalls)
    assert isinstance(COMPACT.reply_format("auto", ["read_file"]), TextCalls)  # nothing to write with
    refused = COMPACT.reply_format("auto", offered).when_tools_refused()
    assert isinstance(refused, WholeFile) and refused.name == "text"
    assert COMPACT.reply_format("auto", offered).after_native_call().name == "native"


def test_auto_imports_switch_off_by_name() -> None:
    offered = ["write_file"]
    on = COMPACT.reply_format("auto", offered)
    off = choose_profile("compact", None, {"SHIRO_ADAPT_OFF": "auto_imports"}).reply_format("auto", offered)
    assert isinstance(on, WholeFile) and isinstance(off, WholeFile)
    assert on._mend is not None and off._mend is None


def test_the_view_budget_is_a_share_of_the_window() -> None:
    budget = COMPACT.view_budget(16_384)
    assert budget is not None and (budget.files, budget.content_chars) == (40, 32_768)  # ~8,000 tokens
    assert FULL.view_budget(16_384) is None and COMPACT.view_budget(None) is None


def test_only_a_profile_where_shiro_runs_the_check_reads_the_workspace_for_it(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Check command: `make verify`\n")
    (tmp_path / "test_it.py").write_text("")
    compact = COMPACT.checks(tmp_path, None, "Tidy the code.", trusted=True).check
    assert compact is not None and compact.shown == "make verify" and COMPACT.reads_workspace
    untrusted = COMPACT.checks(tmp_path, None, "Tidy the code.", trusted=False).check
    assert untrusted is None  # untrusted: neither AGENTS.md nor the files that give the runner away
    assert (
        FULL.checks(tmp_path, None, "Tidy the code.", trusted=True).check is None and not FULL.reads_workspace
    )
    assert (
        FULL.checks(tmp_path, "tox -q", "Tidy the code.", trusted=True).check is not None
    )  # the user's setting


def test_the_limit_of_steps_that_change_one_file_is_the_profiles() -> None:
    assert COMPACT.writes_per_file() == 3 and FULL.writes_per_file() is None
    off = choose_profile("compact", None, {"SHIRO_ADAPT_OFF": "write_limit"})
    assert off.writes_per_file() is None
