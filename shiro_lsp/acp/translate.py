"""Shiro's engine events, saved messages and task list as ACP ``session/update`` payloads.

Pure translation, no I/O: :class:`TurnTranslator` turns one turn's events (``agent/events.py``)
into updates, :func:`replay` turns a saved history into the updates a client shows on
``session/load``, :func:`plan_of` the task list into a plan, and :func:`prompt_text` an ACP prompt
into the text a turn starts from.

Tool call status: ``pending`` from the first sign of the call (its input is still streaming),
``in_progress`` once its input is complete and Shiro works on it, back to ``pending`` while the
user is asked (``permission_request``), ``completed`` with its result, ``failed`` with the error
or the refusal.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.helpers import (
    SessionUpdate,
    ToolCallContentVariant,
    image_block,
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_available_commands,
    update_plan,
    update_tool_call,
    update_user_message,
    update_user_message_text,
)
from acp.schema import (
    AcpMcpServer,
    AgentPlanUpdate,
    AudioContentBlock,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    EmbeddedResourceContentBlock,
    HttpMcpServer,
    ImageContentBlock,
    McpServerStdio,
    PermissionOption,
    PlanEntryPriority,
    PlanEntryStatus,
    ResourceContentBlock,
    SseMcpServer,
    TextContentBlock,
    TextResourceContents,
    ToolCallLocation,
    ToolCallStatus,
    ToolCallUpdate,
    ToolKind,
    UnstructuredCommandInput,
)

from shiro_lsp.adapt import TEXT_ORIGIN_NOTE
from shiro_lsp.agent import events as ev
from shiro_lsp.agent.attachments import context_block
from shiro_lsp.agent.setup import SHIRO_ORIGIN_NOTE, Answer, ApprovalRequest, Decision
from shiro_lsp.commands import SERVER_BUILTINS, Catalogue
from shiro_lsp.errors import INVALID_PARAMS
from shiro_lsp.messages import Message
from shiro_lsp.state.todos import TaskList

McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)

OUTPUT_TAIL = 20_000
"""Live command output shown on a tool call: the last this many characters."""

KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "read_many_files": "read",
    "list_dir": "read",
    "git_status": "read",
    "git_diff": "read",
    "git_log": "read",
    "git_show": "read",
    "git_blame": "read",
    "recall": "read",
    "write_file": "edit",
    "edit_file": "edit",
    "multi_edit": "edit",
    "apply_patch": "edit",
    "move_file": "move",
    "delete_file": "delete",
    "glob": "search",
    "grep": "search",
    "bash": "execute",
    "todo_write": "think",
    "web_fetch": "fetch",
}

PLAN_STATUS: dict[str, PlanEntryStatus] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "done": "completed",
    "blocked": "pending",  # ACP has no "blocked": the entry says so in words
}

PERMISSION_OPTIONS = [
    PermissionOption(option_id="once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="always", name="Always allow (this session)", kind="allow_always"),
    PermissionOption(option_id="deny", name="Deny", kind="reject_once"),
]
GRANT_SCOPES: dict[str, str] = {"web_fetch": "Allow {pattern} for this session"}
"""How "Always" reads for a tool whose grant is narrower than the whole tool (web_fetch: one domain)."""


def permission_options(request: ApprovalRequest) -> list[PermissionOption]:
    """Allow once / Always / Deny; "Always" names what it grants where that is not the whole tool."""
    scope = GRANT_SCOPES.get(request.tool_name)
    if scope is None or request.suggested_pattern == "*":
        return PERMISSION_OPTIONS
    always = scope.format(pattern=request.suggested_pattern)
    return [
        option if option.option_id != "always" else option.model_copy(update={"name": always})
        for option in PERMISSION_OPTIONS
    ]


DECISIONS: dict[str, Decision] = {"once": "once", "always": "always", "deny": "deny"}


def kind_of(tool_name: str) -> ToolKind:
    return KINDS.get(tool_name, "other")


def title_of(tool_name: str, input: Any) -> str:
    """What the call does, in one line: ``bash: npm test``, ``read_file src/app.py``."""
    if not isinstance(input, dict):
        return tool_name
    command = input.get("command")
    if isinstance(command, str) and command:
        return f"{tool_name}: {_clip(command.splitlines()[0], 120)}"
    for key in ("path", "file_path", "pattern", "query", "from", "url"):
        value = input.get(key)
        if isinstance(value, str) and value:
            return f"{tool_name} {_clip(value, 120)}"
    paths = input.get("paths")
    if isinstance(paths, list) and paths and all(isinstance(p, str) for p in paths):
        return f"{tool_name} {_clip(', '.join(paths), 120)}"
    return tool_name


def locations_of(workspace: Path, input: Any) -> list[ToolCallLocation] | None:
    """The files a call names, as absolute paths (the client opens them)."""
    if not isinstance(input, dict):
        return None
    found: list[str] = []
    for key in ("path", "file_path", "from", "to"):
        value = input.get(key)
        if isinstance(value, str) and value:
            found.append(value)
    paths = input.get("paths")
    if isinstance(paths, list):
        found += [p for p in paths if isinstance(p, str) and p]
    if not found:
        return None
    return [ToolCallLocation(path=str(workspace / p)) for p in dict.fromkeys(found)]


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _text_content(text: str) -> ToolCallContentVariant:
    return tool_content(text_block(text))


def _result_content(output: str, diff: str | None) -> list[ToolCallContentVariant]:
    content = [_text_content(output)] if output else []
    if diff:
        content.append(_text_content(f"```diff\n{diff.rstrip()}\n```"))
    return content


class TurnTranslator:
    """One turn's events as ACP updates (it remembers which tool calls the client already knows)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self._started: set[str] = set()
        self._output: dict[str, str] = {}

    def updates(self, event: ev.Event) -> list[SessionUpdate]:
        match event:
            case ev.Text(text=text):
                return [update_agent_message_text(text)] if text else []
            case ev.Reasoning(text=text):
                return [update_agent_thought_text(text)] if text else []
            case ev.ToolStart(id=call_id, name=name):
                self._started.add(call_id)
                return [start_tool_call(call_id, name, kind=kind_of(name), status="pending")]
            case ev.ToolCall(id=call_id, name=name, input=input):
                return [self._called(call_id, name, input)]
            case ev.ToolOutput(id=call_id, chunk=chunk):
                shown = (self._output.get(call_id, "") + chunk)[-OUTPUT_TAIL:]
                self._output[call_id] = shown
                return [update_tool_call(call_id, status="in_progress", content=[_text_content(shown)])]
            case ev.ToolResult(id=call_id, output=output, diff=diff):
                self._output.pop(call_id, None)
                return [update_tool_call(call_id, status="completed", content=_result_content(output, diff))]
            case ev.ToolFailed(id=call_id, error=error, diff=diff):
                self._output.pop(call_id, None)
                return [update_tool_call(call_id, status="failed", content=_result_content(error, diff))]
            case ev.ToolDenied(id=call_id, name=name, reason=reason):
                told = reason or f"{name} was not allowed."
                return [update_tool_call(call_id, status="failed", content=[_text_content(told)])]
            case ev.Notice(text=text):
                return [notice(text)]
            case ev.Retry(attempt=attempt, max_attempts=most, delay_seconds=delay, reason=reason):
                return [notice(f"Retrying in {delay:g} s (attempt {attempt} of {most}): {reason}")]
            case ev.Compacted(before=before, after=after):
                return [notice(f"Older history was pruned to fit: {before} messages sent as {after}.")]
            case _:  # Failed becomes the prompt's error, Done its answer
                return []

    def _called(self, call_id: str, name: str, input: Any) -> SessionUpdate:
        title, kind = title_of(name, input), kind_of(name)
        locations = locations_of(self.workspace, input)
        if call_id not in self._started:  # a call written as text, or one refused before it streamed
            self._started.add(call_id)
            return start_tool_call(
                call_id, title, kind=kind, status="in_progress", raw_input=input, locations=locations
            )
        return update_tool_call(
            call_id, title=title, kind=kind, status="in_progress", raw_input=input, locations=locations
        )


