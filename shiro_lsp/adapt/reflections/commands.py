"""A command that checks the work, and what a run of it says (``checks.py`` finds it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from shiro_lsp.adapt.reflections.replies import output_text
from shiro_lsp.messages import succeeded
from shiro_lsp.tools.shell import exit_status

Origin = Literal["setting", "agents", "detected", "words"]
Verdict = Literal["passed", "failed", "cannot run"]

NO_TEST_RUNNER = "No module named pytest"
NOT_FOUND = "127"


@dataclass(frozen=True)
class CheckCommand:
    shown: str
    """The command line Shiro runs."""
    key: str
    """What a shell command must contain to count as running it (the script, or the command)."""
    origin: Origin
    pytest: bool = False
    """Its result is pytest's: exit 1 or 2 is a failure, any other non-zero one means nothing ran."""
    shiro_may_run: bool = True
    remind: bool = True
    """A model shown tools is reminded to run it: the user or the configuration named it."""

    def verdict(self, result: dict[str, Any] | None) -> Verdict:
        """What a run's result part says: the work passed, failed, or the check could not run."""
        if result is None:
            return "cannot run"
        value = output_text(result)
        status = exit_status(value)
        if succeeded(result) and status == "0":
            return "passed"
        if status == NOT_FOUND:
            return "cannot run"
        if self.pytest:
            return "failed" if status in ("1", "2") and NO_TEST_RUNNER not in value else "cannot run"
        return "failed"


@dataclass(frozen=True)
class Checks:
    check: CheckCommand | None = None
    first: CheckCommand | None = None
