"""The check command: what proves the work, and when Shiro runs it.

Where it comes from, first found wins (:func:`find_checks`):

1. the setting ``shiro.checkCommand`` (user settings, or a trusted workspace's: the extension reads
   it like ``shiro.pythonPath``);
2. ``AGENTS.md`` at the workspace root: a line that is only ``Check command: `...``` (or
   ``Test command:``; a list item's dash allowed), in a trusted workspace only: an untrusted
   repository's files never choose what runs;
3. the project's test runner, found from its files: ``python3 -m pytest -q`` when there are
   ``test_*.py``/``*_test.py`` files or a pytest configuration, ``npm test`` when ``package.json``
   has a test script (Shiro runs it, and never asks the model to); in a trusted workspace only,
   as those files are the repository's;
4. the user's words (``prose.named_command``, or a pytest file they name).

AGENTS.md and the test runner are read only for a profile where Shiro runs the check itself. A model
told of no tools cannot run it, so Shiro does after the model changed files, as a call of
its own (the same approvals, sandbox and checkpoint as any call; never counted as the model's
repeat), and a failure goes back to the model; a model shown tools is reminded to run a check that
the user or the configuration named. Separately, a command the user says to run, or says fails, is
run before the model's first step: its output tells what the message does not.
"""

from __future__ import annotations

import re
from pathlib import Path

from shiro_lsp.adapt.prose import NamedCommand, named_command, named_test_file
from shiro_lsp.adapt.reflections.base import Reflection, Reply, RunCheck, SendBack, TurnFacts
from shiro_lsp.adapt.reflections.commands import CheckCommand, Checks, Origin
from shiro_lsp.bounded import json_value
from shiro_lsp.errors import ToolError
from shiro_lsp.fs.ignore import Walker
from shiro_lsp.tools.files import open_text

RUN_FIRST_NOTICE = "Shiro runs `{command}` first, so that the model reads what it does."
RUN_CHECK_NOTICE = "Shiro runs `{command}`, {source}, to check the model's change."
RUN_NAMED = "You changed files but did not run `{command}`, {source}. Run it now to check."
TOLD_THE_USER: dict[Origin, str] = {
    "setting": "your configured check",
    "agents": "the check AGENTS.md names",
    "detected": "the project's tests",
    "words": "which you named",
}
TOLD_THE_MODEL: dict[Origin, str] = {
    "setting": "the check the user configured",
    "agents": "the check AGENTS.md names",
    "detected": "the project's tests",
    "words": "which the user named",
}
_AGENTS_LINE = re.compile(
    r"^[ \t]*(?:[-*][ \t]+)?(?:check|test) command:[ \t]*`(?P<command>[^`\n]+)`[ \t.]*$", re.I | re.M
)
_PYTEST_CONFIGS = {
    "pytest.ini": "",
    "conftest.py": "",
    "pyproject.toml": "[tool.pytest",
    "setup.cfg": "[tool:pytest]",
    "tox.ini": "[pytest]",
}
_TEST_NAME = re.compile(r"(?:^|/)(?:test_\w+|\w+_test)\.py$")
DETECT_DEPTH = 3
MAX_DETECT_ENTRIES = 2_000
MAX_CONFIG_CHARS = 100_000
NPM_DEFAULT_TEST = "no test specified"


def find_checks(root: Path | None, configured: str | None, words: str, *, trusted: bool) -> Checks:
    """The turn's check command and the command to run first; ``root`` None: no file is read;
    ``trusted`` False: neither AGENTS.md nor the files that give the test runner away count.
    Blocking (small reads, a bounded walk)."""
    named = named_command(words)
    first = _from_words(named) if named is not None and named.run_first and _may_run(named) else None
    repository = root if trusted else None
    check = (
        _configured(configured)
        or (_declared(repository) if repository is not None else None)
        or (_detected(repository) if repository is not None else None)
        or _check_from_words(named, words)
    )
    return Checks(check, first)


