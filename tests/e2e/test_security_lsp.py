"""Issue 14, Security: a hostile model's tool calls through the real server, the real tools, a real shell.

Each test scripts the fake model to try to pull a secret out (secrets files in every case and
form, hard links, the shell's environment, key-shaped output) and then checks the three places a
secret must never land: the model's next request, the saved session file, and an export.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from chat_helpers import model_bodies, sent
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.fixtures import options
from lsp_client import SERVER_COMMAND, ShiroClient, initialize, make_client
from shiro_lsp.tools import landlock, sandbox

pytest_plugins = ["fakes.fixtures"]

SECRET = "zq7-hunter2-9f4e"
"""A value no key-format rule recognises: only the secrets-file policy keeps it out."""

SECRET_FILES = [
    ".env",
    ".ENV",
    ".Env.Local",
    "config/prod.env",
    ".envrc",
    "Secret.PEM",
    "server.key",
    "ID_RSA",
    "keys/id_ed25519",
    "cert.P12",
    ".aws/credentials",
    ".docker/config.json",
    ".git-credentials",
    ".netrc",
    ".npmrc",
    ".pypirc",
    "credentials.json",
    "secrets.yaml",
    "deploy/SECRETS.YML",
    ".kube/config",
    "\uff0e\uff45\uff4e\uff56",  # full-width ".env"
]


@pytest.fixture
def permissions() -> dict[str, Any]:
    return {}


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI, permissions: dict[str, Any]) -> dict[str, object]:
    return options(home, fake, permissions, model="gpt-5")


def plant_secrets(workspace: Path) -> None:
    for index, rel in enumerate(SECRET_FILES):
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE_{index}={SECRET}-{index}\n")
    (workspace / "README.md").write_text("nothing to hide\n")


async def chat(client: ShiroClient, text: str) -> dict[str, Any]:
    result: dict[str, Any] = await client.call("shiro/chat", {"text": text})
    return result


def stored_text(home: Path, *, backups: bool = True) -> str:
    """Everything the server keeps on disk under its state root (``backups=False``: except the
    checkpoint blobs, the byte-for-byte copies of the user's own workspace files that undo needs)."""
    blobs = home / "checkpoints" / "blobs"
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace")
        for p in home.rglob("*")
        if p.is_file() and p.suffix != ".db" and (backups or blobs not in p.parents)
    )


async def assert_nowhere(
    client: ShiroClient, fake: FakeOpenAI, home: Path, *needles: str, backups: bool = True
) -> None:
    await client.call("shiro/session/save")
    exports = [
        (await client.call("shiro/session/export", {"format": fmt}))["content"]
        for fmt in ("json", "markdown")
    ]
    for needle in needles:
        assert needle not in sent(fake), f"{needle!r} reached the model"
        assert needle not in stored_text(home, backups=backups), f"{needle!r} was saved"
        assert all(needle not in e for e in exports), f"{needle!r} is in an export"


def tool_outputs(fake: FakeOpenAI) -> list[str]:
    """The tool results the model was sent in its last request, in order."""
    last = model_bodies(fake)[-1]
    return [str(m["content"]) for m in last["messages"] if m["role"] == "tool"]


