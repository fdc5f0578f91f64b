"""The ACP front door: `shiro-lsp acp` speaks the Agent Client Protocol on stdio (Zed, JetBrains, Neovim).

Every ACP session is one ``Shiro`` (``service.py``) on the session's ``cwd`` with its own agent
runtime, so it has the same tools, permission rules, sessions, notes and memory as the editor.
This module only translates: requests into service calls, engine events into ``session/update``
(``translate.py``), approvals into ``session/request_permission``. Session ids are Shiro's own,
so ``session/load`` resumes a session started in VS Code (or with ``shiro-lsp run``).

Approvals fail closed: an error, a timeout, a disconnect, a cancelled or unknown answer is a deny.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, Agent, Client, RequestError, run_agent
from acp.helpers import SessionUpdate, update_tool_call
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    StopReason,
)

from shiro_lsp.acp.translate import (
    McpServer,
    PromptBlock,
    PromptImage,
    TurnTranslator,
    available_commands,
    decision_of,
    mcp_entries,
    notice,
    permission_options,
    permission_request,
    plan_of,
    prompt_images,
    prompt_text,
    replay,
)
from shiro_lsp.agent.context_window import Meter
from shiro_lsp.agent.events import Emit, Event
from shiro_lsp.agent.runtime import AgentRuntime
from shiro_lsp.agent.setup import Answer, ApprovalRequest
from shiro_lsp.checkpoints.rows import TurnChangesView
from shiro_lsp.config import Settings, load_settings
from shiro_lsp.errors import INVALID_PARAMS, MODEL_ERROR, NOT_FOUND, ShiroError
from shiro_lsp.service import Shiro
from shiro_lsp.workspaces import Workspaces

log = logging.getLogger(__name__)

STDIO_LIMIT = 50 * 1024 * 1024
"""Longest line (one JSON-RPC message) read from the client, as the SDK's own default."""

WARM_UP_DELAY_S = 0.3
LIST_PAGE = 50
"""Sessions per ``session/list`` page."""

STOP_REASONS: dict[str, StopReason] = {
    "done": "end_turn",
    "cancelled": "cancelled",
    "queue-cleared": "cancelled",
}


def _version() -> str:
    try:
        return version("shiro-lsp")
    except PackageNotFoundError:
        return "0"


def acp_error(error: ShiroError) -> RequestError:
    """A ``ShiroError`` as the JSON-RPC error the client shows (same code and message)."""
    return RequestError(error.code, error.message, error.data)


@contextlib.contextmanager
def shiro_errors() -> Iterator[None]:
    try:
        yield
    except ShiroError as error:
        raise acp_error(error) from None


class Outbox:
    """``session/update`` notifications in the order the engine made them, sent one at a time.

    The engine's ``emit`` is synchronous; sending is not. ``drain()`` waits until everything put
    so far is written, so a prompt's answer and a permission request come after their updates.
    """

    def __init__(self) -> None:
        self.client: Client | None = None
        self._queue: asyncio.Queue[tuple[str, SessionUpdate]] = asyncio.Queue()
        self._sender: asyncio.Task[None] | None = None

    def put(self, session_id: str, update: SessionUpdate) -> None:
        self._queue.put_nowait((session_id, update))
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._send())

    async def drain(self) -> None:
        await self._queue.join()

    async def _send(self) -> None:
        while True:
            session_id, update = await self._queue.get()
            try:
                if self.client is not None:
                    await self.client.session_update(session_id=session_id, update=update)
            except Exception as error:  # the client went away: the turn still ends and saves
                log.info("session/update not delivered: %s", error)
            finally:
                self._queue.task_done()

    async def close(self) -> None:
        if self._sender is not None:
            self._sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sender


class AcpFrontend:
    """What the agent runtime needs from a front end, for one ACP session."""

    def __init__(self, shiro: Shiro, outbox: Outbox) -> None:
        self.shiro = shiro
        self.outbox = outbox
        self.quiet = False  # while session/load switches sessions: the replay sends the plan itself

    @property
    def session_id(self) -> str:
        return self.shiro.sessions.current.id

    def emitter(self, session_id: str, task_id: str) -> Emit:
        translator = TurnTranslator(self.shiro.workspace_path)

        def emit(event: Event) -> None:
            for update in translator.updates(event):
                self.outbox.put(session_id, update)

        return emit

    async def approve(self, task_id: str, request: ApprovalRequest) -> Answer:
        client = self.outbox.client
        if client is None:
            return Answer("deny")
        await self.outbox.drain()  # the client knows the tool call before it is asked about it
        timeout = self.shiro.settings.approval_timeout_ms / 1000
        try:
            response = await asyncio.wait_for(
                client.request_permission(
                    session_id=self.session_id,
                    tool_call=permission_request(self.shiro.workspace_path, request),
                    options=permission_options(request),
                ),
                timeout,
            )
            answer = decision_of(response.outcome)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # timeout, an error answer, a disconnect, a malformed answer
            log.warning("approval for %s denied: %s", request.tool_name, type(error).__name__)
            return Answer("deny")
        if answer.decision != "deny" and request.call_id is not None:
            self.outbox.put(self.session_id, update_tool_call(request.call_id, status="in_progress"))
        return answer

    def todos_changed(self) -> None:
        if not self.quiet:
            self.outbox.put(self.session_id, plan_of(self.shiro.tasks))

    def context_changed(self, meter: Meter) -> None:
        pass  # ACP has no context meter (its usage update is unstable)

    def changes_changed(self, view: TurnChangesView) -> None:
        pass  # each call's diff is already on its tool call


