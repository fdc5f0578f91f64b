"""Shiro's JSON-RPC transport: where the server overrides pygls internals.

Everything here leans on private pygls code, so pygls is pinned to the minor line these overrides
were written for (``pygls~=2.1.1`` in pyproject.toml). An upgrade is a deliberate act: read the
hooks below in the new pygls, then run ``tests/unit/server/test_rpc_edge.py`` and
``tests/unit/server/test_transport.py``, which are the gate.

Private ``JsonRPCProtocol`` / ``LanguageServerProtocol`` hooks overridden:

* ``_send_data`` (transport.py): outgoing messages go to a writer thread or a direct write;
* ``_send_handler_result`` (edge.py): every request gets an answer, errors without Python text;
* ``_handle_cancel_notification`` (edge.py): a cancelled request is answered ``-32800``;
* ``structure_message`` (edge.py, public but its failure modes are not): params that do not
  structure become ``-32602`` instead of a dropped request.

Private attributes and methods used: ``_converter``, ``_request_futures``, ``_send_response``,
``_serialize_message``, ``_include_headers``; and ``JsonRPCServer.start_io`` is replaced by
:func:`edge.serve` reading frames with :class:`edge.FrameReader` (pygls reads leniently and its
``object_hook`` parse turns look-alike objects inside params into messages).
"""
