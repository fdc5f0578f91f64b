"""Replies whose files change nothing (adapt/reflections/unchanged.py)."""

from __future__ import annotations

from pathlib import Path

from shiro_lsp.adapt.profiles import COMPACT, FULL
from shiro_lsp.adapt.reflections.base import Reply, SendBack, TurnFacts
from shiro_lsp.adapt.reflections.unchanged import raised_at


def test_where_a_traceback_was_raised_is_its_last_frame_in_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "ledger.py").write_text("import json\n\ndef balance(rows):\n    return rows[0]['amount']\n")
    library = "/usr/lib/python3.11/json/decoder.py"
    output = (
        "exit: 1\n\nstderr:\nTraceback (most recent call last):\n"
        f'  File "{tmp_path}/ledger.py", line 1, in <module>\n    import json\n'
        '  File "ledger.py", line 4, in balance\n'
        f'  File "{library}", line 110, in decode\n'
        f'  File "{tmp_path}/ledger.py", line 99, in gone\n'  # the file changed since: no such line
        "KeyError: 'amount'\n"
    )
    assert raised_at(output, tmp_path) == ("ledger.py", 4, "return rows[0]['amount']")
    assert raised_at("exit: 1\n\nstderr:\nsh: 1: nope: not found\n", tmp_path) is None
    assert raised_at(f'  File "{library}", line 110, in decode\n', tmp_path) is None


PLAN_ONLY = "parse.py must change: tidy should strip only the right-hand end."


def test_a_change_asked_for_and_neither_made_nor_tried_is_sent_back_once(tmp_path: Path) -> None:
    asked = TurnFacts("Make tidy in parse.py keep leading spaces.", tmp_path, writes_out=True)
    reflector = COMPACT.reflector(asked)
    sent = reflector.after_answer(Reply(PLAN_ONLY))
    assert isinstance(sent, SendBack) and sent.why == "no file changed"
    assert "write it out now" in sent.instruction and "give your final answer" in sent.instruction
    (tmp_path / "parse.py").write_text("def tidy(text):\n    return text.strip()\n")
    sent = COMPACT.reflector(asked).after_answer(Reply(PLAN_ONLY))
    assert isinstance(sent, SendBack) and "Write out parse.py now" in sent.instruction  # the file it named
    assert reflector.after_answer(Reply(PLAN_ONLY)) is None  # once a turn
    assert "nothing_written" not in {r.name for r in FULL.reflector(asked).reflections}


def test_no_reminder_after_a_tool_call_for_a_question_or_after_another_reminder(
    tmp_path: Path,
) -> None:
    tried = TurnFacts("Make tidy in parse.py keep leading spaces.", tmp_path, used_tools=True)
    assert COMPACT.reflector(tried).after_answer(Reply(PLAN_ONLY)) is None  # a read, a refused write
    question = TurnFacts("Could tidy in parse.py keep leading spaces?", tmp_path)
    assert COMPACT.reflector(question).after_answer(Reply(PLAN_ONLY)) is None
    asked = TurnFacts("Make tidy in parse.py keep leading spaces.", tmp_path)
    asks_back = "Which spaces count as leading: tabs too?"
    assert COMPACT.reflector(asked).after_answer(Reply(asks_back)) is None  # the user is asked
    reflector = COMPACT.reflector(TurnFacts("Make tidy in parse.py keep leading spaces.", tmp_path))
    announced = reflector.after_answer(Reply("The cause is clear. I will now edit parse.py."))
    assert isinstance(announced, SendBack) and announced.why == "announced a step"
    assert reflector.after_answer(Reply(PLAN_ONLY)) is None  # the last resort: something was sent