@dataclass(eq=False)
class AcpSession:
    shiro: Shiro
    runtime: AgentRuntime
    frontend: AcpFrontend
    tasks: set[str] = field(default_factory=set)  # task ids of this session's prompts not yet answered
    offered: object = None  # the available_commands_update last sent

    @property
    def id(self) -> str:
        return self.shiro.sessions.current.id

    async def close(self) -> None:
        await self.runtime.queue.stop()
        await self.shiro.sessions.flush()
        await self.shiro.mcp.close()
        if self.shiro.sessions.live_lock is not None:
            await asyncio.to_thread(self.shiro.sessions.live_lock.release, self.id)


class ShiroAcpAgent:
    """The ``acp.Agent`` of `shiro-lsp acp`."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.outbox = Outbox()
        self.sessions: dict[str, AcpSession] = {}
        self._tasks: set[asyncio.Task[object]] = set()

    def on_connect(self, conn: Client) -> None:
        self.outbox.client = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **kwargs: Any
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True, image=True),
                mcp_capabilities=McpCapabilities(http=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    additional_directories=SessionAdditionalDirectoriesCapabilities(),
                ),
            ),
            agent_info=Implementation(name="shiro", title="Shiro", version=_version()),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # no auth methods: the endpoint and key come from the environment

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        session = self._open(cwd, mcp_servers, additional_directories)
        self.sessions[session.id] = session
        self._background(self._offer_commands(session))  # after the answer: the client knows the id
        return NewSessionResponse(session_id=session.id)

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        session = self.sessions.get(session_id)
        if session is None:
            session = self._open(cwd, mcp_servers, additional_directories)
            session.frontend.quiet = True
            try:
                with shiro_errors():
                    await session.shiro.resume_session(session_id)
            except BaseException:
                await session.close()
                raise
            finally:
                session.frontend.quiet = False
            self.sessions[session.id] = session
            self.sessions.setdefault(session_id, session)  # a unique prefix names it too
        live = session.shiro.sessions.current
        replayed = await asyncio.to_thread(
            replay, session.shiro.workspace_path, list(live.messages), session.shiro.image_base64
        )
        for update in replayed:
            self.outbox.put(session.id, update)
        if live.tasks.todos:
            self.outbox.put(session.id, plan_of(live.tasks))
        await self._offer_commands(session)
        await self.outbox.drain()
        return LoadSessionResponse()

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """Saved sessions, newest first: this folder's (or every folder's without ``cwd``), a page at a time."""
        offset = int(cursor) if cursor is not None and cursor.isdigit() else 0
        catalogue = Shiro(cwd or os.getcwd(), self.settings, reporter=log.warning)
        with shiro_errors():
            found = await catalogue.sessions.list(offset + LIST_PAGE + 1, all_workspaces=cwd is None)
        page = found[offset : offset + LIST_PAGE]
        return ListSessionsResponse(
            sessions=[
                SessionInfo(session_id=s.id, cwd=s.cwd, title=s.title, updated_at=s.updated_at) for s in page
            ],
            next_cursor=str(offset + LIST_PAGE) if len(found) > offset + LIST_PAGE else None,
        )

    async def prompt(self, prompt: list[PromptBlock], session_id: str, **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        text = prompt_text(prompt)
        images = await self._kept_images(session, prompt_images(prompt))
        ticket = session.runtime.submit(text, images=images)
        session.tasks.add(ticket.task_id)
        try:
            outcome = await asyncio.shield(ticket.future)
        except asyncio.CancelledError:  # the connection is closing: stop the turn, keep what it did
            session.runtime.queue.cancel(ticket.task_id)
            raise
        finally:
            session.tasks.discard(ticket.task_id)
        await self._offer_commands(session)  # a command file added or edited meanwhile
        await self.outbox.drain()
        if outcome.stop_reason == "error":
            raise RequestError(MODEL_ERROR, outcome.error or "The turn failed.")
        return PromptResponse(stop_reason=STOP_REASONS[outcome.stop_reason])

    async def _offer_commands(self, session: AcpSession) -> None:
        """``available_commands_update`` when the commands differ from those last offered."""
        update = available_commands(await session.shiro.commands.current())
        if update != session.offered:
            session.offered = update
            self.outbox.put(session.id, update)

    async def _kept_images(self, session: AcpSession, images: list[PromptImage]) -> list[tuple[str, str]]:
        """The prompt's images kept as the panel keeps pasted ones; one that is no image is the prompt's error."""
        kept: list[tuple[str, str]] = []
        for image in images:
            try:
                data = base64.b64decode(image.data, validate=True)
                stored, _ = await session.shiro.add_image(image.name, data=data)
            except (binascii.Error, ValueError):
                raise RequestError(INVALID_PARAMS, f"{image.name}: the image data is not base64.") from None
            except ShiroError as error:
                raise RequestError(INVALID_PARAMS, error.message) from None
            kept.append((stored.id, stored.name))
        return kept

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None:
            log.info("session/cancel for an unknown session %s", session_id)
            return
        for task_id in list(session.tasks):
            session.runtime.queue.cancel(task_id)

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError(
                NOT_FOUND,
                f'No session "{session_id}" is open here. Start one with session/new, '
                "or open a saved one with session/load.",
                {"sessionId": session_id},
            )
        return session

    def _open(
        self, cwd: str, mcp_servers: list[McpServer] | None, additional: list[str] | None = None
    ) -> AcpSession:
        for name, path in [("cwd", cwd), *(("additionalDirectories", d) for d in additional or [])]:
            if not Path(path).is_absolute() or not Path(path).is_dir():
                raise RequestError(
                    INVALID_PARAMS, f"{name} must be the absolute path of a folder; got {path!r}."
                )
        opened: list[Shiro] = []

        def report(message: str) -> None:  # a problem found mid-turn (an MCP entry, an autosave)
            log.warning("%s", message)
            if opened:
                self.outbox.put(opened[0].sessions.current.id, notice(message))

        # cwd is the session's root; with additional directories the tools see every folder (the
        # language server's multi-root window, cwd first), and the state stays cwd's
        window = Workspaces(
            [(None, cwd), *((None, d) for d in additional or [])], self.settings.model_copy(), report
        )
        shiro = window.service(cwd)
        opened.append(shiro)
        if mcp_servers:  # the editor's servers: offered like the files' (each call asks)
            shiro.mcp.use_client_servers(mcp_entries(mcp_servers))
        frontend = AcpFrontend(shiro, self.outbox)
        runtime = shiro.start_agent(frontend, can_ask=True)
        # after the answer is out (the SDK import would compete with it), as the language server does
        asyncio.get_running_loop().call_later(WARM_UP_DELAY_S, runtime.warm_up)
        self._background(asyncio.to_thread(shiro.clean_stale_temp_files))
        return AcpSession(shiro, runtime, frontend)

    def _background(self, work: Coroutine[Any, Any, object]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for session in dict.fromkeys(self.sessions.values()):
            try:
                await session.close()
            except Exception as error:
                log.warning("closing session %s: %s", session.id, error)
        await self.outbox.close()


# --- stdio ----------------------------------------------------------------------------------------


async def protocol_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """stdin and the real stdout as asyncio streams; file descriptor 1 then points at stderr, so a
    stray print or a child that inherits it can never write into the protocol."""
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STDIO_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = os.fdopen(protocol_fd, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


def run(home: str | None, agent: str | None) -> int:
    settings, problems = load_settings({"home": home, "agent": agent})
    for problem in problems:
        log.warning("%s", problem)
    return asyncio.run(_serve(settings))


async def _serve(settings: Settings) -> int:
    reader, writer = await protocol_streams()
    agent = ShiroAcpAgent(settings)
    # A client that stops the agent with SIGTERM (the SDK's own spawner does, 2 s after closing
    # stdin) still gets the live sessions saved: the signal ends the connection like an EOF.
    serving = asyncio.ensure_future(
        # cast: the SDK routes only the methods an agent has (the rest answer "method not found")
        run_agent(cast(Agent, agent), writer, reader, stdio_buffer_limit_bytes=STDIO_LIMIT)
    )
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):  # no signal handlers off the main thread
        loop.add_signal_handler(signal.SIGTERM, serving.cancel)
    try:
        await serving
    except asyncio.CancelledError:
        if not serving.cancelled():
            raise
    finally:
        await agent.close()
    return 0
