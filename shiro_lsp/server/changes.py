"""`shiro/changes*` and `shiro/checkpoint/*`: thin handlers over the session's checkpoints."""

from __future__ import annotations

from shiro_lsp.errors import ShiroError
from shiro_lsp.server import protocol as p
from shiro_lsp.server.rpc import ShiroServer, request


def _not_yet(method: str) -> ShiroError:
    return ShiroError(f"{method} is not implemented yet in this server build.")


def register(server: ShiroServer) -> None:
    @request(server, "shiro/changes")
    async def changes(ls: ShiroServer, params: p.ChangesParams) -> p.ChangesResult:
        raise _not_yet("shiro/changes")

    @request(server, "shiro/changes/diff")
    async def diff(ls: ShiroServer, params: p.ChangesDiffParams) -> p.ChangesDiffResult:
        raise _not_yet("shiro/changes/diff")

    @request(server, "shiro/changes/undo")
    async def undo(ls: ShiroServer, params: p.ChangesUndoParams) -> p.ChangesUndoResult:
        raise _not_yet("shiro/changes/undo")

    @request(server, "shiro/changes/keep")
    async def keep(ls: ShiroServer, params: p.ChangesKeepParams) -> p.ChangesKeepResult:
        raise _not_yet("shiro/changes/keep")

    @request(server, "shiro/checkpoint/list")
    async def listing(ls: ShiroServer, params: p.Empty) -> p.CheckpointListResult:
        raise _not_yet("shiro/checkpoint/list")

    @request(server, "shiro/checkpoint/restore")
    async def restore(ls: ShiroServer, params: p.CheckpointRestoreParams) -> p.CheckpointRestoreResult:
        raise _not_yet("shiro/checkpoint/restore")
