"""A typed command made into the prompt the model reads: arguments, inputs, workspace names, shell lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiro_lsp.commands import MissingInputs, expand, parse_invocation
from shiro_lsp.commands.files import parse_command

WS = Path("/work/orchard")


def run(body: str, args: str = "", inputs: dict[str, str] | None = None, **kw: object) -> str:
    command = parse_command("cmd", "project", ".claude/commands/cmd.md", body, **kw)  # type: ignore[arg-type]
    return expand(command, args, inputs, WS).text


def test_arguments_and_positions_are_put_in_place_once() -> None:
    assert run("Fix issue $1 in $2; all: $ARGUMENTS", '812 "src/a b.py"') == (
        'Fix issue 812 in src/a b.py; all: 812 "src/a b.py"'
    )
    # a value holding a placeholder is not expanded again
    assert run("Say $ARGUMENTS and $1", "$2 literally") == "Say $2 literally and $2"
    assert run("Only $3 here", "one two") == "Only  here"


def test_arguments_with_no_place_follow_the_body() -> None:
    assert run("Review the staged change.", "focus on errors") == (
        "Review the staged change.\n\nARGUMENTS: focus on errors"
    )
    assert run("Review the staged change.") == "Review the staged change."


def test_inputs_from_the_front_door_or_name_value_words() -> None:
    body = "Build ${input:kind:what to build} named ${input:label}. Extra: $ARGUMENTS"
    assert run(body, "kind=cart label='Big one' quickly", prompt_file=True) == (
        "Build cart named Big one. Extra: quickly"
    )
    assert (
        run(body, "now", {"kind": "list", "label": "L"}, prompt_file=True) == "Build list named L. Extra: now"
    )
    with pytest.raises(MissingInputs) as missing:
        run(body, "kind=cart", prompt_file=True)
    assert missing.value.message == "/cmd needs a value for label. Give it after the command: /cmd label=…"
    assert [v.name for v in missing.value.missing] == ["label"]


def test_workspace_names_and_shell_lines() -> None:
    text = run("In ${workspaceFolderBasename} (${workspaceFolder}) see !`git log -3` then ${selection}")
    assert text == "In orchard (/work/orchard) see `git log -3` then ${selection}"


def test_only_a_leading_slash_word_is_an_invocation() -> None:
    assert parse_invocation("/review src/app.py\nand more") is not None
    invocation = parse_invocation("  /fix-issue 42  ")
    assert invocation is not None and (invocation.name, invocation.args) == ("fix-issue", "42")
    assert parse_invocation("please /review") is None
    assert parse_invocation("/ spaced") is None