def notice(text: str) -> SessionUpdate:
    """Something the user should know, as a quoted line in the agent's message."""
    return update_agent_message_text(f"\n\n> {text}\n\n")


# --- approvals ------------------------------------------------------------------------------------


def available_commands(catalogue: Catalogue) -> AvailableCommandsUpdate:
    """The commands a prompt may start with (``/name``): ``/init`` and the custom commands that run."""
    commands = [AvailableCommand(name=name, description=what) for name, what in SERVER_BUILTINS.items()]
    for command in catalogue.runnable:
        hint = command.argument_hint or " ".join(f"{v.name}=…" for v in command.inputs)
        commands.append(
            AvailableCommand(
                name=command.name,
                description=f"{command.description} ({command.source})",
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None,
            )
        )
    return update_available_commands(commands)


def permission_request(workspace: Path, request: ApprovalRequest) -> ToolCallUpdate:
    """The tool call a ``session/request_permission`` is about, with the proposed file changes."""
    content: list[ToolCallContentVariant] = []
    if request.by_shiro:
        content.append(_text_content(SHIRO_ORIGIN_NOTE))
    elif request.origin == "text":
        content.append(_text_content(TEXT_ORIGIN_NOTE))
    if request.warning:
        content.append(_text_content(request.warning))
    for preview in request.previews or []:
        path, before, after = preview.path, preview.before, preview.after
        if preview.binary or after is None:
            what = "deletes" if after is None else "changes the binary file"
            content.append(_text_content(f"{request.tool_name} {what} {path}"))
        else:
            content.append(tool_diff_content(str(workspace / path), after, before))
    return ToolCallUpdate(
        tool_call_id=request.call_id or f"approval-{request.tool_name}",
        title=title_of(request.tool_name, request.input),
        kind=kind_of(request.tool_name),
        status="pending",
        raw_input=request.input,
        content=content or None,
        locations=locations_of(workspace, request.input),
    )


