"""One loop for every reflection (adapt/reflections/base.py): one budget, each reason once, the
exclusive ones considered first-match only, and any of them switched off by name."""

from __future__ import annotations

from pathlib import Path

from shiro_lsp.adapt.formats.echoes import Shown
from shiro_lsp.adapt.profiles import COMPACT, FULL, choose_profile
from shiro_lsp.adapt.reflections.base import Reply, SendBack, TurnFacts

CALL_IN_PROSE = 'To look, call:\n```json\n{"name": "grep", "arguments": {"pattern": "x"}}\n```\n'
ANNOUNCES = "The cause is clear. I will now edit parse.py."
INVENTED = "<tool_response>\nall good\n</tool_response>"


def facts(tmp_path: Path, **more: object) -> TurnFacts:
    return TurnFacts("Tidy parse.py.", tmp_path, tools=frozenset({"grep", "read_file"}), **more)  # type: ignore[arg-type]


def test_every_reflection_spends_the_one_budget(tmp_path: Path) -> None:
    reflector = FULL.reflector(facts(tmp_path))
    sent = [reflector.after_answer(Reply(CALL_IN_PROSE)), reflector.after_answer(Reply(ANNOUNCES))]
    reflector.facts.used_tools = True
    sent.append(reflector.after_answer(Reply("")))  # no answer after tools: counted like the rest
    assert [a.why for a in sent if isinstance(a, SendBack)] == [
        "a call inside prose",
        "announced a step",
        "no answer",
    ]
    assert reflector.left == 0
    assert reflector.after_answer(Reply(INVENTED)) is None  # a fourth reason: the budget is spent
    assert not reflector.holds_back(INVENTED)  # so it is shown as the answer it is


def test_each_reason_is_sent_once(tmp_path: Path) -> None:
    reflector = FULL.reflector(facts(tmp_path))
    assert reflector.after_answer(Reply(ANNOUNCES)) is not None
    assert reflector.after_answer(Reply(ANNOUNCES)) is None
    assert reflector.left == FULL.max_reflections - 1


def test_a_reflection_switched_off_by_name_or_group_never_speaks(tmp_path: Path) -> None:
    off = choose_profile(
        "auto", 16_384, {"SHIRO_ADAPT_OFF": "announced_step, loop_cut,lint,restart_cut,copy_cut"}
    )
    assert off.name == "compact"
    names = {r.name for r in off.reflector(facts(tmp_path)).reflections}
    assert {"announced_step", "loop_cut", "lint"}.isdisjoint(names) and "no_answer" in names
    assert off.reflector(facts(tmp_path)).after_answer(Reply(ANNOUNCES)) is None
    assert off.reflector(facts(tmp_path)).watch(lambda: Shown(())) is None  # a looping reply streams on
    group = choose_profile("compact", None, {"SHIRO_ADAPT_OFF": "unfinished"})
    assert not any(r.group == "unfinished" for r in group.reflector(facts(tmp_path)).reflections)


def test_the_profiles_say_which_reflections_run(tmp_path: Path) -> None:
    full = {r.name for r in FULL.reflector(facts(tmp_path)).reflections}
    compact = {r.name for r in COMPACT.reflector(facts(tmp_path)).reflections}
    assert {"lint", "checks", "unchanged_listing", "idle_writes"} <= compact - full
    assert {"announced_step", "no_answer", "check_reminder", "loop_cut"} <= full & compact


def test_a_request_to_explain_is_answered_not_sent_back_as_a_change_left_undone(tmp_path: Path) -> None:
    (tmp_path / "parse.py").write_text("def tidy(text):\n    return text.strip()\n")
    shown = (
        "It strips the text:\n```python\ndef tidy(text):\n    # both ends go\n    return text.strip()\n```\n"
    )
    explain = TurnFacts("Explain what tidy in parse.py does.", tmp_path)
    assert COMPACT.reflector(explain).after_answer(Reply(shown)) is None
    change = TurnFacts("Make tidy in parse.py keep leading spaces.", tmp_path)
    sent = COMPACT.reflector(change).after_answer(Reply(shown))
    assert isinstance(sent, SendBack) and sent.why == "code in prose"
    ungated = choose_profile("compact", None, {"SHIRO_ADAPT_OFF": "asked_for_change"})
    sent = ungated.reflector(explain).after_answer(Reply(shown))
    assert isinstance(sent, SendBack) and sent.why == "code in prose"
