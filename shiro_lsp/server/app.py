"""The composition root: make the server and let each feature module register its methods.

Feature modules import only ``rpc`` (the server class and its helpers) and ``protocol``; nothing
imports this module but the front door (``__main__``).
"""

from __future__ import annotations

from shiro_lsp.server import (
    changes,
    chat,
    code_actions,
    history,
    lifecycle,
    mcp,
    memory,
    models,
    notes,
    sessions,
    todos,
)
from shiro_lsp.server.rpc import ShiroServer, parse, plain_dict_converter, request

__all__ = ["FEATURES", "ShiroServer", "create_server", "parse", "plain_dict_converter", "request"]

FEATURES = (lifecycle, memory, todos, history, sessions, chat, code_actions, notes, changes, models, mcp)
"""Each has ``register(server)``; the order is the order methods are registered in."""


def create_server() -> ShiroServer:
    server = ShiroServer()
    for feature in FEATURES:
        feature.register(server)
    return server