def decision_of(outcome: Any) -> Answer:
    """The client's answer; anything but a known option selected (cancelled, unknown id) is a deny."""
    if getattr(outcome, "outcome", None) != "selected":
        return Answer("deny")
    return Answer(DECISIONS.get(str(getattr(outcome, "option_id", "")), "deny"))


# --- the task list --------------------------------------------------------------------------------


def plan_of(tasks: TaskList) -> AgentPlanUpdate:
    entries = []
    for todo in tasks.todos:
        content = todo.content
        if todo.status == "blocked":
            content += f" (blocked: {todo.note})" if todo.note else " (blocked)"
        elif todo.note:
            content += f" ({todo.note})"
        priority: PlanEntryPriority = "high" if todo.status == "in_progress" else "medium"
        entries.append(plan_entry(content, priority=priority, status=PLAN_STATUS[todo.status]))
    return update_plan(entries)


# --- a saved session, replayed --------------------------------------------------------------------


ImageData = Callable[[str], tuple[str, str] | None]
"""An image id to the image (base64, media type), or None when it is no longer kept."""


def replay(
    workspace: Path, messages: list[Message], images: ImageData = lambda _id: None
) -> list[SessionUpdate]:
    """The history as the client would have seen it live: user and agent text (and the user's
    images), thoughts, tool calls with their inputs and results (the system message and provider ids
    stay out)."""
    updates: list[SessionUpdate] = []
    for message in messages:
        role, content = message.get("role"), message.get("content")
        if role == "user":
            updates += [_user_update(item, images) for item in _user_items(content)]
        elif role == "assistant":
            updates += _assistant(workspace, content)
        elif role == "tool" and isinstance(content, list):
            updates += [u for part in content if (u := _tool_result(part)) is not None]
    return updates


def _user_items(content: Any) -> list[str | dict[str, Any]]:
    """A user message's texts, and its stored image parts where they stand."""
    if not isinstance(content, list):
        return list(_texts(content))
    items: list[str | dict[str, Any]] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "image" and isinstance(part.get("imageId"), str):
            items.append(part)
        else:
            items += _texts([part])
    return items


def _user_update(item: str | dict[str, Any], images: ImageData) -> SessionUpdate:
    if isinstance(item, str):
        return update_user_message_text(item)
    found = images(str(item["imageId"]))
    if found is None:
        return update_user_message_text(f"[image {item.get('name') or ''} no longer kept]")
    return update_user_message(image_block(found[0], found[1]))


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content] if content else []
    if not isinstance(content, list):
        return []
    texts = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str) and part["text"]:
            texts.append(part["text"])
        elif part.get("type") in ("image", "file"):
            texts.append(f"[{part['type']}]")
    return texts


