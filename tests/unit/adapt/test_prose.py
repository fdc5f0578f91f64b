"""The rules that read the user's prose (adapt/prose.py): what counts as a named command, when Shiro
may run it, when it runs first; attached documents are never the user's words."""

from __future__ import annotations

import pytest

from shiro_lsp.adapt.prose import (
    asks_for_change,
    is_question,
    named_command,
    named_test_file,
    references,
    user_words,
)
from shiro_lsp.agent.attachments import context_block


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("python3 tally.py should print 12. Repair it.", ("python3 tally.py", "tally.py")),
        ("bash hello_user.sh Kim should say Hello Kim.", ("bash hello_user.sh", "hello_user.sh")),
        ("Please run python3 -m pytest and repair what breaks.", ("python3 -m pytest", "python3 -m pytest")),
        ("npm test fails, repair it", ("npm test", "npm test")),
        ("Repair things so that run verify.sh passes", ("verify.sh", "verify.sh")),
        ("Make ./lint.sh pass", ("./lint.sh", "lint.sh")),
        ("Run python3 invoice.py. It errors out.", ("python3 invoice.py", "invoice.py")),
        ("Write it in python please", None),
        ("Give banner.py a --loud flag.", None),
        ("Make the tests pass.", None),
    ],
)
def test_the_command_the_words_name(words: str, expected: tuple[str, str] | None) -> None:
    named = named_command(words)
    assert (named and (named.shown, named.key)) == expected


@pytest.mark.parametrize(
    ("words", "runs_it"),
    [
        ("python3 app.py fails with a NameError.", True),
        ("Run python3 invoice.py. It errors out.", True),
        ("Some tests are red. Run python3 -m pytest and repair the code.", True),
        ("bash hello_user.sh Kim should say Hello Kim.", True),
        ("node main.js prints 3, but 4 is right.", True),
        ("Document in the README how to start it: python3 server.py --port 80.", False),
        ("Put a lint entry in the scripts of package.json; it calls node lint.js.", False),
        ("npm test fails, repair it", False),
        ("Write a pytest test for limit().", False),
    ],
)
def test_a_command_runs_a_file_and_the_words_say_it_checks_the_work(words: str, runs_it: bool) -> None:
    named = named_command(words)
    assert named is not None and (named.runs_a_file and named.checks_the_work) is runs_it


@pytest.mark.parametrize(
    ("words", "first"),
    [
        ("Run python3 invoice.py. It errors out.", True),
        ("Some tests are red. Run python3 -m pytest and repair the code.", True),
        ("Make ./lint.sh pass", True),
        ("python3 app.py fails with a NameError.", True),
        ("python3 mean.py prints the wrong mean. Repair it.", False),
        ("node main.js prints 3, but 4 is right.", False),
        ("bash hello_user.sh Kim should say Hello Kim.", False),
    ],
)
def test_a_command_runs_first_when_its_output_tells_what_the_words_do_not(words: str, first: bool) -> None:
    named = named_command(words)
    assert named is not None and named.run_first is first


@pytest.mark.parametrize(
    ("words", "shown"),
    [
        ("node ledger.js crashes. Could you look into it?", "node ledger.js"),
        ("Our bash tools/rotate.sh errors. Sort it out.", "bash tools/rotate.sh"),
        ("npm test fails. Nothing else changed.", "npm test"),
    ],
)
def test_the_prose_after_a_command_is_never_part_of_it(words: str, shown: str) -> None:
    named = named_command(words)
    assert named is not None and named.shown == shown and named.run_first


def test_the_other_rules_read_only_what_the_user_typed() -> None:
    attached = context_block("notes.md", "python3 crash.py fails\nsee #812\ntests/test_crash.py\nwhy?")
    words = user_words(f"Tidy up the notes.\n\n{attached}")
    assert words.strip() == "Tidy up the notes."
    assert named_command(words) is None and named_test_file(words) is None
    assert references(words) == [] and not is_question(words)
    assert named_test_file("Add tests/unit/limits_test.py for it") == "tests/unit/limits_test.py"
    assert references("See #812 and #812, not #7 or issue#99") == ["#812"]


@pytest.mark.parametrize(
    ("words", "asks"),
    [
        ("Explain how the cache in store.py expires its entries.", False),
        ("Walk me through the retry loop in fetch.js", False),
        ("How does session.py pick its lock file?", False),
        ("Can you repair the slug function in text.py?", True),
        ("Explain the slip in store.py, then fix it.", True),
        ("Give banner.py a --loud flag.", True),
        ("Start a script wave.py that says hi there.", True),
    ],
)
def test_a_question_or_a_request_to_explain_that_names_no_change_asks_for_none(
    words: str, asks: bool
) -> None:
    assert asks_for_change(words) is asks
