"""Sessions (spec §3): one JSON file per session, a SQLite index, and the live session.

* ``record``: ``SessionRecord``, the file format of the reference (§3.1), camelCase on disk; ids.
* ``files``: the durable atomic write of a session file.
* ``index``: ``SessionSummary``, what the ``sessions`` table of ``shiro.db`` knows.
* ``store``: ``SessionStore`` writes records atomically and keeps the index in step, so listing
  never parses session files.
* ``live``: ``LiveSession`` is what the turn engine mutates; every mutation calls ``on_change``.
* ``manager``: ``SessionManager`` owns the live session and its autosave: new, clear, resume,
  save, list, search, rename, export, branch, delete.
* ``search``: full-text search over message text (FTS5), indexed lazily.
* ``export``: JSON and Markdown export.

Messages are treated as immutable once appended: the autosave snapshots the list (not the
dicts) on the event loop and encodes it in a thread. To change a message, ``replace`` the list.
"""

from shiro_lsp.state.sessions.export import ExportFormat, export_markdown, export_text
from shiro_lsp.state.sessions.files import WRITE_BATCH_BYTES, FileSignature, write_chunks_durable
from shiro_lsp.state.sessions.index import COLUMNS, UPSERT, SessionSummary
from shiro_lsp.state.sessions.live import LiveSession
from shiro_lsp.state.sessions.manager import (
    AUTOSAVE_DELAY_S,
    EMPTY_REASON,
    NewOutcome,
    SaveOutcome,
    SessionListener,
    SessionManager,
    check_title,
)
from shiro_lsp.state.sessions.record import (
    ID_PATTERN,
    ROLES,
    MessageCache,
    SessionFormatError,
    SessionRecord,
    check_id,
    decode_record,
    encode_record,
    new_session_id,
    now_iso,
)
from shiro_lsp.state.sessions.search import SearchHit
from shiro_lsp.state.sessions.store import (
    DEFAULT_LIST_LIMIT,
    DIR_SIGNATURE_KEY,
    SETTLED_AFTER_NS,
    SessionStore,
)

__all__ = [
    "AUTOSAVE_DELAY_S",
    "COLUMNS",
    "DEFAULT_LIST_LIMIT",
    "DIR_SIGNATURE_KEY",
    "EMPTY_REASON",
    "ID_PATTERN",
    "ROLES",
    "SETTLED_AFTER_NS",
    "UPSERT",
    "WRITE_BATCH_BYTES",
    "ExportFormat",
    "FileSignature",
    "LiveSession",
    "MessageCache",
    "NewOutcome",
    "SaveOutcome",
    "SearchHit",
    "SessionFormatError",
    "SessionListener",
    "SessionManager",
    "SessionRecord",
    "SessionStore",
    "SessionSummary",
    "check_id",
    "check_title",
    "decode_record",
    "encode_record",
    "export_markdown",
    "export_text",
    "new_session_id",
    "now_iso",
    "write_chunks_durable",
]
