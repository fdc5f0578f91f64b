"""How Shiro adapts to a model: the one surface ``agent/`` imports (an import-linter contract keeps
it so; ``adapt/`` never imports ``agent/``).

- ``prompts.py``: what a system prompt is built from, and the compact variant for small windows.
- ``formats/``: how a reply is read (``text_calls.py``: calls written as text; ``whole_file.py``:
  files written out whole; ``search_replace.py``: SEARCH/REPLACE blocks for long files).
- ``view.py``: what a small model is shown of its workspace with the user's message.
- ``repo_map.py``, ``context_builder.py``: a repository map and a budgeted context for small windows.
"""

from shiro_lsp.adapt.formats.search_replace import block_calls, has_edit_blocks
from shiro_lsp.adapt.formats.text_calls import (
    TEXT_ORIGIN_NOTE,
    WRITTEN_AS_KEY,
    TextCall,
    TextHold,
    ToolCallFormat,
    as_text_protocol,
    as_written,
    echoes_tool_output,
    is_call_shaped,
    listing_notice,
    parse_text_tool_calls,
    split_tagged_calls,
    text_call_notice,
    tool_outputs,
    tools_prompt,
    writes_a_result,
)
from shiro_lsp.adapt.formats.whole_file import (
    MAX_SHOWN_FILES,
    WITHHELD_WHEN_WRITING_OUT,
    WRITE_IT_OUT,
    Listing,
    file_listings,
    listing_call,
    without_code,
    without_listings,
    writes_literal_file,
)
from shiro_lsp.adapt.prompts import (
    PromptParts,
    build_compact_system_prompt,
    compact_spec,
    folder_lines,
    not_offered_error,
    offered_when_compact,
    with_blocks,
)
from shiro_lsp.adapt.view import (
    NOTHING_EDITED,
    VIEW_KEY,
    VIEW_NOTE_KEY,
    WorkspaceView,
    budget_for,
    edits_in_place,
    first_look_view,
    overview,
    with_changes,
    with_workspace_views,
    workspace_view,
)

__all__ = [
    "MAX_SHOWN_FILES",
    "NOTHING_EDITED",
    "TEXT_ORIGIN_NOTE",
    "VIEW_KEY",
    "VIEW_NOTE_KEY",
    "WITHHELD_WHEN_WRITING_OUT",
    "WRITE_IT_OUT",
    "WRITTEN_AS_KEY",
    "Listing",
    "PromptParts",
    "TextCall",
    "TextHold",
    "ToolCallFormat",
    "WorkspaceView",
    "as_text_protocol",
    "as_written",
    "block_calls",
    "budget_for",
    "build_compact_system_prompt",
    "compact_spec",
    "echoes_tool_output",
    "edits_in_place",
    "file_listings",
    "first_look_view",
    "folder_lines",
    "has_edit_blocks",
    "is_call_shaped",
    "listing_call",
    "listing_notice",
    "not_offered_error",
    "offered_when_compact",
    "overview",
    "parse_text_tool_calls",
    "split_tagged_calls",
    "text_call_notice",
    "tool_outputs",
    "tools_prompt",
    "with_blocks",
    "with_changes",
    "with_workspace_views",
    "without_code",
    "without_listings",
    "workspace_view",
    "writes_a_result",
    "writes_literal_file",
]
