"""Where the check command comes from (adapt/reflections/checks.py): configuration first, then
AGENTS.md, then the project's test runner, and only last the user's words."""

from __future__ import annotations

import json
from pathlib import Path

from shiro_lsp.adapt.reflections.checks import find_checks
from shiro_lsp.adapt.reflections.commands import CheckCommand

SAYS_IT_BREAKS = "Run python3 invoice.py, it errors out. Repair it."


def test_the_setting_comes_before_agents_md_the_test_runner_and_the_words(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("# Notes\n\n- Check command: `make verify`\n")
    (tmp_path / "test_invoice.py").write_text("def test_it():\n    pass\n")
    checks = find_checks(tmp_path, "tox -q", SAYS_IT_BREAKS, trusted=True)
    assert checks.check == CheckCommand("tox -q", "tox -q", "setting")
    assert checks.first is not None and checks.first.shown == "python3 invoice.py"  # still run first
    assert find_checks(tmp_path, "", SAYS_IT_BREAKS, trusted=True).check == CheckCommand(
        "make verify", "make verify", "agents"
    )
    (tmp_path / "AGENTS.md").write_text("Test command: `make verify` is not how it is written here.\n")
    detected = find_checks(tmp_path, None, SAYS_IT_BREAKS, trusted=True).check
    assert detected is not None and (detected.shown, detected.origin) == ("python3 -m pytest -q", "detected")
    assert not detected.remind  # Shiro runs a detected runner; a model is not told to


def test_agents_md_names_the_check_only_in_a_trusted_workspace(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("## Working here\n\n* Check command: `sh ci/full.sh`\n")
    words = "Tidy up the helpers module."
    declared = CheckCommand("sh ci/full.sh", "sh ci/full.sh", "agents")
    assert find_checks(tmp_path, None, words, trusted=True).check == declared
    assert find_checks(tmp_path, None, words, trusted=False).check is None  # a repository never chooses
    assert find_checks(tmp_path, "tox -q", words, trusted=False).check == CheckCommand(
        "tox -q", "tox -q", "setting"
    )


def test_the_test_runner_is_found_from_its_files(tmp_path: Path) -> None:
    assert find_checks(tmp_path, None, "Tidy the code.", trusted=True).check is None
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\naddopts = '-q'\n")
    assert find_checks(tmp_path, None, "Tidy the code.", trusted=True).check is not None
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert find_checks(tmp_path, None, "Tidy the code.", trusted=True).check is None
    (tmp_path / "pkg" / "tests").mkdir(parents=True)
    (tmp_path / "pkg" / "tests" / "parse_test.py").write_text("")
    assert find_checks(tmp_path, None, "Tidy the code.", trusted=True).check is not None


def test_the_test_runner_counts_only_in_a_trusted_workspace(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "node spec.js"}}))
    assert find_checks(tmp_path, None, "Tidy the code.", trusted=True).check is not None
    assert find_checks(tmp_path, None, "Tidy the code.", trusted=False).check is None
    assert find_checks(tmp_path, None, SAYS_IT_BREAKS, trusted=False).check == CheckCommand(
        "python3 invoice.py", "invoice.py", "words"
    )


def test_npm_test_counts_only_when_the_project_wrote_one(tmp_path: Path) -> None:
    package = {"scripts": {"test": 'echo "Error: no test specified" && exit 1'}}
    (tmp_path / "package.json").write_text(json.dumps(package))
    assert find_checks(tmp_path, None, "Tidy the code.", trusted=True).check is None
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "node spec.js"}}))
    assert find_checks(tmp_path, None, "Tidy the code.", trusted=True).check == CheckCommand(
        "npm test", "npm test", "detected", remind=False
    )


def test_a_package_json_nested_too_deep_is_no_test_script(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"scripts": ' + "[" * 50_000 + "]" * 50_000 + "}")
    assert find_checks(tmp_path, None, "Tidy the code.", trusted=True).check is None


def test_the_words_are_the_last_source(tmp_path: Path) -> None:
    check = find_checks(tmp_path, None, SAYS_IT_BREAKS, trusted=True).check
    assert check == CheckCommand("python3 invoice.py", "invoice.py", "words")
    asked_for = find_checks(tmp_path, None, "Add tests in test_ranges.py for limit().", trusted=True).check
    assert asked_for is not None and asked_for.shown == "python3 -m pytest -q test_ranges.py"


def test_what_a_run_says(tmp_path: Path) -> None:
    command = CheckCommand("make verify", "make verify", "setting")
    pytest = CheckCommand("python3 -m pytest -q", "pytest", "detected", pytest=True)

    def result(value: str, ok: bool = True) -> dict[str, object]:
        return {"type": "tool-result", "output": {"type": "text" if ok else "error-text", "value": value}}

    assert command.verdict(result("exit: 0\n\nstdout:\nok")) == "passed"
    assert command.verdict(result("exit: 2\n\nstderr:\nboom")) == "failed"
    assert command.verdict(result("exit: 127\n\nstderr:\nmake: not found")) == "cannot run"
    assert pytest.verdict(result("exit: 1\n\nstdout:\n1 failed")) == "failed"
    assert pytest.verdict(result("exit: 5\n\nstdout:\nno tests ran")) == "cannot run"
    assert pytest.verdict(result("exit: 1\n\nstderr:\nNo module named pytest")) == "cannot run"
    assert command.verdict(None) == "cannot run"
