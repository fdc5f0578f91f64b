"""Names vulture (`make lint`) takes for dead code that something outside Shiro's own calls uses.

Never executed: vulture only reads it. Each line names the caller. Decorated handlers (pygls,
MCP, pytest, pydantic) and common hook names are ignored in pyproject.toml's [tool.vulture].
"""

# ruff: noqa
# mypy: ignore-errors

_ = None

# asyncio reads these (shiro_lsp/__main__.py: the loop watch's debug settings)
_.extract_stack
_.slow_callback_duration
# sqlite3 reads it (state/db.py)
_.row_factory

# The ACP SDK calls the Agent protocol's methods, with these keyword arguments (acp/agent.py)
_.on_connect
_.authenticate
_.client_info
_.method_id

# pygls calls its protocol's overridden hooks (server/jsonrpc/, server/rpc.py)
_._handle_cancel_notification
_._send_handler_result
_.report_server_error

# The message model (spec §5.1) as TypedDicts: documentation and types for mypy, never built by name
_.Role
_.TextPart
_.ReasoningPart
_.ToolCallPart
_.ToolResultPart
_.ToolErrorPart
_.providerOptions
_.toolCallId
_.toolName

# Wire fields pydantic fills and dumps (server/protocol.py); the extension reads them
_.turn_additions
_.turn_deletions
_.preset_name
_.timeout_seconds

# A pydantic field of a test's input model (tests/unit/tools/test_tool_registry_facts.py)
_.labels

# state/memory.py's ProjectMemory.flush_hits: unused since the lazy hit counts flush on their own
# (timer, write, exit); left for the perf work on that module this round to keep or remove
_.flush_hits

# An event field only the wire reads (agent/events.py Failed → the "error" event's needsSetup; the VS Code
# panel shows its setup card for it)
_.needs_setup
_.syntaxError  # pyflakes' Reporter interface (agent/python_check.py)
_.flake  # pyflakes' Reporter interface (agent/python_check.py)
_.unexpectedError  # pyflakes' Reporter interface (agent/python_check.py)
_.readinto  # io.RawIOBase interface: BufferedReader reads through it (fs/reader.py _Capped)