async def test_read_file_refuses_every_secrets_file_in_every_case_and_form(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    plant_secrets(workspace)
    calls = [ToolCall("read_file", {"path": rel}, call_id=f"c{i}") for i, rel in enumerate(SECRET_FILES)]
    calls.append(ToolCall("read_file", {"path": str(workspace / ".ENV")}, call_id="abs"))
    fake.script += [Step(*calls), Step(Text("done"))]
    await chat(client, "read them all")
    outputs = tool_outputs(fake)
    assert len(outputs) == len(SECRET_FILES) + 1
    for rel, output in zip([*SECRET_FILES, str(workspace / ".ENV")], outputs, strict=True):
        assert f"{rel} is a secrets file; Shiro never sends its contents to the model" in output
    await assert_nowhere(client, fake, home, SECRET)


async def test_read_many_files_refuses_secrets_and_reads_the_rest(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    plant_secrets(workspace)
    # Not one of the default permission rules' names: the tool itself refuses.
    files = [{"path": rel} for rel in SECRET_FILES if rel != rel.lower() and not rel.endswith(".PEM")]
    files.append({"path": "README.md"})
    fake.script += [Step(ToolCall("read_many_files", {"files": files})), Step(Text("done"))]
    await chat(client, "read them")
    (output,) = tool_outputs(fake)
    assert "nothing to hide" in output
    assert output.count("is a secrets file; Shiro never sends its contents to the model") == len(files) - 1
    await assert_nowhere(client, fake, home, SECRET)


@pytest.mark.parametrize("include", [None, "*", ".env", "*.ENV", "**/credentials", "*.PEM"])
async def test_grep_never_searches_secrets_files_and_says_how_many_it_skipped(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path, include: str | None
) -> None:
    plant_secrets(workspace)
    args: dict[str, Any] = {"pattern": "VALUE_|hunter2|nothing"}
    if include is not None:
        args["include"] = include
    fake.script += [Step(ToolCall("grep", args)), Step(Text("done"))]
    await chat(client, "find the keys")
    (output,) = tool_outputs(fake)
    assert "secrets file" in output and "skipped" in output
    assert "Shiro never searches or sends the contents of secrets files to the model" in output
    if include is None:
        assert "README.md:1: nothing to hide" in output
        assert f"[{len(SECRET_FILES)} secrets files were skipped" in output
    await assert_nowhere(client, fake, home, SECRET)


async def test_glob_lists_secrets_files_flagged_and_never_their_contents(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    plant_secrets(workspace)
    fake.script += [Step(ToolCall("glob", {"pattern": "**/*"})), Step(Text("done"))]
    await chat(client, "list")
    (output,) = tool_outputs(fake)
    assert ".aws/credentials  [secrets file: contents never sent to the model]" in output
    assert "README.md" in output.splitlines()
    assert "README.md  [secrets" not in output
    await assert_nowhere(client, fake, home, SECRET)


async def test_a_hard_link_to_a_file_outside_is_neither_read_nor_rewritten(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text(f"outside {SECRET}\n")
    os.link(outside, workspace / "linked.txt")
    client.decisions = ["once", "once"]
    fake.script += [
        Step(
            ToolCall("read_file", {"path": "linked.txt"}, call_id="r"),
            ToolCall("grep", {"pattern": "outside"}, call_id="g"),
            ToolCall("write_file", {"path": "linked.txt", "content": "pwned\n"}, call_id="w"),
            ToolCall(
                "edit_file", {"path": "linked.txt", "oldString": "outside", "newString": "pwned"}, call_id="e"
            ),
        ),
        Step(Text("done")),
    ]
    await chat(client, "use the link")
    read, grep, write, edit = tool_outputs(fake)
    assert "linked.txt is a hard-linked file (2 links to the same data)" in read
    assert "1 hard-linked file(s) skipped (linked.txt)" in grep
    assert "hard-linked file" in write and "hard-linked file" in edit
    assert outside.read_text() == f"outside {SECRET}\n"
    await assert_nowhere(client, fake, home, SECRET)


KEYS = {
    "openai": "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6",
    "anthropic": "sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2",
    "aws": "AKIA" + "IOSFODNN7EXAMPLE",
    "aws_secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "github": "ghp_" + "a" * 36,
    "github_pat": "github_pat_" + "B" * 50,
    "slack": "xoxb-" + "123456789012-abcdefghij",
    "google": "AIza" + "SyA1234567890abcdefghijklmnopqrstuv",
    "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "pem_body": "MIIEowIBAAKCAQEA7bq98zz",
}


async def test_bash_output_is_redacted_before_the_model_the_session_and_the_export(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    lines = [
        f"openai={KEYS['openai']}",
        f"anthropic {KEYS['anthropic']}",
        f"aws_access_key_id = {KEYS['aws']}",
        f"aws_secret_access_key = {KEYS['aws_secret']}",
        KEYS["github"],
        KEYS["github_pat"],
        KEYS["slack"],
        KEYS["google"],
        KEYS["stripe"],
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        KEYS["pem_body"],
        "-----END OPENSSH PRIVATE KEY-----",
        "configured sk-test here",
        "ordinary output stays",
    ]
    (workspace / "keys.txt").write_text("\n".join(lines) + "\n")
    client.decisions = ["once"]
    fake.script += [Step(ToolCall("bash", {"command": "cat keys.txt"})), Step(Text("done"))]
    result = await chat(client, "print them")
    (output,) = tool_outputs(fake)
    assert "ordinary output stays" in output
    for kind in ("OpenAI key", "Anthropic key", "AWS access key", "AWS secret key", "GitHub token"):
        assert f"[redacted {kind}]" in output
    assert "[redacted private key]" in output and "[redacted configured key]" in output
    streamed = "".join(e["chunk"] for e in client.events(result["taskId"]) if e["type"] == "tool-output")
    assert "ordinary output stays" in streamed
    # keys.txt is an ordinary workspace file the user wrote: the turn's checkpoint keeps its bytes
    # (a bash turn may change it, and undo must restore it), but no session, export or request does.
    await assert_nowhere(client, fake, home, *KEYS.values(), "sk-test here", backups=False)


async def test_a_secret_in_the_users_own_message_is_cut_before_the_model_and_the_session(
    client: ShiroClient, fake: FakeOpenAI, home: Path
) -> None:
    # what an attached terminal (`@terminal` after `env`) or a careless paste carries
    prompt = f"Why does this fail?\n--- terminal: env ---\nAWS_ACCESS_KEY_ID={KEYS['aws']}\nGH={KEYS['github']}\nPATH=/usr/bin"
    fake.script.append(Step(Text("Your PATH is fine.")))
    result = await chat(client, prompt)
    (body,) = model_bodies(fake)
    wire = json.dumps(body)
    assert (
        "[redacted AWS access key]" in wire and "[redacted GitHub token]" in wire and "PATH=/usr/bin" in wire
    )
    notice = next(e["text"] for e in client.events(result["taskId"]) if e["type"] == "notice")
    assert "AWS access key" in notice and "GitHub token" in notice
    await assert_nowhere(client, fake, home, KEYS["aws"], KEYS["github"], backups=False)


@pytest.mark.parametrize(
    "command", ["cat .env", "source .envrc && make", "grep KEY ~/.aws/credentials", "less ./config/ID_RSA"]
)
async def test_a_command_that_reads_a_secrets_file_asks_with_a_warning_even_when_bash_is_allowed(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path, command: str
) -> None:
    plant_secrets(workspace)
    client.decisions = ["deny"]
    fake.script += [Step(ToolCall("bash", {"command": command})), Step(Text("ok"))]
    await chat(client, "show me the secrets")
    (approval,) = client.approvals
    assert approval["input"]["command"] == command
    assert "This command reads a secrets file" in approval["warning"]
    assert approval["warning"].endswith(where_bash_runs())
    await assert_nowhere(client, fake, home, SECRET)


@pytest.fixture
def allow_bash(permissions: dict[str, Any]) -> None:
    permissions["bash"] = "allow"


@pytest.mark.usefixtures("allow_bash")
async def test_allowed_bash_that_names_a_secrets_file_still_asks(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    plant_secrets(workspace)
    client.decisions = ["always", "deny"]
    fake.script += [
        Step(ToolCall("bash", {"command": "echo fine"}, call_id="a")),
        Step(ToolCall("bash", {"command": "cat .ENV"}, call_id="b")),
        Step(ToolCall("bash", {"command": "cat .ENV"}, call_id="c")),
        Step(Text("ok")),
    ]
    await chat(client, "go")
    # "echo fine" ran without asking; each "cat .ENV" asked, and "always" granted nothing.
    assert [a["input"]["command"] for a in client.approvals] == ["cat .ENV", "cat .ENV"]
    assert all("This command reads a secrets file (.ENV)" in a["warning"] for a in client.approvals)
    ran, asked_and_allowed, asked_and_denied = tool_outputs(fake)
    assert (
        "fine" in ran and "exit: 0" in asked_and_allowed and asked_and_denied == "User denied this tool call."
    )


def where_bash_runs() -> str:
    """What a bash card says by default (bashSandbox auto) on this machine."""
    if sandbox.probe() is None:
        return sandbox.SANDBOXED_WARNING.format(
            network="; network allowed" + sandbox.ABSTRACT_OPEN * (not landlock.can_scope_abstract_sockets())
        )
    if landlock.can_confine_writes():
        return sandbox.LANDLOCK_WARNING.format(network="")
    return f"{sandbox.UNSANDBOXED_WARNING} (Sandbox unavailable: {sandbox.probe()}.)"


async def test_every_bash_approval_says_where_it_runs(client: ShiroClient, fake: FakeOpenAI) -> None:
    client.decisions = ["deny"]
    fake.script += [Step(ToolCall("bash", {"command": "make"})), Step(Text("ok"))]
    await chat(client, "build")
    (approval,) = client.approvals
    assert approval["warning"] == where_bash_runs()  # sandboxed by default where the machine allows it


async def test_bash_with_the_sandbox_off_says_it_runs_unsandboxed(
    workspace: Path, home: Path, fake: FakeOpenAI
) -> None:
    client = make_client()
    client.decisions = ["deny"]
    await client.start_io(*SERVER_COMMAND, env=base_env())
    try:
        await initialize(client, workspace, **options(home, fake, {}, model="gpt-5", bashSandbox="off"))
        fake.script += [Step(ToolCall("bash", {"command": "make"})), Step(Text("ok"))]
        await chat(client, "build")
    finally:
        await client.shutdown_session()
        await client.stop()
    (approval,) = client.approvals
    assert approval["warning"].startswith("bash runs unsandboxed: the command has your full access")
    assert "including secrets files and everything outside the workspace" in approval["warning"]


# --- the environment of commands -----------------------------------------------------------------


ENV_KEY = "sk-envkey-" + "Q" * 24
INIT_KEY = "sk-initkey-" + "W" * 24


async def run_env_turn(
    workspace: Path, home: Path, fake: FakeOpenAI, env: dict[str, str], extra: dict[str, Any]
) -> str:
    client = make_client()
    client.decisions = ["once"]
    await client.start_io(*SERVER_COMMAND, env=env)
    try:
        await initialize(
            client,
            workspace,
            home=str(home),
            baseUrl=fake.base_url,
            api="chat",
            maxRetries=0,
            **extra,
        )
        fake.script += [
            Step(ToolCall("bash", {"command": "env; echo ECHO=$OPENAI_API_KEY"})),
            Step(Text("ok")),
        ]
        await client.call("shiro/chat", {"text": "show env"})
        await client.call("shiro/session/save")
    finally:
        await client.shutdown_session()
        await client.stop()
    (output,) = tool_outputs(fake)
    return output


def base_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHIRO_"))}


async def test_bash_gets_no_key_given_through_the_environment(
    workspace: Path, home: Path, fake: FakeOpenAI
) -> None:
    env = {
        **base_env(),
        "OPENAI_API_KEY": ENV_KEY,
        "MY_SERVICE_TOKEN": "tok-" + "T" * 20,
        "DB_PASSWORD": "pw-" + "P" * 20,
        "SHIRO_VISIBLE_MARKER": "visible-marker",
    }
    output = await run_env_turn(workspace, home, fake, env, {})
    assert "SHIRO_VISIBLE_MARKER=visible-marker" in output  # the environment is there...
    assert "PATH=" in output and "HOME=" in output
    assert "OPENAI_API_KEY" not in output.replace("ECHO=$OPENAI_API_KEY", "")  # ...without the key
    assert "MY_SERVICE_TOKEN" not in output and "DB_PASSWORD" not in output
    assert "ECHO=\n" in output or output.rstrip().endswith("ECHO=")
    assert ENV_KEY not in sent(fake) and ENV_KEY not in stored_text(home)


async def test_bash_gets_no_key_given_through_initialization_options(
    workspace: Path, home: Path, fake: FakeOpenAI
) -> None:
    env = {**base_env(), "COPY_OF_THE_KEY": INIT_KEY, "SHIRO_VISIBLE_MARKER": "visible-marker"}
    output = await run_env_turn(workspace, home, fake, env, {"apiKey": INIT_KEY})
    assert "SHIRO_VISIBLE_MARKER=visible-marker" in output
    assert "COPY_OF_THE_KEY" not in output  # dropped by value, whatever its name
    assert INIT_KEY not in sent(fake) and INIT_KEY not in stored_text(home)


async def test_base_url_credentials_are_cut_from_the_environment(
    workspace: Path, home: Path, fake: FakeOpenAI
) -> None:
    url = fake.base_url.replace("://", "://alice:s3cr3t-pass-77@")
    env = {**base_env(), "OPENAI_BASE_URL": url, "HTTPS_PROXY": "http://bob:pr0xy-pass-88@127.0.0.1:9"}
    output = await run_env_turn(workspace, home, fake, env, {"apiKey": "sk-test"})
    assert "HTTPS_PROXY=http://127.0.0.1:9" in output
    assert "s3cr3t-pass-77" not in sent(fake) and "pr0xy-pass-88" not in sent(fake)


# --- the bubblewrap sandbox ------------------------------------------------------------------------

needs_bwrap = pytest.mark.skipif(sandbox.probe() is not None, reason=f"no sandbox here: {sandbox.probe()}")


@needs_bwrap
async def test_sandboxed_bash_writes_only_inside_the_workspace_and_has_no_network(
    workspace: Path, home: Path, fake: FakeOpenAI, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    client = make_client()
    client.decisions = ["once"]
    await client.start_io(*SERVER_COMMAND, env=base_env())
    port = fake.base_url.split(":")[-1].split("/")[0]
    command = (
        f"touch inside.txt; touch {outside}/escaped.txt; echo hi > $HOME/.shiro-escape-test;"
        f" (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo NET-OPEN || echo NET-CLOSED"
    )
    try:
        await initialize(
            client,
            workspace,
            home=str(home),
            apiKey="sk-test",
            baseUrl=fake.base_url,
            api="chat",
            maxRetries=0,
            bashSandbox="required",
            bashSandboxNetwork=False,
        )
        fake.script += [Step(ToolCall("bash", {"command": command})), Step(Text("ok"))]
        await client.call("shiro/chat", {"text": "try to escape"})
    finally:
        await client.shutdown_session()
        await client.stop()
    (approval,) = client.approvals
    assert (
        approval["warning"].startswith("bash runs sandboxed (bubblewrap)")
        and "no network" in approval["warning"]
    )
    (output,) = tool_outputs(fake)
    assert (workspace / "inside.txt").exists()
    assert not (outside / "escaped.txt").exists()
    assert not (Path.home() / ".shiro-escape-test").exists()
    assert "NET-CLOSED" in output


async def test_required_sandbox_without_bubblewrap_runs_nothing(
    workspace: Path, home: Path, fake: FakeOpenAI, tmp_path: Path
) -> None:
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    for tool in ("bash", "env", "touch"):
        found = next(Path(d) / tool for d in ("/usr/bin", "/bin") if (Path(d) / tool).exists())
        (empty_bin / tool).symlink_to(found)
    env = {**base_env(), "PATH": str(empty_bin)}
    client = make_client()
    client.decisions = ["once"]
    await client.start_io(*SERVER_COMMAND, env=env)
    try:
        await initialize(
            client,
            workspace,
            home=str(home),
            apiKey="sk-test",
            baseUrl=fake.base_url,
            api="chat",
            maxRetries=0,
            bashSandbox="required",
        )
        fake.script += [Step(ToolCall("bash", {"command": "touch ran.txt"})), Step(Text("ok"))]
        await client.call("shiro/chat", {"text": "run"})
    finally:
        await client.shutdown_session()
        await client.stop()
    (output,) = tool_outputs(fake)
    assert "bashSandbox: required" in output and "bubblewrap (bwrap) is not installed" in output
    assert "Nothing was run" in output and not (workspace / "ran.txt").exists()
    assert json.loads(json.dumps(client.approvals))[0]["warning"].startswith(
        "bash is set to run only sandboxed"
    )


async def test_a_failed_edit_that_quotes_the_file_never_quotes_its_secret(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path
) -> None:
    config = f'{{\n  "user": "app",\n  "password": "{KEYS["stripe"]}"\n}}\n'
    (workspace / "config.json").write_text(config)
    client.decisions = ["once"]
    missing = {"path": "config.json", "oldString": '"user": "root"', "newString": '"user": "admin"'}
    fake.script += [Step(ToolCall("edit_file", missing)), Step(Text("done"))]
    await chat(client, "make the user admin")
    (output,) = tool_outputs(fake)
    assert "oldString not found" in output and '"password": "[redacted' in output
    await assert_nowhere(client, fake, home, KEYS["stripe"], backups=False)


async def test_a_config_rewritten_as_the_model_saw_it_keeps_the_secret_it_never_saw(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    config = f'{{\n  "user": "app",\n  "password": "{KEYS["stripe"]}"\n}}\n'
    (workspace / "config.json").write_text(config)
    client.decisions = ["once", "once", "once"]
    shown = config.replace(KEYS["stripe"], "[redacted Stripe key]")
    invented = config.replace(KEYS["stripe"], "your_production_password")
    fake.script += [
        Step(ToolCall("write_file", {"path": "config.json", "content": shown.replace("app", "admin")})),
        Step(ToolCall("write_file", {"path": "config.json", "content": invented}, call_id="c2")),
        Step(Text("done")),
    ]
    await chat(client, "make the user admin")
    assert (workspace / "config.json").read_text() == config.replace("app", "admin")
    assert "gives password a value of yours" in tool_outputs(fake)[1]
