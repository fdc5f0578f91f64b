"""What counts as a named command and an announced step (agent/turn_guards.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiro_lsp.agent.turn_guards import (
    LOCAL_MODULE,
    NamedCommand,
    TurnGuard,
    announces_a_step,
    named_command,
    raised_at,
)


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("python3 calc.py should print 5. Fix it.", NamedCommand("python3 calc.py", "calc.py")),
        ("bash greet.sh Sam should print Hi, Sam.", NamedCommand("bash greet.sh", "greet.sh")),
        ("Run python3 -m pytest and fix the bug.", NamedCommand("python3 -m pytest", "python3 -m pytest")),
        ("npm test fails, fix it", NamedCommand("npm test", "npm test")),
        ("Fix it so that run test.sh passes", NamedCommand("test.sh", "test.sh")),
        ("Make ./check.sh pass", NamedCommand("./check.sh", "check.sh")),
        ("Run python3 report.py. It crashes.", NamedCommand("python3 report.py", "report.py")),
        ("Write it in python please", None),
        ("Add a --shout option to greet.py.", None),
        ("Make the tests pass.", None),
    ],
)
def test_the_command_a_prompt_names(prompt: str, expected: NamedCommand | None) -> None:
    named = named_command(prompt)
    assert (named and (named.shown, named.key)) == (expected and (expected.shown, expected.key))


@pytest.mark.parametrize(
    ("prompt", "may_run"),
    [
        ("python3 main.py fails with an ImportError.", True),
        ("Run python3 report.py. It crashes.", True),
        ("The tests fail. Run python3 -m pytest, find the bug.", True),
        ("bash greet.sh Sam should print Hi, Sam.", True),
        ("node run.js prints 9, but it should be 6.", True),
        ("Add a Usage section that shows how to run the tool: python3 wordcount.py FILE.", False),
        ("Add an npm script named test that runs node test.js.", False),
        ("npm test fails, fix it", False),
        ("Write a pytest test for clamp.", False),
    ],
)
def test_shiro_runs_only_a_command_that_runs_a_file_and_checks_the_work(prompt: str, may_run: bool) -> None:
    command = named_command(prompt)
    assert command is not None and command.shiro_may_run is may_run


@pytest.mark.parametrize(
    ("prompt", "first"),
    [
        ("Run python3 report.py. It crashes.", True),
        ("The tests fail. Run python3 -m pytest, find the bug.", True),
        ("Make ./check.sh pass", True),
        ("python3 main.py fails with an ImportError.", True),
        ("python3 run_stats.py prints the wrong average. Fix the bug.", False),
        ("node run.js prints 9, but it should be 6.", False),
        ("bash greet.sh Sam should print Hi, Sam.", False),
    ],
)
def test_a_command_is_run_first_when_its_output_tells_what_the_message_does_not(
    prompt: str, first: bool
) -> None:
    command = named_command(prompt)
    assert command is not None and command.run_first is first


@pytest.mark.parametrize(
    ("text", "announces"),
    [
        ("I will now edit calc.py.", True),
        ("The bug is in add(). Let me fix it:", True),
        ("Next, let's update greet.py to add the option.", True),
        ("I'll try again, but now with a different approach.", True),  # 1.5B, after an edit error
        ("Let me know if you need anything else.", False),
        ("I fixed the bug; it prints 5 now.", False),
        ("I will now edit it:\n```python\nx = 1\n```\nDone, it prints 5.", False),
    ],
)
def test_an_answer_that_ends_by_announcing_a_step(text: str, announces: bool) -> None:
    assert announces_a_step(text) is announces


@pytest.mark.parametrize(
    "answer",
    [
        # fix-import-error, Qwen2.5-Coder-1.5B's two answers, cut
        "The error occurs because the `names` module is not found in the workspace. You need to install the "
        "`names` module:\n```sh\npip install names\n```",
        "The error occurs because the `names` module is not found in the workspace. Create a directory `names`.",
    ],
)
def test_a_local_module_the_answer_would_install_is_sent_back_naming_its_file(
    tmp_path: Path, answer: str
) -> None:
    (tmp_path / "names.py").write_text("def title_case(text):\n    return text.title()\n")
    guard = TurnGuard("python3 main.py fails with an ImportError. Fix it.", tmp_path, can_run_commands=False)
    assert guard.after_answer({"role": "assistant", "content": answer}) == (
        LOCAL_MODULE.format(module="names", file="names.py"),
        "a local module taken for a package",
    )


def test_a_package_the_workspace_does_not_hold_may_be_installed(tmp_path: Path) -> None:
    guard = TurnGuard("import requests fails. Fix it.", tmp_path, can_run_commands=False)
    assert guard.after_answer({"role": "assistant", "content": "Run `pip install requests`."}) is None


def test_where_a_traceback_was_raised_is_its_last_frame_in_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "report.py").write_text("import csv\n\ndef total(rows):\n    return rows[0]['qty']\n")
    library = "/usr/lib/python3.11/csv.py"
    output = (
        "exit: 1\n\nstderr:\nTraceback (most recent call last):\n"
        f'  File "{tmp_path}/report.py", line 1, in <module>\n    import csv\n'
        '  File "report.py", line 4, in total\n'
        f'  File "{library}", line 110, in __next__\n'
        f'  File "{tmp_path}/report.py", line 99, in gone\n'  # the file changed since: no such line
        "KeyError: 'qty'\n"
    )
    assert raised_at(output, tmp_path) == ("report.py", 4, "return rows[0]['qty']")
    assert raised_at("exit: 1\n\nstderr:\nsh: 1: nope: not found\n", tmp_path) is None
    assert raised_at(f'  File "{library}", line 110, in __next__\n', tmp_path) is None
