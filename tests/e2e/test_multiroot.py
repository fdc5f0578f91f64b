"""Multi-root workspaces through the real server over stdio, against the scripted model.

The window has two folders, ``alpha`` and ``beta`` (siblings), and an ``outside`` folder next to
them that is no workspace folder. Every tool sees both folders (``beta/...`` from a session of
alpha); each session is bound to one folder, whose memory and session list are its own.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import client_capabilities

from chat_helpers import eventually, model_bodies, sent, system_prompt_of
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.fixtures import options
from lsp_client import CONFIG, ShiroClient

pytest_plugins = ["fakes.fixtures"]

ALLOW = {"write_file": "allow", "edit_file": "allow", "bash": "allow"}


@pytest.fixture
def alpha(tmp_path: Path) -> Path:
    path = tmp_path / "alpha"
    path.mkdir()
    (path / "a.txt").write_text("alpha says hello\n")
    return path


@pytest.fixture
def beta(tmp_path: Path) -> Path:
    path = tmp_path / "beta"
    path.mkdir()
    (path / "b.txt").write_text("beta line one\nbeta line two\n")
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    (path / "private.txt").write_text("OUTSIDE-CONTENT-7731\n")
    return path


@pytest.fixture
def folders(request: pytest.FixtureRequest, alpha: Path, beta: Path) -> list[Path]:
    """The window's folders at initialize (``alpha-only`` as an indirect param: just alpha)."""
    return [alpha] if getattr(request, "param", None) == "alpha-only" else [alpha, beta]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "state"


def folder(path: Path) -> types.WorkspaceFolder:
    return types.WorkspaceFolder(uri=path.as_uri(), name=path.name)


@pytest_lsp.fixture(config=CONFIG)
async def client(
    lsp_client: ShiroClient, folders: list[Path], home: Path, fake: FakeOpenAI
) -> AsyncIterator[ShiroClient]:
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            workspace_folders=[folder(f) for f in folders],
            root_uri=folders[0].as_uri(),
            initialization_options=options(home, fake, ALLOW, model="gpt-5", approvalTimeoutMs=5000),
        )
    )
    yield lsp_client
    await lsp_client.shutdown_session()


async def turn(
    client: ShiroClient, fake: FakeOpenAI, *calls: ToolCall, root: Path | None = None
) -> dict[str, Any]:
    fake.script += [Step(call) for call in calls] + [Step(Text("done"))]
    params: dict[str, Any] = {"text": "work"}
    if root is not None:
        params["root"] = str(root)
    result: dict[str, Any] = await client.call("shiro/chat", params)
    assert result["stopReason"] == "done", result
    return result


def outcomes(client: ShiroClient, task_id: str) -> list[tuple[str, str]]:
    """(kind, text) of each tool call's end: its result, its error or its refusal."""
    found = []
    for event in client.events(task_id):
        if event["type"] == "tool-result":
            found.append(("result", event["output"]))
        elif event["type"] == "tool-error":
            found.append(("error", event["error"]))
        elif event["type"] == "tool-denied":
            found.append(("denied", event.get("reason") or ""))
    return found


async def test_the_tools_read_and_edit_in_both_folders_and_the_prompt_names_them(
    client: ShiroClient, fake: FakeOpenAI, alpha: Path, beta: Path
) -> None:
    result = await turn(
        client,
        fake,
        ToolCall("read_file", {"path": "a.txt"}, "c1"),
        ToolCall("read_file", {"path": "beta/b.txt"}, "c2"),
        ToolCall("edit_file", {"path": "beta/b.txt", "oldString": "line two", "newString": "line 2"}, "c3"),
        ToolCall("write_file", {"path": f"{beta}/new.txt", "content": "made by shiro\n"}, "c4"),
        ToolCall("glob", {"pattern": "beta/*.txt"}, "c5"),
        ToolCall("grep", {"pattern": "beta line", "include": "beta/**"}, "c6"),
        ToolCall("bash", {"command": "pwd"}, "c7"),
    )
    read_a, read_b, edit, write, glob, grep, pwd = outcomes(client, result["taskId"])
    assert read_a[0] == "result" and "alpha says hello" in read_a[1]
    assert read_b[0] == "result" and "beta line two" in read_b[1]
    assert edit[0] == "result" and write[0] == "result"
    assert (beta / "b.txt").read_text() == "beta line one\nbeta line 2\n"
    assert (beta / "new.txt").read_text() == "made by shiro\n"
    assert not (alpha / "beta").exists()  # beta/... never means a folder inside alpha
    assert glob == ("result", "beta/b.txt\nbeta/new.txt")
    assert grep[0] == "result" and "beta/b.txt:1: beta line one" in grep[1]
    assert pwd[0] == "result" and pwd[1].strip().endswith(f"stdout:\n{alpha}")  # in the session's root

    prompt = system_prompt_of(model_bodies(fake)[0])
    assert "this session's root is folder alpha" in prompt and f"beta/ = {beta}" in prompt


