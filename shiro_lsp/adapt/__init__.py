"""How Shiro adapts to a model: the one surface ``agent/`` imports (the import-linter contract
``adapt-surface`` keeps it so; ``adapt/`` never imports ``agent/``).

- ``profiles.py``: a profile per model class (prompt, tools, reply format, temperature, workspace
  view budget, reflections, hints) and ``choose_profile``.
- ``prompts.py``: what a system prompt is built from, and the compact variant for small windows.
- ``formats/``: how a reply is read (``native.py``; ``text_calls.py``: calls written as text;
  ``whole_file.py``: files written out whole; ``search_replace.py``: SEARCH/REPLACE blocks for long files).
- ``reflections/``: what sends the model back, in one loop with one budget and one notice.
- ``hints.py``: what a call's result tells the model besides the tool's output.
- ``view.py``: what a small model is shown of its workspace with the user's message.
- ``prose.py``: every rule that reads the user's prose, once each.
- ``repo_map.py``, ``context_builder.py``: a repository map and a budgeted context for small windows.
"""

from shiro_lsp.adapt.context_builder import is_test_path
from shiro_lsp.adapt.formats.base import Hold, ParsedReply, ReplyContext, ReplyFormat, TextCall
from shiro_lsp.adapt.formats.echoes import Shown
from shiro_lsp.adapt.formats.text_calls import TEXT_ORIGIN_NOTE, tools_prompt
from shiro_lsp.adapt.hints import CallHints
from shiro_lsp.adapt.profiles import COMPACT, FULL, PROFILES, Profile, choose_profile
from shiro_lsp.adapt.prompts import PromptParts, folder_lines, with_blocks
from shiro_lsp.adapt.prose import user_words
from shiro_lsp.adapt.reflections.base import (
    NOTICE,
    NUDGE_MARK_KEY,
    EndTurn,
    Reflector,
    Reply,
    RunCheck,
    SendBack,
    TurnFacts,
    nudge_message,
)
from shiro_lsp.adapt.reflections.commands import Checks
from shiro_lsp.adapt.view import (
    VIEW_KEY,
    VIEW_NOTE_KEY,
    WorkspaceView,
    first_look_view,
    with_workspace_views,
    workspace_view,
)
from shiro_lsp.config import ToolCallFormat

__all__ = [
    "COMPACT",
    "FULL",
    "NOTICE",
    "NUDGE_MARK_KEY",
    "PROFILES",
    "TEXT_ORIGIN_NOTE",
    "VIEW_KEY",
    "VIEW_NOTE_KEY",
    "CallHints",
    "Checks",
    "EndTurn",
    "Hold",
    "ParsedReply",
    "Profile",
    "PromptParts",
    "Reflector",
    "Reply",
    "ReplyContext",
    "ReplyFormat",
    "RunCheck",
    "SendBack",
    "Shown",
    "TextCall",
    "ToolCallFormat",
    "TurnFacts",
    "WorkspaceView",
    "choose_profile",
    "first_look_view",
    "folder_lines",
    "is_test_path",
    "nudge_message",
    "tools_prompt",
    "user_words",
    "with_blocks",
    "with_workspace_views",
    "workspace_view",
]
