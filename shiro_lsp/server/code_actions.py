"""The "Shiro: Remember this" code action and the `shiro.remember` command behind it.

Both are part of the ``initialize`` reply's capabilities, so they are registered before it, with
the server itself (``app``): this module loads the protocol models only when it handles a request.
"""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from shiro_lsp.errors import INVALID_PARAMS, ShiroError
from shiro_lsp.server.documents import text_document
from shiro_lsp.server.rpc import ShiroServer, as_rpc_error, dump, parse

REMEMBER_COMMAND = "shiro.remember"
REMEMBER_SELECTION_COMMAND = "shiro.rememberSelection"


def register(server: ShiroServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.Empty], resolve_provider=False),
    )
    async def code_actions(ls: ShiroServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        from shiro_lsp.server import protocol as p

        text = await selected_text(ls, params)
        if not text or not text.strip():
            return None
        argument = p.RememberSelectionArgs(
            text=text, uri=params.text_document.uri, range=range_json(params.range)
        )
        command = types.Command(
            title="Shiro: Remember this", command=REMEMBER_SELECTION_COMMAND, arguments=[dump(argument)]
        )
        return [
            types.CodeAction(title="Shiro: Remember this", kind=types.CodeActionKind.Empty, command=command)
        ]

    @server.command(REMEMBER_COMMAND)
    async def remember_command(ls: ShiroServer, *arguments: Any) -> str:
        if len(arguments) != 1:
            raise JsonRpcException(
                message=f"{REMEMBER_COMMAND} takes one argument {{kind, text}}, got {len(arguments)}",
                code=INVALID_PARAMS,
            )
        from shiro_lsp.server import protocol as p

        args = parse(p.RememberCommandArgs, arguments[0], REMEMBER_COMMAND)
        try:
            result = await asyncio.to_thread(ls.shiro.remember_selection, args.kind, args.text)
        except ShiroError as error:
            raise as_rpc_error(error) from None
        return result.text


async def selected_text(ls: ShiroServer, params: types.CodeActionParams) -> str | None:
    """The selected text, from the open buffer or a regular file (never a folder, FIFO or huge file)."""
    document = await text_document(ls.workspace, params.text_document.uri)
    if document is None:
        return None
    start = document.offset_at_position(params.range.start)
    end = document.offset_at_position(params.range.end)
    return str(document.source[start:end])


def range_json(selection: types.Range) -> dict[str, Any]:
    def position(pos: types.Position) -> dict[str, int]:
        return {"line": pos.line, "character": pos.character}

    return {"start": position(selection.start), "end": position(selection.end)}