class RunFirst(Reflection):
    """A command the user says to run, or says fails, is run before the model's first step when the
    model cannot run it: its output tells what the message does not."""

    name, group = "run_first", "checks"

    def before_first_step(self, facts: TurnFacts) -> RunCheck | None:
        if facts.shows_tools or facts.first is None:
            return None
        return RunCheck(facts.first, RUN_FIRST_NOTICE.format(command=facts.first.shown))


class RunChecks(Reflection):
    """After the model changed files, Shiro runs the check it cannot run itself, and a failure goes
    back to the model."""

    name, group, after_calls, repeats = "checks", "checks", True, True

    def answer(self, reply: Reply, facts: TurnFacts) -> RunCheck | None:
        check = facts.check
        if facts.shows_tools or check is None or not check.shiro_may_run or not facts.check_due():
            return None
        return RunCheck(
            check, RUN_CHECK_NOTICE.format(command=check.shown, source=TOLD_THE_USER[check.origin])
        )


class CheckReminder(Reflection):
    """A model that changed files without running the check it was given is sent back to run it."""

    name, group = "check_reminder", "checks"

    def answer(self, reply: Reply, facts: TurnFacts) -> SendBack | None:
        check = facts.check
        if not facts.shows_tools or check is None or not check.remind or not facts.check_due():
            return None
        return SendBack(
            RUN_NAMED.format(command=check.shown, source=TOLD_THE_MODEL[check.origin]), "the check not run"
        )


def _may_run(named: NamedCommand) -> bool:
    """Shiro may run a command read from the user's words: it runs a named file or module, and the
    user tells to run it or says what it does now."""
    return named.runs_a_file and named.checks_the_work


def _from_words(named: NamedCommand) -> CheckCommand:
    return CheckCommand(named.shown, named.key, "words", shiro_may_run=_may_run(named))


def _check_from_words(named: NamedCommand | None, words: str) -> CheckCommand | None:
    """The command the words name when Shiro may run it, else a pytest file they ask for, else the
    named command (a model shown tools is reminded of it)."""
    if named is not None and _may_run(named):
        return _from_words(named)
    test_file = named_test_file(words)
    if test_file is not None:
        return CheckCommand(
            f"python3 -m pytest -q {test_file}", test_file, "words", pytest=True, remind=False
        )
    return _from_words(named) if named is not None else None


def _configured(command: str | None) -> CheckCommand | None:
    command = (command or "").strip()
    return CheckCommand(command, command, "setting") if command else None


def _declared(root: Path) -> CheckCommand | None:
    """A check command AGENTS.md declares: a line ``Check command: `...``` (or ``Test command:``)."""
    match = _AGENTS_LINE.search(_read(root, "AGENTS.md"))
    command = match.group("command").strip() if match else ""
    return CheckCommand(command, command, "agents") if command else None


def _detected(root: Path) -> CheckCommand | None:
    """The project's test runner, found from its files."""
    if _uses_pytest(root):
        return CheckCommand("python3 -m pytest -q", "pytest", "detected", pytest=True, remind=False)
    if _npm_test(root):
        return CheckCommand("npm test", "npm test", "detected", remind=False)
    return None


def _uses_pytest(root: Path) -> bool:
    for name, marker in _PYTEST_CONFIGS.items():
        text = _read(root, name) if (root / name).is_file() else None
        if text is not None and marker in text:
            return True
    for seen, entry in enumerate(Walker(root).walk(root, max_depth=DETECT_DEPTH)):
        if seen >= MAX_DETECT_ENTRIES:
            return False
        if not entry.is_dir and _TEST_NAME.search(entry.rel):
            return True
    return False


def _npm_test(root: Path) -> bool:
    package = json_value(_read(root, "package.json") or "{}")  # bounded: a repository's file
    scripts = package.get("scripts") if isinstance(package, dict) else None
    test = scripts.get("test") if isinstance(scripts, dict) else None
    return isinstance(test, str) and bool(test.strip()) and NPM_DEFAULT_TEST not in test


def _read(root: Path, name: str) -> str:
    """A file at the workspace root through the confined reader ('' when there is none)."""
    try:
        with open_text(root, name) as handle:
            return handle.read(MAX_CONFIG_CHARS)
    except (ToolError, OSError, ValueError):
        return ""
