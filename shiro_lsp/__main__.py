"""Front door: `python -m shiro_lsp [--stdio | --tcp PORT]`, `shiro-lsp run ...`, `shiro-lsp mcp ...`,
`shiro-lsp acp ...`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import traceback
from typing import Any

SLOW_CALLBACK_ENV = "SHIRO_SLOW_CALLBACK_MS"


def _watch_slow_callbacks() -> None:
    """With ``SHIRO_SLOW_CALLBACK_MS=N``, every callback that holds the event loop longer than N ms
    is logged with its wall and CPU time and the code it ran (``shiro_lsp.loopwatch``), and the
    loop runs in asyncio's debug mode (thread-safety checks, unretrieved errors). Tests use it to
    prove nothing blocks the loop; it costs speed, so it is off by default."""
    value = os.environ.get(SLOW_CALLBACK_ENV, "")
    if not value.isdigit():
        return
    from shiro_lsp.loopwatch import LoopWatch

    LoopWatch(int(value) / 1000).install()
    # Debug mode also records a stack for every handle and future it creates, which stats every
    # source file on the stack: on a busy machine that alone takes longer than the threshold.
    from asyncio import format_helpers

    format_helpers.extract_stack = lambda *args, **kwargs: traceback.StackSummary()

    class WatchedLoops(asyncio.DefaultEventLoopPolicy):
        def new_event_loop(self) -> asyncio.AbstractEventLoop:
            loop = super().new_event_loop()
            loop.set_debug(True)
            loop.slow_callback_duration = 3600.0  # the watch reports slow callbacks, with more facts
            return loop

    asyncio.set_event_loop_policy(WatchedLoops())


def _serve(args: argparse.Namespace) -> int:
    from shiro_lsp.server.app import create_server

    _watch_slow_callbacks()
    server = create_server()
    if args.tcp is not None:
        server.start_tcp("127.0.0.1", args.tcp)
    else:
        server.start_io()
        if server.stop_reason is not None:
            return 1  # the reason is logged; the client sees the exit and restarts the server
    return 0


def _mcp(args: argparse.Namespace) -> int:
    from shiro_lsp.mcp_server import run

    return run(args.workspace, args.home, args.allow_write)


def _acp(args: argparse.Namespace) -> int:
    from shiro_lsp.acp.agent import run  # the engine and the ACP SDK load only for this command

    _watch_slow_callbacks()
    return run(args.home, args.agent)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shiro-lsp", description="Shiro, an AI coding agent, as a language server."
    )
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="speak LSP on stdin/stdout (the default)")
    transport.add_argument("--tcp", type=int, metavar="PORT", help="speak LSP on 127.0.0.1:PORT")
    parser.add_argument("--log-level", default="INFO", help="log level for stderr (default INFO)")
    parser.set_defaults(func=_serve)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    _add_run(commands)
    mcp = commands.add_parser(
        "mcp", help="serve project notes and memory to other agents over MCP (stdio)", description=None
    )
    mcp.add_argument("--allow-write", action="store_true", help="allow changes (read-only without it)")
    mcp.add_argument("--workspace", metavar="DIR", help="the project folder (default: the current folder)")
    mcp.add_argument("--home", metavar="DIR", help="the state root (default: $SHIRO_HOME/.shiro-neko)")
    mcp.set_defaults(func=_mcp)
    acp = commands.add_parser(
        "acp", help="be an agent for ACP editors (Zed, JetBrains, Neovim) on stdin/stdout", description=None
    )
    acp.add_argument("--home", metavar="DIR", help="the state root (default: $SHIRO_HOME/.shiro-neko)")
    acp.add_argument("--agent", default=None, help="default, quick, deep, plan or review")
    acp.set_defaults(func=_acp)
    _add_lists(commands)
    return parser


def _add_lists(subparsers: Any) -> None:
    listing = subparsers.add_parser("commands", help="list the custom commands (/name) run -p can run")
    listing.add_argument("--workspace", default=None, help="the workspace (default: the current directory)")
    listing.add_argument("--home", default=None, help="the state root (default: $SHIRO_HOME/.shiro-neko)")
    listing.add_argument("--json", action="store_true", help="one JSON object per command")
    listing.set_defaults(func=_commands)
    hooks = subparsers.add_parser("hooks", help="list the hooks; trust or untrust a workspace's")
    hooks.add_argument("--workspace", default=None, help="the workspace (default: the current directory)")
    hooks.add_argument("--home", default=None, help="the state root (default: $SHIRO_HOME/.shiro-neko)")
    trust = hooks.add_mutually_exclusive_group()
    trust.add_argument(
        "--trust", nargs="+", metavar="ID", help="trust these hooks of .shiro/settings.json (or: all)"
    )
    trust.add_argument("--untrust", nargs="+", metavar="ID", help="stop trusting them (or: all)")
    hooks.set_defaults(func=_hooks)


def _commands(args: argparse.Namespace) -> int:
    from shiro_lsp.headless import commands_main

    return commands_main(args)


def _hooks(args: argparse.Namespace) -> int:
    from shiro_lsp.headless import hooks_main

    return hooks_main(args)


def _add_run(subparsers: Any) -> None:
    run = subparsers.add_parser("run", help="run one turn headless and print its events")
    run.add_argument("-p", "--prompt", help="the prompt (default: read from stdin)")
    run.add_argument("--json", action="store_true", help="one JSON object per event on stdout")
    run.add_argument("--yolo", action="store_true", help="allow every tool the guard does not refuse")
    resume = run.add_mutually_exclusive_group()
    resume.add_argument(
        "-c", "--continue", dest="continue_", action="store_true", help="continue the newest session here"
    )
    resume.add_argument(
        "-r", "--resume", metavar="ID", help="continue the session with this id (or unique prefix)"
    )
    run.add_argument("--workspace", default=None, help="the workspace (default: the current directory)")
    run.add_argument("--home", default=None, help="the state root (default: $SHIRO_HOME/.shiro-neko)")
    run.add_argument("--agent", default=None, help="default, quick, deep, plan or review")
    run.add_argument(
        "--input",
        action="append",
        metavar="NAME=VALUE",
        help="a value for a custom command's ${input:NAME} (repeat for each)",
    )
    run.add_argument(
        "--image",
        action="append",
        default=[],
        metavar="FILE",
        help="an image to send with the prompt (repeat for more; PNG, JPEG, GIF, WebP, BMP)",
    )
    run.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from shiro_lsp.headless import main as run_headless  # the engine loads only for this command

    return run_headless(args)


class RedactingFormatter(logging.Formatter):
    """Every log line, traceback included, goes through the secrets policy's one redactor (key
    formats, passwords and tokens in URLs, Authorization headers): API keys never reach a log, even
    at DEBUG where pygls prints every message, nor do tokens an MCP server writes to its stderr."""

    def __init__(self, fmt: str) -> None:
        from shiro_lsp.fs.secrets import Redactor

        super().__init__(fmt)
        self.redactor = Redactor()

    def format(self, record: logging.LogRecord) -> str:
        return self.redactor.redact(super().format(record))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # stdout is the JSON-RPC channel: logs go to stderr, always.
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper())
    for handler in logging.getLogger().handlers:
        handler.setFormatter(RedactingFormatter("%(levelname)s %(name)s: %(message)s"))
    for noisy in ("pygls", "httpx2", "openai"):  # one line per message or HTTP request: DEBUG only
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
