"""The language server: validate params, call the service, dump the result. Nothing else."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
)
from pygls.uris import to_fs_path

from shiro_lsp import __version__
from shiro_lsp.config import Settings, load_settings
from shiro_lsp.errors import INVALID_PARAMS, BadParams, ShiroError, describe_problems
from shiro_lsp.server import protocol as p
from shiro_lsp.server.changes import register_changes
from shiro_lsp.server.chat import LspFrontend, register_chat
from shiro_lsp.server.models import register_models
from shiro_lsp.server.notes import register_notes
from shiro_lsp.server.sessions import register_sessions
from shiro_lsp.server.transport import ThreadedWriterProtocol
from shiro_lsp.service import Shiro
from shiro_lsp.state.memory import Entry
from shiro_lsp.state.todos import TaskList, Todo

log = logging.getLogger(__name__)

P = TypeVar("P", bound=BaseModel)
Handler = Callable[["ShiroServer", Any], Awaitable[BaseModel | dict[str, Any]]]

WARM_UP_DELAY_S = 0.3
REMEMBER_COMMAND = "shiro.remember"
REMEMBER_SELECTION_COMMAND = "shiro.rememberSelection"


def plain_dict_converter() -> Any:
    """pygls' converter, but custom-method params and results stay plain dicts (libraries.md §1.2)."""
    converter = default_converter()  # type: ignore[no-untyped-call]
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, lambda obj, cls: cls(**obj))
    return converter


class ShiroServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "shiro-lsp",
            __version__,
            protocol_cls=ThreadedWriterProtocol,
            converter_factory=plain_dict_converter,
        )
        self._shiro: Shiro | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def shiro(self) -> Shiro:
        if self._shiro is None:
            raise ShiroError("The server is not initialized yet.")
        return self._shiro

    def start_workspace(self, workspace: str, settings: Settings) -> None:
        self.loop = asyncio.get_running_loop()
        self._shiro = Shiro(workspace, settings, reporter=self.report)

    def report(self, message: str) -> None:
        """Tell the user about something that went wrong with their state (safe from any thread)."""
        log.warning("%s", message)
        params = types.ShowMessageParams(type=types.MessageType.Warning, message=f"Shiro: {message}")
        if self.loop is None:
            return
        self.loop.call_soon_threadsafe(self.window_show_message, params)

    def notify(self, method: str, payload: BaseModel) -> None:
        self.protocol.notify(method, dump(payload))


def dump(value: BaseModel | dict[str, Any]) -> dict[str, Any]:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    return value


def parse(model: type[P], params: Any, method: str) -> P:
    """Validate params; a bad one is -32602 with a message naming each problem."""
    try:
        return model.model_validate({} if params is None else params)
    except ValidationError as error:
        raise JsonRpcException(
            message=f"Invalid params for {method}: {describe_problems(error, 'params')}", code=INVALID_PARAMS
        ) from None


def as_rpc_error(error: ShiroError) -> JsonRpcException:
    return JsonRpcException(message=error.message, code=error.code, data=error.data)


def request(server: ShiroServer, name: str) -> Callable[[Handler], Handler]:
    """Register ``fn(ls, params)`` for the contract method ``name`` with validation and error mapping."""
    method = p.METHODS_BY_NAME[name]

    def decorate(fn: Handler) -> Handler:
        @server.feature(name)
        async def handler(ls: ShiroServer, params: Any) -> dict[str, Any]:
            parsed = parse(method.params, params, name)
            try:
                return dump(await fn(ls, parsed))
            except ShiroError as error:
                raise as_rpc_error(error) from None

        return fn

    return decorate


def workspace_of(params: types.InitializeParams) -> str:
    for uri in [f.uri for f in params.workspace_folders or []] + [params.root_uri or ""]:
        path = to_fs_path(uri) if uri else None
        if path:
            return path
    return params.root_path or str(Path.cwd())


def entry_wire(entry: Entry) -> p.MemoryEntry:
    return p.MemoryEntry.model_validate(entry.to_json())


def todos_wire(tasks: TaskList) -> p.TodosPayload:
    progress = tasks.progress()
    return p.TodosPayload(
        todos=[p.TodoItem(content=t.content, status=t.status, note=t.note) for t in tasks.todos],  # type: ignore[arg-type]
        progress=p.TodoProgress(**progress.to_json()),
        rendered=tasks.rendered(),
    )


def create_server() -> ShiroServer:
    server = ShiroServer()

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: ShiroServer, params: types.InitializeParams) -> None:
        options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        settings, problems = load_settings(options)
        ls.start_workspace(workspace_of(params), settings)
        runtime = ls.shiro.start_agent(LspFrontend(ls))
        # After the initialize reply is out: the import would otherwise compete with it for the GIL.
        asyncio.get_running_loop().call_later(WARM_UP_DELAY_S, runtime.warm_up)
        for problem in problems:
            ls.report(problem)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def on_configuration(ls: ShiroServer, params: types.DidChangeConfigurationParams) -> None:
        settings = (
            params.settings.get("shiro", params.settings) if isinstance(params.settings, dict) else None
        )
        if isinstance(settings, dict) and ls._shiro is not None:
            updated, problems = load_settings(settings, base=ls.shiro.settings)
            threshold_changed = updated.compact_threshold != ls.shiro.settings.compact_threshold
            ls.shiro.settings = updated
            if threshold_changed:
                runtime = ls.shiro.runtime
                runtime.frontend.context_changed(runtime.meter())
            for problem in problems:
                ls.report(problem)

    register_memory(server)
    register_todos(server)
    register_history(server)
    register_sessions(server)
    register_chat(server)
    register_code_actions(server)
    register_notes(server)
    register_changes(server)
    register_models(server)
    return server