def _assistant(workspace: Path, content: Any) -> list[SessionUpdate]:
    if isinstance(content, str):
        return [update_agent_message_text(content)] if content else []
    updates: list[SessionUpdate] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        kind, text = part.get("type"), part.get("text")
        if kind == "text" and isinstance(text, str) and text:
            updates.append(update_agent_message_text(text))
        elif kind == "reasoning" and isinstance(text, str) and text:
            updates.append(update_agent_thought_text(text))
        elif kind == "tool-call" and isinstance(part.get("toolCallId"), str):
            name, input = str(part.get("toolName", "tool")), part.get("input")
            updates.append(
                start_tool_call(
                    part["toolCallId"],
                    title_of(name, input),
                    kind=kind_of(name),
                    status="pending",
                    raw_input=input,
                    locations=locations_of(workspace, input),
                )
            )
    return updates


def _tool_result(part: Any) -> SessionUpdate | None:
    if not isinstance(part, dict) or not isinstance(part.get("toolCallId"), str):
        return None
    status: ToolCallStatus
    if part.get("type") == "tool-error":
        status, text = "failed", str(part.get("error", ""))
    elif part.get("type") == "tool-result":
        output = part["output"] if isinstance(part.get("output"), dict) else {}
        value = output.get("value")
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        status = "failed" if str(output.get("type", "")).startswith("error") else "completed"
    else:
        return None
    return update_tool_call(
        part["toolCallId"], status=status, content=[_text_content(text)] if text else None
    )


# --- the prompt -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PromptImage:
    """An image block of a prompt: its bytes (base64, as sent) and a name to show."""

    data: str
    name: str


def prompt_images(blocks: list[PromptBlock]) -> list[PromptImage]:
    """The prompt's images, in order; the service keeps them as the panel's pasted images."""
    found: list[PromptImage] = []
    for number, block in enumerate((b for b in blocks if isinstance(b, ImageContentBlock)), start=1):
        name = _path_of(block.uri).rsplit("/", 1)[-1] if block.uri else f"image {number}"
        found.append(PromptImage(block.data, name or f"image {number}"))
    return found


def prompt_text(blocks: list[PromptBlock]) -> str:
    """An ACP prompt as one user message: text as is, a linked or embedded file as a context block
    with its source, which the secrets gate checks before the turn (``agent.attachments``). Images
    go with it as image parts (``prompt_images``); audio is refused in words."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, ImageContentBlock):
            continue
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            path = _path_of(block.uri)
            pointer = f"The user points at the file {path} (read it with read_file)."
            parts.append(context_block(path, pointer, block.uri))
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(context_block(_path_of(resource.uri), resource.text, resource.uri))
            else:
                parts.append(f"[binary resource {_path_of(resource.uri)} not included]")
        else:
            raise RequestError(
                INVALID_PARAMS, f"Shiro takes text, files and images in a prompt, not {block.type} content."
            )
    text = "\n".join(p for p in parts if p).strip()
    if not text and not any(isinstance(b, ImageContentBlock) for b in blocks):
        raise RequestError(INVALID_PARAMS, "The prompt is empty: send some text.")
    return text


def _path_of(uri: str) -> str:
    return uri.removeprefix("file://")


# --- MCP servers the editor passes in -------------------------------------------------------------


def mcp_entries(servers: list[McpServer]) -> dict[str, Any]:
    """The editor's MCP servers as ``.mcp.json`` entries (the MCP client reads them with its files;
    a kind it does not speak is reported there in words)."""
    entries: dict[str, Any] = {}
    for server in servers:
        if isinstance(server, McpServerStdio):
            env = {e.name: e.value for e in server.env}
            entries[server.name] = {"command": server.command, "args": list(server.args), "env": env}
        elif isinstance(server, HttpMcpServer | SseMcpServer):
            headers = {h.name: h.value for h in server.headers}
            entries[server.name] = {"type": server.type, "url": server.url, "headers": headers}
        else:
            entries[server.name] = {"type": server.type}
    return entries
