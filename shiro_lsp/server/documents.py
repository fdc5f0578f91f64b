"""Document text for LSP features: the client's open buffer, else a regular file read with a cap;
and the user's saves, which a turn's checkpoint must not take for its own changes.

pygls' ``workspace.get_text_document`` reads a file that is not open straight from disk on the
event loop: a folder or a missing file raises, and a FIFO blocks the whole server. Here a file is
read only if it is a regular file no larger than ``MAX_DOCUMENT_BYTES``, in a thread, opened
non-blocking so a FIFO cannot stall the open itself.
"""

from __future__ import annotations

import asyncio
import os
import stat
from urllib.parse import unquote

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument, Workspace

from shiro_lsp.server.rpc import ShiroServer

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024


def read_regular_file(path: str, limit: int = MAX_DOCUMENT_BYTES) -> str | None:
    """The text of a regular file of at most ``limit`` bytes, or None (not there, not a file, too big)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > limit:
        return None
    return data.decode("utf-8", errors="replace")


async def text_document(workspace: Workspace, uri: str) -> TextDocument | None:
    """The open buffer for ``uri``, else the file on disk if it can be read safely, else None."""
    document: TextDocument | None = workspace.text_documents.get(unquote(uri))
    if document is not None:
        return document
    path = to_fs_path(uri)
    if not path:
        return None
    source = await asyncio.to_thread(read_regular_file, path)
    return None if source is None else TextDocument(uri, source=source)


def register(server: ShiroServer) -> None:
    """Before ``initialize``: the feature makes the reply ask the editor for ``didSave``."""

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def on_saved(ls: ShiroServer, params: types.DidSaveTextDocumentParams) -> None:
        """The user saved a file: while a turn runs, its change is theirs, not the turn's."""
        path = to_fs_path(params.text_document.uri)
        if not path or not ls.started:
            return
        for shiro in ls.folders.services():
            shiro.checkpoints.saved_by_user(path)