def register_memory(server: ShiroServer) -> None:
    @request(server, "shiro/memory/remember")
    async def remember(ls: ShiroServer, params: p.RememberParams) -> p.RememberResult:
        result = await asyncio.to_thread(ls.shiro.remember, params.kind, params.text)
        return p.RememberResult(
            text=result.text,
            duplicate=result.duplicate,
            entry=entry_wire(result.entry) if result.entry else None,
        )

    @request(server, "shiro/memory/recall")
    async def recall(ls: ShiroServer, params: p.RecallParams) -> p.EntriesResult:
        result = await asyncio.to_thread(ls.shiro.require_memory().recall, params.query)
        return p.EntriesResult(entries=[entry_wire(e) for e in result.entries], text=result.text)

    @request(server, "shiro/memory/forget")
    async def forget(ls: ShiroServer, params: p.ForgetParams) -> p.ForgetResult:
        ls.shiro.require_writable()
        memory = ls.shiro.require_memory()
        if params.id is not None:
            result = await asyncio.to_thread(memory.forget_id, params.id)
        elif params.text is not None:
            result = await asyncio.to_thread(memory.forget, params.text)
        else:
            raise BadParams(
                "shiro/memory/forget needs `id` (one entry) or `text` (every entry containing it)."
            )
        return p.ForgetResult(removed=result.removed, text=result.text)

    @request(server, "shiro/memory/list")
    async def listing(ls: ShiroServer, params: p.Empty) -> p.EntriesResult:
        memory = ls.shiro.require_memory()
        entries, text = await asyncio.to_thread(memory.listing)
        return p.EntriesResult(entries=[entry_wire(e) for e in entries], text=text)

    @request(server, "shiro/memory/compact")
    async def compact(ls: ShiroServer, params: p.Empty) -> p.MemoryCompactResult:
        ls.shiro.require_writable()
        result = await ls.shiro.require_memory().compact(ls.shiro.summarizer())
        return p.MemoryCompactResult(before=result.before, after=result.after, text=result.text)


def register_todos(server: ShiroServer) -> None:
    @request(server, "shiro/todos")
    async def todos(ls: ShiroServer, params: p.Empty) -> p.TodosPayload:
        return todos_wire(ls.shiro.tasks)

    @request(server, "shiro/todos/update")
    async def update(ls: ShiroServer, params: p.TodosUpdateParams) -> p.TodosPayload:
        ls.shiro.update_todos([Todo(t.content, t.status, t.note) for t in params.todos])
        payload = todos_wire(ls.shiro.tasks)
        ls.notify("shiro/todos/changed", payload)
        return payload


def register_history(server: ShiroServer) -> None:
    @request(server, "shiro/history")
    async def history(ls: ShiroServer, params: p.Empty) -> p.HistoryResult:
        return p.HistoryResult(prompts=await asyncio.to_thread(ls.shiro.history.load))


def register_code_actions(server: ShiroServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.Empty], resolve_provider=False),
    )
    def code_actions(ls: ShiroServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        text = selected_text(ls, params)
        if not text.strip():
            return None
        argument = p.RememberSelectionArgs(
            text=text, uri=params.text_document.uri, range=range_json(params.range)
        )
        command = types.Command(
            title="Shiro: Remember this", command=REMEMBER_SELECTION_COMMAND, arguments=[dump(argument)]
        )
        return [
            types.CodeAction(title="Shiro: Remember this", kind=types.CodeActionKind.Empty, command=command)
        ]

    @server.command(REMEMBER_COMMAND)
    async def remember_command(ls: ShiroServer, *arguments: Any) -> str:
        if len(arguments) != 1:
            raise JsonRpcException(
                message=f"{REMEMBER_COMMAND} takes one argument {{kind, text}}, got {len(arguments)}",
                code=INVALID_PARAMS,
            )
        args = parse(p.RememberCommandArgs, arguments[0], REMEMBER_COMMAND)
        try:
            result = await asyncio.to_thread(ls.shiro.remember_selection, args.kind, args.text)
        except ShiroError as error:
            raise as_rpc_error(error) from None
        return result.text


def selected_text(ls: ShiroServer, params: types.CodeActionParams) -> str:
    document = ls.workspace.get_text_document(params.text_document.uri)
    start = document.offset_at_position(params.range.start)
    end = document.offset_at_position(params.range.end)
    return str(document.source[start:end])


def range_json(selection: types.Range) -> dict[str, Any]:
    def position(pos: types.Position) -> dict[str, int]:
        return {"line": pos.line, "character": pos.character}

    return {"start": position(selection.start), "end": position(selection.end)}
