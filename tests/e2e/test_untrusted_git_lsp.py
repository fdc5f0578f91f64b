"""Issue 20, Git: a repository's configuration never makes Shiro's own git run a command, through
the real server, the real git tools and the real checkpoint scan, with real git.

The hostile repository names a command in every place git reads one from (fsmonitor, a hook, a
clean/smudge filter, a textconv driver, an external diff, a signature program); each command writes
a marker file outside the workspace. After Shiro's turn no marker exists; then plain git in the
same repository writes them, which shows the repository was armed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from chat_helpers import model_bodies
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.fixtures import options
from lsp_client import SERVER_COMMAND, initialize, make_client
from shiro_lsp.tools import sandbox

pytest_plugins = ["fakes.fixtures"]

OUTSIDE_SECRET = "outside-the-workspace-7c1f"


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI) -> dict[str, object]:
    return options(home, fake, {"bash": "allow"}, model="gpt-5")


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return done.stdout


def marker(markers: Path, name: str) -> str:
    return f"touch {markers}/{name}"


def signed_commit(repo: Path) -> None:
    """HEAD becomes a commit with a (fake) PGP signature: ``log.showSignature`` asks gpg about it."""
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    parent = git(repo, "rev-parse", "HEAD").strip()
    body = (
        f"tree {tree}\nparent {parent}\nauthor t <t@example.com> 1700000000 +0000\n"
        "committer t <t@example.com> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n"
        "\nsigned\n"
    )
    done = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=repo,
        input=body,
        capture_output=True,
        text=True,
        check=True,
    )
    git(repo, "update-ref", "HEAD", done.stdout.strip())


def arm(repo: Path, markers: Path) -> None:
    """A repository whose configuration names a command everywhere git reads one."""
    markers.mkdir()
    (markers.parent / "revs.txt").write_text(f"{OUTSIDE_SECRET}\n")
    gpg = markers.parent / "gpg.sh"  # gpg.program is run as a program, not through the shell
    gpg.write_text(f"#!/bin/sh\n{marker(markers, 'gpg')}\n")
    gpg.chmod(0o755)
    git(repo, "init", "-q")
    (repo / ".gitattributes").write_text("*.txt filter=evil diff=evil\n")
    (repo / "a.txt").write_text("one\ntwo\n")
    (repo / "b.txt").write_text("kept\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    signed_commit(repo)
    settings = {
        "core.fsmonitor": f"{marker(markers, 'fsmonitor')}; false",
        "filter.evil.clean": f"{marker(markers, 'clean')}; cat",
        "filter.evil.smudge": f"{marker(markers, 'smudge')}; cat",
        "filter.evil.required": "true",
        "diff.evil.textconv": f"sh -c '{marker(markers, 'textconv')}; cat \"$0\"'",
        "diff.external": marker(markers, "external-diff"),
        "log.showSignature": "true",
        "gpg.program": str(gpg),
        "core.pager": marker(markers, "pager"),
        "blame.ignoreRevsFile": str(markers.parent / "revs.txt"),
    }
    for key, value in settings.items():
        git(repo, "config", key, value)
    for hook in ("post-index-change", "reference-transaction", "post-checkout"):
        path = repo / ".git" / "hooks" / hook
        path.write_text(f"#!/bin/sh\n{marker(markers, hook)}\n")
        path.chmod(0o755)
    (repo / "a.txt").write_text("one\nTWO\n")


def plain_git_runs_the_markers(repo: Path, markers: Path) -> set[str]:
    """What the armed repository runs under plain git (the control)."""
    git(repo, "status")
    git(repo, "diff")
    git(repo, "diff", "--no-ext-diff")
    git(repo, "log", "-1")
    return {p.name for p in markers.iterdir()}


def tool_outputs(fake: FakeOpenAI) -> list[str]:
    last = model_bodies(fake)[-1]
    return [str(m["content"]) for m in last["messages"] if m["role"] == "tool"]


GIT_CALLS = [
    ToolCall("git_status", {}),
    ToolCall("git_diff", {}),
    ToolCall("git_diff", {"path": "a.txt"}),
    ToolCall("git_log", {"limit": 2}),
    ToolCall("git_show", {"ref": "HEAD"}),
    ToolCall("git_show", {"ref": "HEAD~1"}),
    ToolCall("git_blame", {"path": "a.txt"}),
    ToolCall("bash", {"command": "echo three >> b.txt && rm a.txt"}),  # a checkpoint scan
]


async def test_the_git_tools_and_the_checkpoint_scan_run_no_configured_command(
    client: Any, fake: FakeOpenAI, workspace: Path, tmp_path: Path
) -> None:
    markers = tmp_path / "markers"
    arm(workspace, markers)
    fake.script += [Step(call) for call in GIT_CALLS] + [Step(Text("done"))]
    result = await client.call("shiro/chat", {"text": "look around"})
    assert result["stopReason"] == "done"
    outputs = tool_outputs(fake)
    assert len(outputs) == len(GIT_CALLS)
    assert "a.txt  (modified)" in outputs[0]
    assert "-two\n+TWO" in outputs[1] and "-two\n+TWO" in outputs[2]  # the real text, no textconv
    assert not any(OUTSIDE_SECRET in output for output in outputs)
    assert sorted(p.name for p in markers.iterdir()) == []

    rows = {f["path"]: f["status"] for f in (await client.call("shiro/changes", {}))["files"]}
    assert rows == {"a.txt": "deleted", "b.txt": "modified"}
    checkpoint = (await client.call("shiro/checkpoint/list", {}))["checkpoints"][0]
    restored = await client.call("shiro/checkpoint/restore", {"id": checkpoint["id"], "mode": "code"})
    assert restored["conflicts"] == []
    assert (workspace / "a.txt").read_text() == "one\nTWO\n" and (workspace / "b.txt").read_text() == "kept\n"
    assert sorted(p.name for p in markers.iterdir()) == []

    armed = plain_git_runs_the_markers(workspace, markers)
    assert {"fsmonitor", "clean", "textconv", "external-diff", "gpg"} <= armed


needs_bwrap = pytest.mark.skipif(sandbox.probe() is not None, reason=f"no sandbox here: {sandbox.probe()}")


@needs_bwrap
async def test_a_sandboxed_command_cannot_plant_a_command_for_the_checkpoint_scan(
    fake: FakeOpenAI, workspace: Path, home: Path, tmp_path: Path, init_options: dict[str, object]
) -> None:
    """The escape: sandboxed bash sets ``core.fsmonitor`` (and a filter, and a hook); Shiro's own,
    unsandboxed checkpoint scan then runs git in the repository right after the command."""
    markers = tmp_path / "markers"
    markers.mkdir()
    git(workspace, "init", "-q")
    (workspace / "a.txt").write_text("one\n")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "init")
    plant = (
        f"git config core.fsmonitor '{marker(markers, 'fsmonitor')}; false'"
        f" && git config filter.x.clean '{marker(markers, 'clean')}; cat'"
        f" && git config filter.x.smudge '{marker(markers, 'smudge')}; cat'"
        " && echo 'a.txt filter=x' > .git/info/attributes"
        f" && printf '#!/bin/sh\\n{marker(markers, 'hook')}\\n' > .git/hooks/post-index-change"
        " && chmod +x .git/hooks/post-index-change"
        f" && (touch {markers}/inside-sandbox || echo read-only-outside)"
        " && echo two >> a.txt"
    )
    client = make_client()
    await client.start_io(*SERVER_COMMAND)
    try:
        await initialize(client, workspace, **{**init_options, "bashSandbox": "required"})
        fake.script += [
            Step(ToolCall("bash", {"command": plant})),
            Step(ToolCall("bash", {"command": "echo three >> a.txt"})),
            Step(Text("done")),
        ]
        result = await client.call("shiro/chat", {"text": "set things up"})
        assert result["stopReason"] == "done"
        changes = (await client.call("shiro/changes", {}))["files"]
    finally:
        await client.shutdown_session()
        await client.stop()
    assert "read-only-outside" in tool_outputs(fake)[0]  # the command ran, inside the sandbox
    assert git(workspace, "config", "core.fsmonitor").strip().endswith("false")  # and planted it
    assert [c["path"] for c in changes] == ["a.txt"]
    assert sorted(p.name for p in markers.iterdir()) == []
    git(workspace, "status")
    assert "fsmonitor" in {p.name for p in markers.iterdir()}  # plain git outside the sandbox runs it
