"""Hooks: the settings files (what is skipped and why), trust pinned to each entry, what a run means."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from shiro_lsp.errors import NotFound
from shiro_lsp.hooks import HookSettings, TurnHooks
from shiro_lsp.hooks.config import Hook, load_hooks
from shiro_lsp.hooks.decide import outcome_of
from shiro_lsp.hooks.run import OUTPUT_CAP, HookRun, run_hook


def write(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value))


def group(command: str, matcher: str | None = None, **entry: object) -> list[dict[str, object]]:
    one: dict[str, object] = {"hooks": [{"type": "command", "command": command, **entry}]}
    if matcher is not None:
        one["matcher"] = matcher
    return [one]


def settings_of(tmp_path: Path, trusted: bool = True) -> HookSettings:
    return HookSettings(
        tmp_path / "ws",
        tmp_path / "state" / "settings.json",
        tmp_path / "state" / "hooks-trust.json",
        trusted=lambda: trusted,
        user_label="~/.shiro-neko/settings.json",
        reporter=lambda message: None,
    )


def test_both_files_load_and_what_cannot_be_used_is_said(tmp_path: Path) -> None:
    write(
        tmp_path / "state/settings.json", {"hooks": {"Stop": group("notify-send done"), "Notification": []}}
    )
    write(
        tmp_path / "ws/.shiro/settings.json",
        {
            "hooks": {
                "PreToolUse": [
                    *group("./policy.sh", "Bash", timeout=5),
                    *group("x", "(unclosed"),
                    {
                        "matcher": "Edit",
                        "hooks": [{"type": "prompt", "prompt": "judge it"}, {"type": "command"}],
                    },
                ]
            }
        },
    )
    loaded = load_hooks(tmp_path / "ws", tmp_path / "state/settings.json", "~/.shiro-neko/settings.json")
    assert [(h.event, h.matcher, h.command, h.scope, h.timeout_s) for h in loaded.hooks] == [
        ("Stop", "", "notify-send done", "user", 60.0),
        ("PreToolUse", "Bash", "./policy.sh", "project", 5.0),
    ]
    problems = "\n".join(loaded.problems)
    assert 'the hook event "Notification" is not one Shiro runs' in problems
    assert '"matcher" that is not a valid pattern' in problems
    assert 'has type "prompt"; Shiro runs only "command" hooks' in problems
    assert 'has no "command"' in problems
    write(tmp_path / "ws/.shiro/settings.json", "{ not json")
    loaded = load_hooks(tmp_path / "ws", tmp_path / "state/settings.json", "x")
    assert any(".shiro/settings.json is not valid JSON" in p for p in loaded.problems)


def test_trust_is_pinned_to_the_entry_and_restricted_mode_runs_none(tmp_path: Path) -> None:
    write(tmp_path / "ws/.shiro/settings.json", {"hooks": {"PostToolUse": group("make fmt", "Edit|Write")}})
    hooks = settings_of(tmp_path)
    [status] = hooks.listing().hooks
    assert (status.trusted, status.runs) == (False, False)
    with pytest.raises(NotFound):
        hooks.set_trust([status.hook.fingerprint[:6]], True)  # too short to name one surely
    [status] = hooks.set_trust([status.hook.fingerprint[:12]], True).hooks
    assert (status.trusted, status.runs) == (True, True)
    assert not settings_of(tmp_path, trusted=False).listing().hooks[0].runs
    write(
        tmp_path / "ws/.shiro/settings.json",
        {"hooks": {"PostToolUse": group("make fmt; curl x", "Edit|Write")}},
    )
    assert hooks.listing().hooks[0].trusted is False
    other = HookSettings(
        tmp_path / "elsewhere",
        tmp_path / "state/settings.json",
        tmp_path / "state/hooks-trust.json",
        trusted=lambda: True,
        user_label="x",
    )
    write(
        tmp_path / "elsewhere/.shiro/settings.json",
        {"hooks": {"PostToolUse": group("make fmt", "Edit|Write")}},
    )
    assert other.listing().hooks[0].trusted is False  # trust is per workspace


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_an_unreadable_trust_file_trusts_nothing_and_says_so(tmp_path: Path) -> None:
    write(tmp_path / "ws/.shiro/settings.json", {"hooks": {"Stop": group("true")}})
    hooks = settings_of(tmp_path)
    hooks.set_trust(["all"], True)
    (tmp_path / "state/hooks-trust.json").chmod(0)
    listing = hooks.listing()
    assert listing.hooks[0].trusted is False and any("hooks-trust.json" in p for p in listing.problems)


HOOK = Hook("PreToolUse", "Bash", "x", 60.0, "project", ".shiro/settings.json", "f")


@pytest.mark.parametrize(
    ("run", "blocked", "permission", "context", "message"),
    [
        (HookRun(2, "", "no curl here\n"), "no curl here", None, "", None),
        (HookRun(0, '{"decision": "block", "reason": "use the client"}'), "use the client", None, "", None),
        (
            HookRun(
                0, '{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "r"}}'
            ),
            "r",
            "deny",
            "",
            None,
        ),
        (HookRun(0, '{"hookSpecificOutput": {"permissionDecision": "ask"}}'), None, "ask", "", None),
        (HookRun(0, '{"decision": "approve"}'), None, "allow", "", None),
        (HookRun(0, "plain text is not context for a tool hook"), None, None, "", None),
        (HookRun(1, "", "boom\nmore"), None, None, "", "failed with exit 1: boom"),
        (HookRun(None, timed_out=True), None, None, "", "did not finish within 60 s"),
        (
            HookRun(None, error="it could not be started (No such file)"),
            None,
            None,
            "",
            "could not be started",
        ),
        (HookRun(0, '{"systemMessage": "lint is slow today"}'), None, None, "", "lint is slow today"),
    ],
)
def test_what_a_run_means(
    run: HookRun, blocked: str | None, permission: str | None, context: str, message: str | None
) -> None:
    outcome = outcome_of(HOOK, run)
    assert (outcome.blocked, outcome.permission, outcome.context) == (blocked, permission, context)
    assert (message is None and outcome.message is None) or (message and message in (outcome.message or ""))


async def test_a_run_gets_the_event_on_stdin_no_keys_and_bounded_output(tmp_path: Path) -> None:
    os.environ["SOME_SERVICE_TOKEN"] = "tok-should-not-pass"
    try:
        script = "cat; echo; env | grep -c SOME_SERVICE_TOKEN; head -c 100000 /dev/zero | tr '\\0' x >&2"
        run = await run_hook(script, {"hook_event_name": "Stop"}, tmp_path, 10, secrets=["sk-configured"])
    finally:
        del os.environ["SOME_SERVICE_TOKEN"]
    assert run.exit_code == 0 and not run.timed_out
    first, count = run.stdout.splitlines()[:2]
    assert json.loads(first) == {"hook_event_name": "Stop"} and count == "0"
    assert len(run.stderr) < OUTPUT_CAP + 100 and "more characters not kept" in run.stderr


async def test_a_hook_that_hangs_is_killed_with_what_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    run = await run_hook(f"sleep 60 & echo $! > {pid_file}; wait", {}, tmp_path, 0.5)
    assert run.timed_out
    child = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        for _ in range(50):
            os.kill(child, 0)  # raises once the child is gone
            time.sleep(0.05)


async def test_pre_tool_use_matches_claude_names_and_only_the_users_allow_counts(tmp_path: Path) -> None:
    said: list[str] = []

    def turn(*hooks: Hook) -> TurnHooks:
        return TurnHooks(hooks, cwd=tmp_path, base={}, secrets=[], redact=str, notify=said.append)

    allow = '{"hookSpecificOutput": {"permissionDecision": "allow"}}'
    theirs = Hook("PreToolUse", "Edit|Write", f"echo '{allow}'", 5, "project", ".shiro/settings.json", "a")
    mine = Hook("PreToolUse", "Edit|Write", f"echo '{allow}'", 5, "user", "~/s.json", "b")
    assert (await turn(theirs).pre_tool_use("c", "write_file", {"path": "a"})).permission is None
    assert (await turn(mine).pre_tool_use("c", "write_file", {"path": "a"})).permission == "allow"
    assert (await turn(mine).pre_tool_use("c", "bash", {"command": "ls"})).permission is None  # not matched
    block = Hook("PreToolUse", "", "echo 'sk-proj-abcdefghijklmnopqrstuvwx' >&2; exit 2", 5, "user", "s", "c")
    verdict = await TurnHooks(
        [block],
        cwd=tmp_path,
        base={},
        secrets=[],
        redact=lambda t: t.replace("sk-proj", "[key]"),
        notify=said.append,
    ).pre_tool_use("c", "grep", {})
    assert verdict.refusal is not None and "sk-proj" not in verdict.refusal


def test_a_repositorys_settings_file_that_is_a_fifo_or_nested_too_deep_loads_no_hook_and_says_so(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws/.shiro").mkdir(parents=True)
    os.mkfifo(tmp_path / "ws/.shiro/settings.json")  # read with a plain open, this blocks forever
    loaded = load_hooks(tmp_path / "ws", tmp_path / "state/settings.json", "x")
    assert loaded.hooks == [] and any("not a regular file" in p for p in loaded.problems)
    os.remove(tmp_path / "ws/.shiro/settings.json")
    write(tmp_path / "ws/.shiro/settings.json", '{"hooks": ' + "[" * 40_000 + "]" * 40_000 + "}")
    loaded = load_hooks(tmp_path / "ws", tmp_path / "state/settings.json", "x")
    assert loaded.hooks == [] and any("nested too deep" in p for p in loaded.problems)


def test_a_repositorys_settings_folder_linked_elsewhere_is_not_followed(tmp_path: Path) -> None:
    write(tmp_path / "elsewhere/settings.json", {"hooks": {"Stop": group("touch planted")}})
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws/.shiro").symlink_to(tmp_path / "elsewhere")
    loaded = load_hooks(tmp_path / "ws", tmp_path / "state/settings.json", "x")
    assert loaded.hooks == [] and any("symbolic link" in p for p in loaded.problems)
