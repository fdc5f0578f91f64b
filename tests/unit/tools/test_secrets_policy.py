"""The secrets policy on its own: names, key formats, commands that name secrets files, the bash env."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.secrets import Redactor, command_reads_secrets, is_secret_path, scan_text
from shiro_lsp.tools.environment import command_env
from tool_helpers import RunTool, git


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        ".ENV",
        "a/b/.Env.Production",
        "prod.env",
        ".envrc",
        "Secret.PEM",
        "tls/server.KEY",
        "ID_RSA",
        "id_ed25519_work",
        "home/.ssh/config",
        "cert.p12",
        "store.PFX",
        "release.keystore",
        ".aws/credentials",
        "x/.AWS/Credentials",
        ".docker/config.json",
        ".git-credentials",
        ".netrc",
        ".npmrc",
        ".pypirc",
        "credentials.json",
        "secrets.yaml",
        "secrets.yml",
        "config/secrets.json",
        ".kube/config",
        "\uff0e\uff45\uff4e\uff56",  # full-width ".env"
        "C:\\Users\\me\\.env",
    ],
)
def test_secrets_files_in_every_case_and_form(path: str) -> None:
    assert is_secret_path(path)


@pytest.mark.parametrize(
    "path",
    [
        "main.py",
        ".env.example",
        "id_rsa.pub",
        "ID_ED25519.PUB",
        "environment.py",
        "src/config.json",
        "docs/keys.md",
        "known_hosts",
        "kube/config",
        "",
    ],
)
def test_ordinary_files_are_not_secrets(path: str) -> None:
    assert not is_secret_path(path)


def test_the_given_or_the_resolved_path_decides() -> None:
    assert is_secret_path("link-to-settings", ".env")


def test_known_key_formats_and_configured_values_are_redacted() -> None:
    text = (
        "k=sk-proj-abcdefghijklmnopqrstuvwxyz123456\n"
        "AKIAIOSFODNN7EXAMPLE\n"
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n"
        "my-configured-key-123\n"
        "DB_PASSWORD=hunter2hunter2\n"
        "https://bob:pw1234@example.com/x\n"
        "token = tokenizer.next()\n"
    )
    scanned = scan_text(text, ["my-configured-key-123", None, "abc"])
    for leaked in (
        "sk-proj-abc",
        "AKIAIOSFODNN7",
        "ghp_abc",
        "MHcCAQEE",
        "my-configured",
        "hunter2",
        "pw1234",
    ):
        assert leaked not in scanned.text
    assert "DB_PASSWORD=[redacted secret assignment]" in scanned.text
    assert "https://bob:[redacted URL password]@example.com/x" in scanned.text
    assert "token = tokenizer.next()" in scanned.text  # ordinary code is left alone
    assert scanned.count == 7 and "OpenAI key" in scanned.kinds


def test_redaction_is_idempotent() -> None:
    redactor = Redactor.of(["sk-test"])
    once = redactor.redact("key sk-test and sk-" + "x" * 30)
    assert redactor.redact(once) == once


@pytest.mark.parametrize(
    ("command", "named"),
    [
        ("cat .env", [".env"]),
        ("source .envrc && make", [".envrc"]),
        ("grep KEY ~/.aws/credentials", ["~/.aws/credentials"]),
        ("python -c 'print(open(\".ENV\").read())'", [".ENV"]),
        ("cp secrets.yaml /tmp/x", ["secrets.yaml"]),
        ("ls -la", []),
        ("make test", []),
        ("cat .env.example", []),
    ],
)
def test_commands_that_name_secrets_files(command: str, named: list[str]) -> None:
    assert [n for n in command_reads_secrets(command) if n in named or not named] == named


def test_the_command_environment_drops_keys_and_keeps_the_rest() -> None:
    base = {
        "PATH": "/usr/bin",
        "HOME": "/home/me",
        "LC_ALL": "C",
        "OPENAI_API_KEY": "sk-env",
        "GITHUB_TOKEN": "ghp_x",
        "MY_SECRET_THING": "x",
        "DB_PASSWORD": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
        "COPY": "prefix-sk-configured-suffix",
        "OPENAI_BASE_URL": "https://user:pass@proxy.example/v1",
        "JAVA_HOME": "/opt/jdk",
    }
    env = command_env(base, ["sk-configured"], {"PAGER": "cat"})
    assert env == {
        "PATH": "/usr/bin",
        "HOME": "/home/me",
        "LC_ALL": "C",
        "OPENAI_BASE_URL": "https://proxy.example/v1",
        "JAVA_HOME": "/opt/jdk",
        "PAGER": "cat",
    }


async def test_git_tools_leave_secrets_files_out(run: RunTool, workspace: Path) -> None:
    git(workspace, "init", "-q")
    (workspace / "a.txt").write_text("a\n")
    (workspace / ".env").write_text("K=zq7-first\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / ".ENV").write_text("S=zq7-second\n")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "one")
    (workspace / ".env").write_text("K=zq7-changed\n")
    (workspace / "a.txt").write_text("b\n")
    diff = await run("git_diff")
    assert "+b" in diff and "zq7" not in diff
    git(workspace, "commit", "-qam", "two")
    (workspace / ".env").write_text("K=zq7-third\n")
    git(workspace, "commit", "-qam", "three: only the env")
    shown = await run("git_show", ref="HEAD")
    assert "three: only the env" in shown and "zq7" not in shown and "secrets files" in shown
    assert "zq7" not in await run("git_show", ref="HEAD~2")
    for call in (
        run("git_show", ref="HEAD:.env"),
        run("git_show", ref="HEAD:sub/.ENV"),
        run("git_blame", path=".env"),
        run("git_diff", path="sub/.ENV"),
    ):
        with pytest.raises(ToolError, match="is a secrets file; Shiro never sends its contents"):
            await call
    assert await run("git_show", ref="HEAD:a.txt") == "b"