async def test_escapes_between_and_out_of_the_folders_are_refused(
    client: ShiroClient, fake: FakeOpenAI, alpha: Path, beta: Path, outside: Path
) -> None:
    os.symlink(outside, alpha / "link-out")
    result = await turn(
        client,
        fake,
        ToolCall("read_file", {"path": "../beta/b.txt"}, "c1"),
        ToolCall("read_file", {"path": "../outside/private.txt"}, "c2"),
        ToolCall("read_file", {"path": str(outside / "private.txt")}, "c3"),
        ToolCall("read_file", {"path": "link-out/private.txt"}, "c4"),
        ToolCall("read_file", {"path": "beta/../outside/private.txt"}, "c5"),
        ToolCall("write_file", {"path": "beta/../../outside/private.txt", "content": "x"}, "c6"),
        ToolCall("write_file", {"path": "link-out/new.txt", "content": "x"}, "c7"),
        ToolCall("glob", {"pattern": f"{outside}/*.txt"}, "c8"),
    )
    ends = outcomes(client, result["taskId"])
    assert [kind for kind, _ in ends] == ["error"] * 8, ends
    assert "escapes workspace folder alpha" in ends[0][1] and "by its name" in ends[0][1]
    for _, text in ends[1:]:
        assert "escapes workspace" in text
    assert "OUTSIDE-CONTENT-7731" not in sent(fake)
    assert (outside / "private.txt").read_text() == "OUTSIDE-CONTENT-7731\n"
    assert sorted(p.name for p in outside.iterdir()) == ["private.txt"]
    assert (beta / "b.txt").read_text() == "beta line one\nbeta line two\n"


async def test_sessions_are_bound_to_their_folder_and_listed_per_folder(
    client: ShiroClient, fake: FakeOpenAI, alpha: Path, beta: Path
) -> None:
    first = await turn(client, fake, ToolCall("write_file", {"path": "from-a.txt", "content": "1\n"}))
    fresh = await client.call("shiro/session/new", {"root": beta.as_uri()})
    assert fresh["session"]["cwd"] == str(beta)
    assert fresh["previous"]["id"] == first["sessionId"]
    second = await turn(client, fake, ToolCall("write_file", {"path": "from-b.txt", "content": "2\n"}))
    assert (beta / "from-b.txt").exists() and not (alpha / "from-b.txt").exists()
    assert (alpha / "from-a.txt").exists()

    assert (await client.call("shiro/session/save", {}))["saved"] is True
    listed_b = (await client.call("shiro/session/list", {}))["sessions"]
    listed_a = (await client.call("shiro/session/list", {"root": str(alpha)}))["sessions"]
    assert [s["id"] for s in listed_b] == [second["sessionId"]]
    assert [(s["id"], s["cwd"]) for s in listed_a] == [(first["sessionId"], str(alpha))]
    everything = (await client.call("shiro/session/list", {"allWorkspaces": True}))["sessions"]
    assert {s["id"] for s in everything} == {first["sessionId"], second["sessionId"]}

    # Resuming alpha's session makes alpha the root again: relative paths land there.
    resumed = await client.call("shiro/session/resume", {"id": first["sessionId"]})
    assert resumed["session"]["cwd"] == str(alpha)
    assert (await client.call("shiro/session/current", {}))["id"] == first["sessionId"]
    third = await turn(client, fake, ToolCall("write_file", {"path": "again.txt", "content": "3\n"}))
    assert third["sessionId"] == first["sessionId"]
    assert (alpha / "again.txt").exists() and not (beta / "again.txt").exists()


async def test_clear_with_a_root_starts_over_in_that_folder(
    client: ShiroClient, fake: FakeOpenAI, alpha: Path, beta: Path
) -> None:
    first = await turn(client, fake, ToolCall("write_file", {"path": "from-a.txt", "content": "1\n"}))
    cleared = await client.call("shiro/session/clear", {"root": str(beta)})
    assert cleared["session"]["cwd"] == str(beta)
    assert cleared["previous"]["id"] == first["sessionId"]
    await turn(client, fake, ToolCall("write_file", {"path": "after-clear.txt", "content": "2\n"}))
    assert (beta / "after-clear.txt").exists() and not (alpha / "after-clear.txt").exists()
    # Without a root, /clear starts over in the live session's folder, as before.
    again = await client.call("shiro/session/clear", {})
    assert again["session"]["cwd"] == str(beta)
    listed_a = (await client.call("shiro/session/list", {"root": str(alpha)}))["sessions"]
    assert [s["id"] for s in listed_a] == [first["sessionId"]]  # the old session stays on disk, in alpha


