"""Replies whose files change nothing (adapt/reflections/unchanged.py)."""

from __future__ import annotations

from pathlib import Path

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
