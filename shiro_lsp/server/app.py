"""The composition root: make the server and let each feature module register its methods.

Feature modules import only ``rpc`` (the server class and its helpers) and ``protocol``; nothing
imports this module but the front door (``__main__``).

The ``initialize`` reply needs only pygls, the edge, the code action and ``didSave`` (their
options are part of the reply's capabilities). The rest (pydantic and the protocol models, the
feature modules, the service and the agent layer, the window's workspace) is imported and made
right behind the reply, before the next message is read (``ShiroProtocol.after_reply``): the editor hears back sooner, and
every later request finds the server exactly as complete as before.
"""

from __future__ import annotations

import logging

from lsprotocol import types

from shiro_lsp.server import code_actions, documents
from shiro_lsp.server.rpc import ShiroServer, parse, plain_dict_converter, request

__all__ = ["ShiroServer", "create_server", "parse", "plain_dict_converter", "register_features", "request"]

log = logging.getLogger(__name__)


def create_server() -> ShiroServer:
    """A server that can answer ``initialize``; Shiro's own methods are registered right behind it."""
    server = ShiroServer()
    code_actions.register(server)
    documents.register(server)

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: ShiroServer, params: types.InitializeParams) -> None:
        ls.edge.after_reply(lambda: start(ls, params))

    return server


def register_features(server: ShiroServer) -> None:
    """Each feature module registers its methods, in this order (once per server)."""
    from shiro_lsp.server import (
        changes,
        chat,
        commands,
        history,
        images,
        lifecycle,
        mcp,
        memory,
        models,
        notes,
        sessions,
        todos,
    )

    if server.features_registered:
        return
    features = (lifecycle, memory, todos, history, sessions, chat, images, notes, changes, models, mcp)
    for feature in (*features, commands):
        feature.register(server)
    server.features_registered = True


def start(server: ShiroServer, params: types.InitializeParams) -> None:
    """Behind the ``initialize`` reply: Shiro's methods and the window's workspace. If they cannot
    be made (a broken install, state that cannot be read), each request answers why."""
    server.flush_outbox()  # the reply is written before the imports take the GIL
    try:
        register_features(server)
        from shiro_lsp.server import lifecycle

        lifecycle.start(server, params)
    except Exception as error:
        server.cannot_start(error)
    else:
        server.edge.unavailable = None
