"""The ACP translation layer on its own: events, saved messages, approvals and prompts."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    AudioContentBlock,
    DeniedOutcome,
    EmbeddedResourceContentBlock,
    EnvVariable,
    FileEditToolCallContent,
    HttpHeader,
    HttpMcpServer,
    ImageContentBlock,
    McpServerStdio,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from shiro_lsp.acp.translate import (
    OUTPUT_TAIL,
    PromptImage,
    TurnTranslator,
    decision_of,
    mcp_entries,
    permission_request,
    prompt_images,
    prompt_text,
    replay,
    title_of,
)
from shiro_lsp.agent import events as ev
from shiro_lsp.agent.setup import ApprovalRequest
from shiro_lsp.checkpoints.rows import FilePreview

WS = Path("/work/project")


def test_a_call_written_as_text_starts_with_its_input() -> None:
    """No tool-start came first (a text tool call), so the client first hears of it complete."""
    [update] = TurnTranslator(WS).updates(ev.ToolCall("c1", "grep", {"pattern": "TODO"}))
    assert isinstance(update, ToolCallStart)
    assert (update.status, update.kind, update.title, update.raw_input) == (
        "in_progress",
        "search",
        "grep TODO",
        {"pattern": "TODO"},
    )


def test_live_output_keeps_the_tail_and_the_result_replaces_it() -> None:
    translator = TurnTranslator(WS)
    translator.updates(ev.ToolStart("b1", "bash"))
    translator.updates(ev.ToolOutput("b1", "x" * OUTPUT_TAIL))
    [live] = translator.updates(ev.ToolOutput("b1", "END"))
    assert isinstance(live, ToolCallProgress) and live.content is not None
    shown = live.content[0].content.text
    assert len(shown) == OUTPUT_TAIL and shown.endswith("END")
    [done] = translator.updates(ev.ToolResult("b1", "bash", "exit 0", diff="@@ -1 +1 @@\n-a\n+b"))
    assert done.status == "completed" and done.content is not None
    assert [c.content.text for c in done.content] == ["exit 0", "```diff\n@@ -1 +1 @@\n-a\n+b\n```"]


def test_notices_and_refusals_are_shown_in_words() -> None:
    translator = TurnTranslator(WS)
    [notice] = translator.updates(ev.Notice("stopped after 40 steps (the step limit)"))
    assert isinstance(notice, AgentMessageChunk) and "step limit" in notice.content.text
    [denied] = translator.updates(ev.ToolDenied("d1", "bash", "Refused: rm -rf is destructive."))
    assert denied.status == "failed" and "destructive" in denied.content[0].content.text
    assert translator.updates(ev.Done(1, 2, None)) == [] and translator.updates(ev.Failed("x")) == []


def test_a_delete_or_binary_preview_is_described_not_diffed() -> None:
    request = ApprovalRequest(
        "delete_file",
        {"path": "old.bin"},
        None,
        "delete_file",
        False,
        previews=[FilePreview(path="old.bin", before="binary, 3 bytes", after=None, binary=True)],
        call_id="del1",
    )
    update = permission_request(WS, request)
    assert update.tool_call_id == "del1" and update.kind == "delete" and update.content is not None
    assert not any(isinstance(c, FileEditToolCallContent) for c in update.content)
    assert update.content[0].content.text == "delete_file deletes old.bin"
    assert update.locations is not None and update.locations[0].path == "/work/project/old.bin"


def test_a_call_read_from_the_models_text_says_so_in_the_permission_request() -> None:
    request = ApprovalRequest("bash", {"command": "ls"}, None, "ls *", False, call_id="t1", origin="text")
    update = permission_request(WS, request)
    assert update.content is not None
    assert update.content[0].content.text.startswith("Read from the model's text")
    native = permission_request(WS, ApprovalRequest("bash", {"command": "ls"}, None, "ls *", False))
    assert native.content is None


def test_only_a_known_option_selected_allows() -> None:
    assert decision_of(AllowedOutcome(outcome="selected", option_id="once")).decision == "once"
    assert decision_of(AllowedOutcome(outcome="selected", option_id="always")).decision == "always"
    assert decision_of(AllowedOutcome(outcome="selected", option_id="yes-please")).decision == "deny"
    assert decision_of(DeniedOutcome(outcome="cancelled")).decision == "deny"
    assert decision_of(None).decision == "deny"


def test_replay_skips_the_system_message_and_marks_errors_failed() -> None:
    messages = [
        {"role": "system", "content": "you are shiro"},
        {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image", "image": "..."}]},
        {
            "role": "assistant",
            "content": [
                {"type": "tool-call", "toolCallId": "c1", "toolName": "bash", "input": {"command": "ls"}}
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "toolName": "bash",
                    "output": {"type": "error-text", "value": "User denied this tool call."},
                }
            ],
        },
        {"role": "assistant", "content": "fine"},
    ]
    updates = replay(WS, messages)
    assert [type(u).__name__ for u in updates] == [
        "UserMessageChunk",
        "UserMessageChunk",
        "ToolCallStart",
        "ToolCallProgress",
        "AgentMessageChunk",
    ]
    assert isinstance(updates[1], UserMessageChunk) and updates[1].content.text == "[image]"
    assert isinstance(updates[2], ToolCallStart) and updates[2].title == "bash: ls"
    assert isinstance(updates[3], ToolCallProgress) and updates[3].status == "failed"


def test_a_prompt_takes_text_file_mentions_and_embedded_files() -> None:
    text = prompt_text(
        [
            TextContentBlock(type="text", text="explain"),
            ResourceContentBlock(type="resource_link", name="app.py", uri="file:///work/project/app.py"),
            EmbeddedResourceContentBlock(
                type="resource",
                resource=TextResourceContents(uri="file:///work/project/a.py", text="print(1)"),
            ),
        ]
    )
    # each file is a context block with its source, for the secrets gate (agent/attachments.py)
    assert text.startswith(
        'explain\n<context label="/work/project/app.py" source="file:///work/project/app.py">\n'
        "The user points at the file /work/project/app.py (read it with read_file).\n</context>"
    )
    assert (
        '<context label="/work/project/a.py" source="file:///work/project/a.py">\nprint(1)\n</context>'
        in text
    )


def test_an_image_goes_with_the_prompt_and_an_empty_prompt_is_refused_in_words() -> None:
    image = ImageContentBlock(type="image", data="AAAA", mime_type="image/png", uri="file:///tmp/shot.png")
    assert prompt_text([TextContentBlock(type="text", text="see"), image]) == "see"
    assert prompt_text([image]) == ""
    assert prompt_images([image]) == [PromptImage("AAAA", "shot.png")]
    with pytest.raises(RequestError, match="The prompt is empty"):
        prompt_text([TextContentBlock(type="text", text="   ")])
    with pytest.raises(RequestError, match="not audio content"):
        prompt_text([AudioContentBlock(type="audio", data="AAAA", mime_type="audio/wav")])


def test_the_editors_mcp_servers_become_mcp_json_entries() -> None:
    entries = mcp_entries(
        [
            McpServerStdio(name="a", command="node", args=["a.js"], env=[EnvVariable(name="K", value="v")]),
            HttpMcpServer(
                name="b", type="http", url="https://x/mcp", headers=[HttpHeader(name="A", value="1")]
            ),
        ]
    )
    assert entries == {
        "a": {"command": "node", "args": ["a.js"], "env": {"K": "v"}},
        "b": {"type": "http", "url": "https://x/mcp", "headers": {"A": "1"}},
    }


def test_titles_name_what_a_call_touches() -> None:
    assert title_of("bash", {"command": "npm test\nnpm run lint"}) == "bash: npm test"
    assert title_of("read_many_files", {"paths": ["a.py", "b.py"]}) == "read_many_files a.py, b.py"
    assert title_of("mcp__github__search", {"q": 1}) == "mcp__github__search"
    assert title_of("read_file", "not json") == "read_file"
