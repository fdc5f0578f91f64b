"""Project memory, the task list, history and "Remember this" through a real client over stdio."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from chat_helpers import eventually
from lsp_client import ShiroClient
from shiro_lsp.state.paths import project_key


def memory_file(home: Path, workspace: Path) -> Path:
    return home / "memory" / f"{project_key(str(workspace))}.json"


async def test_remember_recall_forget_round_trip(client: ShiroClient, home: Path, workspace: Path) -> None:
    stored = await client.call(
        "shiro/memory/remember", {"kind": "gotcha", "text": "  the migration runs first "}
    )
    assert stored["text"] == "Remembered as gotcha (1 stored): the migration runs first"
    assert stored["duplicate"] is False and stored["entry"]["kind"] == "gotcha"
    assert set(stored["entry"]) == {"id", "kind", "text", "createdAt", "hits"}

    again = await client.call("shiro/memory/remember", {"kind": "fact", "text": "the migration runs first"})
    assert again == {"text": "Already recorded: the migration runs first", "duplicate": True, "entry": None}

    recalled = await client.call("shiro/memory/recall", {"query": "Migration FIRST"})
    assert recalled["text"] == "(gotcha) the migration runs first"
    assert recalled["entries"][0]["hits"] == 1

    on_disk = json.loads(memory_file(home, workspace).read_text())
    assert [e["text"] for e in on_disk] == ["the migration runs first"]

    listing = await client.call("shiro/memory/list")
    assert listing["text"] == "(gotcha) the migration runs first  [recalled 1x]"

    forgot = await client.call("shiro/memory/forget", {"text": "migration"})
    assert forgot == {"removed": 1, "text": "Forgot 1 memory."}
    assert (await client.call("shiro/memory/list"))["text"] == "nothing remembered about this project yet"


@pytest.mark.parametrize(
    ("method", "params", "expected"),
    [
        ("shiro/memory/remember", {"kind": "opinion", "text": "x"}, "kind"),
        ("shiro/memory/remember", {"kind": "fact"}, "text: Field required"),
        ("shiro/memory/remember", {"kind": "fact", "text": 42}, "text: Input should be a valid string"),
        ("shiro/memory/remember", {"kind": "fact", "text": ""}, "text"),
        ("shiro/memory/recall", {"query": ["a"]}, "query"),
        ("shiro/memory/forget", {}, "text: Field required"),
        ("shiro/todos/update", {"todos": [{"content": "a", "status": "finished"}]}, "status"),
        ("shiro/todos/update", {"todos": "a"}, "todos"),
    ],
)
async def test_bad_params_are_invalid_params_errors_and_the_server_keeps_serving(
    client: ShiroClient, method: str, params: dict[str, object], expected: str
) -> None:
    with pytest.raises(JsonRpcException) as caught:
        await client.call(method, params)
    assert caught.value.code == -32602
    assert method in caught.value.message and expected in caught.value.message
    assert (await client.call("shiro/memory/list"))["entries"] == []


async def test_forget_by_id_removes_exactly_that_entry(client: ShiroClient) -> None:
    await client.call("shiro/memory/remember", {"kind": "command", "text": "use pytest"})
    await client.call(
        "shiro/memory/remember", {"kind": "command", "text": "use pytest -q for the unit tests"}
    )
    entries = (await client.call("shiro/memory/list"))["entries"]
    short = next(e for e in entries if e["text"] == "use pytest")
    forgot = await client.call("shiro/memory/forget", {"id": short["id"]})
    assert forgot == {"removed": 1, "text": "Forgot 1 memory."}
    left = (await client.call("shiro/memory/list"))["entries"]
    assert [e["text"] for e in left] == ["use pytest -q for the unit tests"]
    again = await client.call("shiro/memory/forget", {"id": short["id"]})
    assert again["removed"] == 0 and short["id"] in again["text"]
    assert len((await client.call("shiro/memory/list"))["entries"]) == 1


async def test_empty_forget_is_refused_not_a_wipe(client: ShiroClient) -> None:
    await client.call("shiro/memory/remember", {"kind": "fact", "text": "precious"})
    with pytest.raises(JsonRpcException) as caught:
        await client.call("shiro/memory/forget", {"text": "   "})
    assert caught.value.code == -32602 and "empty" in caught.value.message
    assert len((await client.call("shiro/memory/list"))["entries"]) == 1


async def test_a_one_megabyte_text_is_cut_to_the_cap(client: ShiroClient) -> None:
    result = await client.call("shiro/memory/remember", {"kind": "fact", "text": "z" * 1_000_000})
    assert len(result["entry"]["text"]) == 400 and "cut to 400 characters" in result["text"]


async def test_corrupt_store_is_quarantined_and_reported(
    client: ShiroClient, home: Path, workspace: Path
) -> None:
    path = memory_file(home, workspace)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"[\xff\xfe not utf-8")
    result = await client.call("shiro/memory/remember", {"kind": "fact", "text": "still works"})
    assert result["text"].startswith("Remembered as fact (1 stored)")
    (aside,) = path.parent.glob("*.corrupt-*")
    assert aside.read_bytes() == b"[\xff\xfe not utf-8"
    await eventually(lambda: bool(client.messages))
    assert any("UTF-8" in m.message and aside.name in m.message for m in client.messages)


async def test_store_path_that_is_a_directory_is_quarantined(
    client: ShiroClient, home: Path, workspace: Path
) -> None:
    path = memory_file(home, workspace)
    path.mkdir(parents=True)
    listing = await client.call("shiro/memory/list")
    assert listing["entries"] == []
    assert list(path.parent.glob("*.corrupt-*"))


async def test_todos_update_notifies_and_renders(client: ShiroClient) -> None:
    empty = await client.call("shiro/todos")
    assert empty == {
        "todos": [],
        "progress": {"done": 0, "total": 0, "blocked": 0, "current": None},
        "rendered": "",
    }
    todos = [
        {"content": "read the code", "status": "done"},
        {"content": "fix the bug", "status": "in_progress"},
        {"content": "ship", "status": "blocked", "note": "no credentials"},
        {"content": "write notes", "status": "pending"},
    ]
    payload = await client.call("shiro/todos/update", {"todos": todos})
    assert payload["progress"] == {"done": 1, "total": 4, "blocked": 1, "current": "fix the bug"}
    assert payload["rendered"].splitlines()[0] == "tasks " + "#" * 10 + "." * 30 + " 1/4  1 blocked"
    assert payload["rendered"].splitlines()[3] == "[!] ship  (no credentials)"
    assert client.notifications["shiro/todos/changed"][-1] == payload
    assert await client.call("shiro/todos") == payload


async def test_history_reads_this_workspace(client: ShiroClient, home: Path, workspace: Path) -> None:
    path = home / "history" / f"{project_key(str(workspace))}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(["first", "second"]))
    assert await client.call("shiro/history") == {"prompts": ["first", "second"]}


async def open_document(client: ShiroClient, workspace: Path, text: str) -> str:
    uri = (workspace / "notes.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    return uri


def span(start: tuple[int, int], end: tuple[int, int]) -> types.Range:
    return types.Range(types.Position(*start), types.Position(*end))


async def test_remember_this_code_action_on_a_selection(
    client: ShiroClient, workspace: Path, home: Path
) -> None:
    uri = await open_document(client, workspace, "x = 1\n# run the seed\n#   after migrations\n")
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=span((1, 2), (2, 20)),
        context=types.CodeActionContext(diagnostics=[]),
    )
    actions = await client.text_document_code_action_async(params)
    assert actions is not None and len(actions) == 1
    action = actions[0]
    assert isinstance(action, types.CodeAction) and action.title == "Shiro: Remember this"
    assert action.command is not None and action.command.command == "shiro.rememberSelection"
    (argument,) = action.command.arguments or []
    assert argument["text"] == "run the seed\n#   after migrations"
    assert argument["uri"] == uri and argument["range"]["end"] == {"line": 2, "character": 20}

    reply = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="shiro.remember", arguments=[{"kind": "command", "text": argument["text"]}]
        )
    )
    assert reply == "Remembered as command (1 stored): run the seed # after migrations"


async def test_no_code_action_on_an_empty_selection(client: ShiroClient, workspace: Path) -> None:
    uri = await open_document(client, workspace, "abc\n")
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=span((0, 1), (0, 1)),
        context=types.CodeActionContext(diagnostics=[]),
    )
    assert not await client.text_document_code_action_async(params)


async def test_remember_command_with_bad_arguments_is_a_clear_error(client: ShiroClient) -> None:
    with pytest.raises(JsonRpcException) as caught:
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="shiro.remember", arguments=[{"kind": "rumour", "text": "x"}])
        )
    assert caught.value.code == -32602 and "kind" in caught.value.message
