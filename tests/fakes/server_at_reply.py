"""The real server (``python -m shiro_lsp``), with two test hooks set by the environment:

- ``SHIRO_TEST_MODULES_FILE``: when the ``initialize`` reply is queued for sending, the modules
  loaded at that moment are written there as JSON (what the editor waited for);
- ``SHIRO_TEST_BROKEN_MODULE``: that module cannot be imported, as in a broken install.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from lsprotocol import types

from shiro_lsp.server.jsonrpc.transport import ThreadedWriterProtocol


def record_modules_at_reply(path: str) -> None:
    send = ThreadedWriterProtocol._send_data

    def send_data(self: ThreadedWriterProtocol, data: Any) -> None:
        if isinstance(getattr(data, "result", None), types.InitializeResult):
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(sorted(sys.modules), handle)
        send(self, data)

    ThreadedWriterProtocol._send_data = send_data  # type: ignore[method-assign]


if __name__ == "__main__":
    if os.environ.get("SHIRO_TEST_MODULES_FILE"):
        record_modules_at_reply(os.environ["SHIRO_TEST_MODULES_FILE"])
    if os.environ.get("SHIRO_TEST_BROKEN_MODULE"):
        sys.modules[os.environ["SHIRO_TEST_BROKEN_MODULE"]] = None  # type: ignore[assignment]
    from shiro_lsp.__main__ import main

    raise SystemExit(main())
