"""The server and what every feature module uses: the pygls server class, request registration with
validation and error mapping, notifications checked against the contract, the shared wire mappers.

Feature modules (``chat``, ``sessions``, ``notes``, ...) import this module and ``protocol`` only;
``app`` composes them. Nothing here imports a feature module.

The server answers ``initialize`` before pydantic, the protocol models, the service or the agent
layer are imported (``app``), so this module imports them only where they are used; by the time a
request is handled they are loaded.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
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
from shiro_lsp.errors import INVALID_PARAMS, BadParams, ShiroError, describe_problems, from_os_error
from shiro_lsp.server.jsonrpc.edge import FrameReader, ShiroProtocol, excerpt, serve

if TYPE_CHECKING:
    from pydantic import BaseModel

    from shiro_lsp.checkpoints.rows import TurnChangesView
    from shiro_lsp.config import Settings
    from shiro_lsp.server import protocol as p
    from shiro_lsp.service import Shiro
    from shiro_lsp.state.memory import Entry
    from shiro_lsp.state.sessions.record import Compaction
    from shiro_lsp.state.todos import TaskList
    from shiro_lsp.workspaces import Workspaces

log = logging.getLogger(__name__)

P = TypeVar("P", bound="BaseModel")
Handler = Callable[["ShiroServer", Any], Awaitable["BaseModel | dict[str, Any]"]]


def plain_dict_converter() -> Any:
    """pygls' converter, but custom-method params and results stay plain dicts (libraries.md §1.2),
    and the standard methods' scalars are as strict as the custom methods' pydantic models: cattrs
    would take ``"3"`` for a line number (``int("3")``) and ``5`` for a URI (``str(5)``)."""
    converter = default_converter()  # type: ignore[no-untyped-call]
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, lambda obj, cls: cls(**obj))
    for scalar in (bool, int, float, str):  # and their subclasses: the protocol's int and str enums
        converter.register_structure_hook(scalar, _strict_scalar)
    return converter


def _json_type_fits(value: Any, base: type) -> bool:
    if base is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return type(value) is base


def _strict_scalar(value: Any, kind: type) -> Any:
    """The JSON value must already have the field's type; an enum is then made from it, as cattrs does."""
    base = next(b for b in (bool, int, float, str) if issubclass(kind, b))
    if not _json_type_fits(value, base):
        raise TypeError(f"expected {base.__name__}, got {type(value).__name__} {excerpt(value, 40)}")
    return value if kind is base and base is not float else kind(value)


class ShiroServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "shiro-lsp",
            __version__,
            protocol_cls=ShiroProtocol,
            converter_factory=plain_dict_converter,
        )
        self.workspaces: Workspaces | None = None
        self.initialized = False
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stop_reason: str | None = None
        self.features_registered = False
        self._background: set[asyncio.Future[None]] = set()

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """stdio with Shiro's frame reader (edge.py); ``stop_reason`` says why it ended, if it broke."""
        self._stop_event = threading.Event()
        protocol = self.protocol
        assert isinstance(protocol, ShiroProtocol)
        protocol.set_stdout(stdout or sys.stdout.buffer)
        reader = FrameReader((stdin or sys.stdin.buffer).fileno())
        try:
            self.stop_reason = asyncio.run(serve(reader, protocol, self._stop_event))
        except BrokenPipeError:
            log.error("The connection to the client is lost; stopping.")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    def background(self, work: Awaitable[Any]) -> None:
        """Run ``work`` without waiting for it; a failure is logged, never raised into the loop."""

        async def run() -> None:
            try:
                await work
            except Exception:
                log.exception("background work failed")

        task = asyncio.ensure_future(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls would pop an "Error in server" toast for each dropped message: a log line is enough."""
        log.warning("Server error (%s): %s", getattr(source, "__name__", source), excerpt(str(error), 200))

    @property
    def started(self) -> bool:
        """Whether ``initialize`` has made the workspace's service."""
        return self.workspaces is not None

    @property
    def shiro(self) -> Shiro:
        """The service of the live session's workspace folder."""
        return self.folders.active

    @property
    def folders(self) -> Workspaces:
        if self.workspaces is None:
            raise ShiroError(self.edge.unavailable or "The server is not initialized yet.")
        return self.workspaces

    @property
    def edge(self) -> ShiroProtocol:
        protocol = self.protocol
        assert isinstance(protocol, ShiroProtocol)
        return protocol

    def start_workspace(
        self,
        folders: Sequence[tuple[str | None, str]],
        settings: Settings,
        started: Callable[[Shiro], None],
    ) -> Shiro:
        """The window's folders; ``started`` wires each folder's service when it is made."""
        from shiro_lsp.workspaces import Workspaces

        self.loop = asyncio.get_running_loop()
        self.workspaces = Workspaces(folders, settings, reporter=self.report, started=started)
        return self.workspaces.active

    def cannot_start(self, error: Exception) -> None:
        """Shiro could not start (at ``initialize``): the editor shows why, and every request of
        Shiro's answers it, instead of a hang or "method not found"."""
        log.error("Shiro could not start", exc_info=error)
        if isinstance(error, OSError):
            error = from_os_error(error)
        reason = error.message if isinstance(error, ShiroError) else f"{type(error).__name__}: {error}"
        message = f"Shiro could not start: {excerpt(reason, 300)} (the details are in the Shiro log)"
        self.workspaces = None
        self.edge.unavailable = message
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))

    def report(self, message: str) -> None:
        """Tell the user about something that went wrong with their state (safe from any thread)."""
        log.warning("%s", message)
        params = types.ShowMessageParams(type=types.MessageType.Warning, message=f"Shiro: {message}")
        if self.loop is None:
            return
        self.loop.call_soon_threadsafe(self.window_show_message, params)

    def flush_outbox(self) -> None:
        """Write every queued outgoing message now (pygls closes stdout right after ``exit``)."""
        if isinstance(self.protocol, ShiroProtocol):
            self.protocol.flush_outbox()

    def notify(self, method: str, payload: BaseModel) -> None:
        """Send a contract notification; its name and payload type must be the contract's."""
        from shiro_lsp.server import protocol as p

        contract = p.METHODS_BY_NAME.get(method)
        if contract is None or contract.kind != "notification" or not isinstance(payload, contract.params):
            raise ValueError(f"{method} with {type(payload).__name__} is not a notification of the contract")
        self.protocol.notify(method, dump(payload))