async def test_a_chat_from_the_other_folders_editor_moves_only_an_empty_session(
    client: ShiroClient, fake: FakeOpenAI, alpha: Path, beta: Path
) -> None:
    first = await turn(
        client, fake, ToolCall("write_file", {"path": "where.txt", "content": "b\n"}), root=beta / "b.txt"
    )
    assert (beta / "where.txt").exists() and not (alpha / "where.txt").exists()
    assert (await client.call("shiro/session/current", {}))["cwd"] == str(beta)
    prompt = system_prompt_of(model_bodies(fake)[0])
    assert "this session's root is folder beta" in prompt and f"alpha/ = {alpha}" in prompt

    # The session has messages now: it stays bound to beta whatever editor is active.
    second = await turn(
        client, fake, ToolCall("write_file", {"path": "still.txt", "content": "b\n"}), root=alpha
    )
    assert second["sessionId"] == first["sessionId"]
    assert (beta / "still.txt").exists() and not (alpha / "still.txt").exists()

    with pytest.raises(JsonRpcException) as caught:
        await client.call("shiro/chat", {"text": "x", "root": "/nowhere/at/all"})
    assert caught.value.code == -32602
    assert "/nowhere/at/all is not in a workspace folder of this window" in caught.value.message


async def test_memory_is_separate_per_folder(client: ShiroClient, alpha: Path, beta: Path) -> None:
    await client.call("shiro/memory/remember", {"kind": "fact", "text": "alpha uses make"})
    await client.call("shiro/session/new", {"root": str(beta)})
    assert (await client.call("shiro/memory/list"))["entries"] == []
    await client.call("shiro/memory/remember", {"kind": "fact", "text": "beta uses npm"})
    assert [e["text"] for e in (await client.call("shiro/memory/list"))["entries"]] == ["beta uses npm"]
    await client.call("shiro/session/new", {"root": str(alpha)})
    assert [e["text"] for e in (await client.call("shiro/memory/list"))["entries"]] == ["alpha uses make"]
    history_b = await client.call("shiro/session/list", {"root": str(beta)})
    assert history_b["sessions"] == []  # nothing was said there: no session saved


@pytest.mark.parametrize("folders", [pytest.param("alpha-only", id="one-folder-at-start")], indirect=True)
async def test_a_folder_added_and_removed_at_runtime(
    client: ShiroClient, fake: FakeOpenAI, folders: list[Path], alpha: Path, beta: Path
) -> None:
    assert folders == [alpha]
    before = await turn(client, fake, ToolCall("read_file", {"path": "beta/b.txt"}))
    ((kind, text),) = outcomes(client, before["taskId"])
    assert kind == "error" and "No such file" in text  # one folder: beta/... is a path inside alpha
    assert "Workspace folders" not in system_prompt_of(model_bodies(fake)[0])

    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=[folder(beta)], removed=[])
        )
    )
    added = await turn(client, fake, ToolCall("read_file", {"path": "beta/b.txt"}))
    ((kind, text),) = outcomes(client, added["taskId"])
    assert kind == "result" and "beta line one" in text
    assert f"beta/ = {beta}" in system_prompt_of(model_bodies(fake)[-1])

    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=[], removed=[folder(beta)])
        )
    )
    removed = await turn(client, fake, ToolCall("read_file", {"path": str(beta / "b.txt")}))
    ((kind, text),) = outcomes(client, removed["taskId"])
    assert kind == "error" and "escapes workspace" in text
    assert "Workspace folders" not in system_prompt_of(model_bodies(fake)[-1])


async def test_an_edit_in_the_second_folder_is_undone(
    client: ShiroClient, fake: FakeOpenAI, alpha: Path, beta: Path
) -> None:
    (alpha / "beta").mkdir()
    (alpha / "beta" / "b.txt").write_text("alpha's own beta folder\n")
    await turn(
        client,
        fake,
        ToolCall("edit_file", {"path": "beta/b.txt", "oldString": "line one", "newString": "LINE ONE"}, "c1"),
        ToolCall("write_file", {"path": "./beta/b.txt", "content": "changed in alpha\n"}, "c2"),
    )
    assert (beta / "b.txt").read_text() == "beta LINE ONE\nbeta line two\n"
    assert (alpha / "beta" / "b.txt").read_text() == "changed in alpha\n"
    await eventually(lambda: bool(client.notifications["shiro/changes/changed"]))
    paths = sorted(f["path"] for f in (await client.call("shiro/changes", {}))["files"])
    assert paths == ["./beta/b.txt", "beta/b.txt"]

    diff = await client.call("shiro/changes/diff", {"path": "beta/b.txt"})
    assert "beta line one" in diff["before"] and "beta LINE ONE" in diff["after"]
    undone = await client.call("shiro/changes/undo", {"path": "beta/b.txt"})
    assert undone == {"path": "beta/b.txt", "undone": True, "conflict": None}
    assert (beta / "b.txt").read_text() == "beta line one\nbeta line two\n"
    assert (alpha / "beta" / "b.txt").read_text() == "changed in alpha\n"  # the other one is untouched
    assert (await client.call("shiro/changes/undo", {"path": "./beta/b.txt"}))["undone"] is True
    assert (alpha / "beta" / "b.txt").read_text() == "alpha's own beta folder\n"
