"""Text document sync: a change to a document the server never got is ignored, not a server error."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from lsp_client import ShiroClient


def change(uri: str, version: int, text: str) -> types.DidChangeTextDocumentParams:
    return types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
    )


async def test_a_change_to_an_unknown_untitled_document_is_ignored(
    client: ShiroClient, workspace: Path
) -> None:
    client.text_document_did_change(change("untitled:Untitled-1", 2, "print('hi')\n"))
    uri = (workspace / "notes.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text="x = 1\n")
        )
    )
    client.text_document_did_change(change(uri, 2, "x = 1\n# run the seed\n"))
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(1, 2), types.Position(1, 14)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert actions is not None and len(actions) == 1  # the known document still got its change
    (action,) = actions
    assert isinstance(action, types.CodeAction) and action.command is not None
    assert (action.command.arguments or [{}])[0]["text"] == "run the seed"
    assert [m.message for m in client.messages if "Error in server" in m.message] == []