def fs_path(root: str) -> str:
    """A workspace folder as the client named it (a path, or a file URI) as a file system path."""
    if root.startswith("file:"):
        path = to_fs_path(root)
        if not path:
            raise BadParams(f"Not a file URI: {root}")
        return path
    return root


def dump(value: BaseModel | dict[str, Any]) -> dict[str, Any]:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    return value


def parse(model: type[P], params: Any, method: str) -> P:
    """Validate params; a bad one is -32602 with a message naming each problem."""
    from pydantic import ValidationError

    try:
        return model.model_validate({} if params is None else params)
    except ValidationError as error:
        raise JsonRpcException(
            message=f"Invalid params for {method}: {describe_problems(error, 'params', style='pydantic')}",
            code=INVALID_PARAMS,
        ) from None


def as_rpc_error(error: ShiroError) -> JsonRpcException:
    return JsonRpcException(message=error.message, code=error.code, data=error.data)


def request(server: ShiroServer, name: str) -> Callable[[Handler], Handler]:
    """Register ``fn(ls, params)`` for the contract method ``name`` with validation and error mapping."""
    from shiro_lsp.server import protocol as p

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


def entry_wire(entry: Entry) -> p.MemoryEntry:
    from shiro_lsp.server import protocol as p

    return p.MemoryEntry.model_validate(entry.to_json())


def changes_wire(view: TurnChangesView) -> p.ChangesResult:
    """What a turn changed (``shiro/changes`` and the ``shiro/changes/changed`` notification)."""
    from shiro_lsp.server import protocol as p

    return p.ChangesResult(
        task_id=view.task_id,
        checkpoint_id=view.checkpoint_id,
        files=view.files,
    )


def compaction_wire(compaction: Compaction) -> p.CompactionInfo:
    from shiro_lsp.server import protocol as p

    return p.CompactionInfo(
        at=compaction.at,
        summary=compaction.summary,
        created_at=compaction.created_at,
        auto=compaction.auto,
        digest_reason=compaction.digest_reason,
        undone_at=compaction.undone_at,
        restored=compaction.restored if compaction.undone_at is not None else None,
    )


def todos_wire(tasks: TaskList) -> p.TodosPayload:
    from shiro_lsp.server import protocol as p

    progress = tasks.progress()
    return p.TodosPayload(
        todos=[p.TodoItem(content=t.content, status=t.status, note=t.note) for t in tasks.todos],  # type: ignore[arg-type]
        progress=p.TodoProgress(**progress.to_json()),
        rendered=tasks.rendered(),
    )
