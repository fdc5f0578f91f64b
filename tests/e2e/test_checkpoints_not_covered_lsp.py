"""Restore never deletes or truncates a file it has no recorded bytes for (issue 20, "Checkpoints").

Through the real server over stdio, with bash commands the scripted model asks for (real bash in the
sandbox) in a plain folder: a secrets file a command overwrote and a file over the scan's size limit
are "not covered" in the turn's changes and at restore, and left as they are; a file the user saved
in the editor while a command ran is the user's, not the turn's. A file that truly did not exist
before the turn is still removed by restore, and a recorded one is still put back byte for byte.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from lsprotocol import types
from test_checkpoints_lsp import init_options, permissions, tool_events, turn

from chat_helpers import eventually
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from lsp_client import ShiroClient

pytest_plugins = ["fakes.fixtures"]
__all__ = ["init_options", "permissions"]  # fixtures

BIG_LINE = b"a line of a large generated file, long enough to add up quickly\n"


async def restore_code(client: ShiroClient) -> dict[str, object]:
    (checkpoint, *_) = (await client.call("shiro/checkpoint/list", {}))["checkpoints"]
    result: dict[str, object] = await client.call(
        "shiro/checkpoint/restore", {"id": checkpoint["id"], "mode": "code"}
    )
    return result


@pytest.mark.parametrize("ignored", [False, True], ids=["seen", "git-ignored"])
async def test_a_secrets_file_a_command_overwrote_is_put_back_by_restore_and_never_shown(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path, ignored: bool
) -> None:
    if ignored:  # the usual .env: the scan never looks at it, the command names it
        (workspace / ".gitignore").write_text(".env\n")
    (workspace / ".env").write_text("API_KEY=the-real-key\n")
    (workspace / ".env.example").write_text("API_KEY=\n")
    client.decisions = ["once"]  # a command touching a secrets file asks, even under bash: allow
    result = await turn(
        client,
        fake,
        "set up the env",
        ToolCall("bash", {"command": "cp .env.example .env && echo made > made.txt"}),
    )
    (card,) = tool_events(client, result["taskId"], "tool-result")
    card_rows = {f["path"]: f for f in card["files"]}
    assert card_rows[".env"]["status"] == "modified" and "notCovered" not in card_rows[".env"]
    assert "the-real-key" not in card["output"] and "the-real-key" not in str(card.get("diff"))
    rows = {f["path"]: f for f in (await client.call("shiro/changes", {}))["files"]}
    assert rows[".env"]["status"] == "modified" and "notCovered" not in rows[".env"]
    assert rows["made.txt"]["status"] == "added" and "notCovered" not in rows["made.txt"]
    diff = await client.call("shiro/changes/diff", {"path": ".env"})
    assert "API_KEY" not in diff["before"] + diff["after"] and diff["hunks"] == []  # kept, never shown

    restored = await restore_code(client)
    assert restored["restored"] == [".env", "made.txt"] and restored["notCovered"] == []
    assert (workspace / ".env").read_text() == "API_KEY=the-real-key\n"  # the user's keys are back
    assert not (workspace / "made.txt").exists()  # truly new in the turn: still removed
    kept = [p for p in (home / "checkpoints").rglob("*") if p.is_file() and b"the-real-key" in p.read_bytes()]
    assert kept, "the earlier .env is kept in the checkpoint store"
    for blob in kept:  # owner-only, in owner-only folders, and only as a blob
        assert blob.stat().st_mode & 0o777 == 0o600 and "blobs" in blob.parts
        assert (home / "checkpoints" / "blobs").stat().st_mode & 0o777 == 0o700
        assert blob.parent.stat().st_mode & 0o777 == 0o700
    logs = [p for p in home.rglob("*.log")]
    assert all(b"the-real-key" not in p.read_bytes() for p in logs)


@pytest.mark.parametrize("repository", [False, True], ids=["gitignore-only", "git-repository"])
async def test_an_ignored_secrets_file_a_script_overwrote_is_put_back_though_the_command_never_named_it(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path, home: Path, repository: bool
) -> None:
    if repository:
        subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / ".gitignore").write_text(".env\n")
    (workspace / ".env").write_text("TOKEN=users-private-value\n")
    (workspace / ".env.example").write_text("TOKEN=\n")
    (workspace / "prepare.sh").write_text("cp .env.example .env\n")

    untouched = await turn(client, fake, "list", ToolCall("bash", {"command": "echo listed > listing.txt"}))
    (card,) = tool_events(client, untouched["taskId"], "tool-result")
    assert [f["path"] for f in card["files"]] == ["listing.txt"]  # the unchanged .env adds no row
    (first,) = (await client.call("shiro/checkpoint/list", {}))["checkpoints"]
    assert ".env" not in str(first)
    await turn(client, fake, "look", ToolCall("bash", {"command": "true"}))
    assert (await client.call("shiro/checkpoint/list", {}))["checkpoints"] == [first]  # nothing to keep

    result = await turn(client, fake, "prepare", ToolCall("bash", {"command": "sh prepare.sh"}))
    assert (workspace / ".env").read_text() == "TOKEN=\n"  # the script did overwrite it
    (card,) = tool_events(client, result["taskId"], "tool-result")
    assert {f["path"]: f["status"] for f in card["files"]} == {".env": "modified"}
    assert "users-private-value" not in card["output"] + str(card.get("diff"))
    diff = await client.call("shiro/changes/diff", {"path": ".env"})
    assert "TOKEN" not in diff["before"] + diff["after"] and diff["hunks"] == []

    restored = await restore_code(client)
    assert restored["restored"] == [".env"] and restored["notCovered"] == []
    assert (workspace / ".env").read_text() == "TOKEN=users-private-value\n"
    assert all(b"users-private-value" not in p.read_bytes() for p in home.rglob("*.log"))


async def test_an_append_to_a_file_over_the_size_limit_is_not_covered_and_restore_leaves_it(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    big = BIG_LINE * (9 * 1024 * 1024 // len(BIG_LINE))  # 9 MB, over the scan's 8 MB per file
    (workspace / "big.txt").write_bytes(big)
    small = bytes(range(256)) * 4
    (workspace / "small.bin").write_bytes(small)
    result = await turn(
        client,
        fake,
        "append",
        ToolCall("bash", {"command": "echo one more >> big.txt && printf 'tail' >> small.bin"}),
    )
    (card,) = tool_events(client, result["taskId"], "tool-result")
    assert {f["path"]: f["status"] for f in card["files"]} == {"big.txt": "modified", "small.bin": "modified"}
    rows = {f["path"]: f for f in (await client.call("shiro/changes", {}))["files"]}
    assert rows["big.txt"]["status"] == "modified" and "not recorded" in rows["big.txt"]["notCovered"]
    assert "notCovered" not in rows["small.bin"]

    restored = await restore_code(client)
    assert restored["restored"] == ["small.bin"] and restored["notCovered"] == ["big.txt"]
    assert (workspace / "big.txt").read_bytes() == big + b"one more\n"  # left as it is
    assert (workspace / "small.bin").read_bytes() == small  # recorded: back byte for byte


async def test_a_file_the_user_saved_while_a_command_ran_is_theirs(
    client: ShiroClient, fake: FakeOpenAI, workspace: Path
) -> None:
    user_file = workspace / "notes.md"
    user_file.write_text("original\n")
    command = "echo agent > agent.txt && while [ ! -e go ]; do sleep 0.05; done"
    fake.script += [Step(ToolCall("bash", {"command": command})), Step(Text("done"))]
    chat = asyncio.create_task(client.call("shiro/chat", {"text": "work while I edit"}))
    await eventually(lambda: (workspace / "agent.txt").exists())

    uri = user_file.as_uri()
    item = types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text="original\n")
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="the user's version\n")],
        )
    )
    user_file.write_text("the user's version\n")  # the editor writes the file, then says so
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await client.call("shiro/checkpoint/list", {})  # answered after the notifications before it
    (workspace / "go").write_text("")
    assert (await chat)["stopReason"] == "done"

    rows = {f["path"]: f for f in (await client.call("shiro/changes", {}))["files"]}
    assert "saved by you" in rows["notes.md"]["notCovered"]
    assert (await client.call("shiro/changes/diff", {"path": "notes.md"}))["hunks"] == []
    for hunks in (None, [0]):  # the file, or a hunk of it
        undone = await client.call("shiro/changes/undo", {"path": "notes.md", "hunks": hunks})
        assert undone["undone"] is False and "saved by you" in undone["conflict"]
    assert user_file.read_text() == "the user's version\n"

    restored = await restore_code(client)
    assert "agent.txt" in restored["restored"] and restored["notCovered"] == ["notes.md"]
    assert user_file.read_text() == "the user's version\n"
    assert not (workspace / "agent.txt").exists()
