"""Headless front door (spec §8): `shiro-lsp run -p PROMPT [--json] [--yolo] [-c | -r ID]`.

One turn on the same engine as the editor. Text mode writes the answer to stdout and everything
else to stderr; `--json` writes one flat JSON object per event. Exit 1 on an `error` event.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import TextIO

from shiro_lsp.agent import events as ev
from shiro_lsp.agent.context_window import Meter
from shiro_lsp.agent.events import Emit, Event, event_json
from shiro_lsp.agent.setup import ApprovalRequest, Decision
from shiro_lsp.checkpoints.rows import TurnChangesView
from shiro_lsp.config import load_settings
from shiro_lsp.errors import ShiroError, os_error_text
from shiro_lsp.service import Shiro
from shiro_lsp.tools import KNOWN_SPECS

HEADLESS_DENIAL = (
    f"shiro: headless denies {', '.join(name for name, spec in KNOWN_SPECS.items() if spec.asks)} "
    "and mcp tools unless --yolo is passed (they are not offered to the model)"
)
"""No one can answer an approval here, so every tool that would ask is denied."""
ORIGIN_SAID = {"text": " (read from the model's text)", "shiro": " (run by Shiro: your prompt names it)"}


class HeadlessFrontend:
    def __init__(self, json_mode: bool, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> None:
        self.json_mode = json_mode
        self.out = out
        self.err = err
        self.failed = False

    def emitter(self, session_id: str, task_id: str) -> Emit:
        return self.emit

    def emit(self, event: Event) -> None:
        if isinstance(event, ev.Failed):
            self.failed = True
        if self.json_mode:
            self.out.write(json.dumps(event_json(event), ensure_ascii=False) + "\n")
            self.out.flush()
            return
        self._text(event)

    def _text(self, event: Event) -> None:
        match event:
            case ev.Text(text=text):
                self.out.write(text)
                self.out.flush()
            case ev.Done():
                self.out.write("\n")
            case ev.ToolCall(name=name, input=input, origin=origin):
                made_by = ORIGIN_SAID.get(origin, "")
                self._line(f"[tool] {name} {json.dumps(input, ensure_ascii=False)}{made_by}")
            case ev.ToolDenied(name=name, reason=reason):
                self._line(f"[denied] {name}: {reason}" if reason else f"[denied] {name}")
            case ev.ToolFailed(name=name, error=error):
                self._line(f"[tool-error] {name}: {error}")
            case ev.Notice(text=text):
                self._line(f"[notice] {text}")
            case ev.Retry(attempt=attempt, max_attempts=most, delay_seconds=delay, reason=reason):
                self._line(f"[retry] in {delay:g} s (attempt {attempt} of {most}): {reason}")
            case ev.Compacted(before=before, after=after):
                self._line(f"[compacted] {before} messages pruned to {after}")
            case ev.Failed(error=error):
                self._line(f"[error] {error}")
            case _:
                pass

    def _line(self, text: str) -> None:
        self.err.write(text + "\n")
        self.err.flush()

    async def approve(self, task_id: str, request: ApprovalRequest) -> Decision:
        return "deny"

    def todos_changed(self) -> None:
        pass

    def context_changed(self, meter: Meter) -> None:
        pass

    def changes_changed(self, view: TurnChangesView) -> None:
        if view.files and not self.json_mode:
            self._line(
                "[changed] " + ", ".join(f"{f.path} (+{f.additions} -{f.deletions})" for f in view.files)
            )


def main(args: argparse.Namespace) -> int:
    workspace = Path(args.workspace or os.getcwd())
    if not workspace.is_dir():
        why = "is not a folder" if workspace.exists() else "does not exist"
        print(f"shiro: the workspace {workspace} {why}; nothing was run.", file=sys.stderr)
        return 2
    prompt = args.prompt if args.prompt is not None else _stdin_prompt()
    if prompt is None:
        return 2
    if not _is_text(prompt):
        print("shiro: the prompt is not valid UTF-8 text; nothing was run.", file=sys.stderr)
        return 2
    if not prompt.strip():
        print("shiro: no prompt (pass -p PROMPT or pipe it on stdin)", file=sys.stderr)
        return 2
    return asyncio.run(_run(args, prompt))


def _stdin_prompt() -> str | None:
    """The prompt piped on stdin, or None (said why) when it is not UTF-8."""
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        print(
            f"shiro: the prompt on stdin is not valid UTF-8 (byte 0x{data[error.start]:02x} at offset "
            f"{error.start}); nothing was run.",
            file=sys.stderr,
        )
        return None


def _is_text(prompt: str) -> bool:
    """An argument the OS could not decode carries surrogates, which no session file can hold."""
    try:
        prompt.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


async def _run(args: argparse.Namespace, prompt: str) -> int:
    workspace = str(Path(args.workspace or os.getcwd()).resolve())
    settings, problems = load_settings({"home": args.home, "agent": args.agent})
    for problem in problems:
        print(f"shiro: {problem}", file=sys.stderr)
    shiro = Shiro(workspace, settings, reporter=lambda message: print(f"shiro: {message}", file=sys.stderr))
    frontend = HeadlessFrontend(args.json)
    runtime = shiro.start_agent(frontend, yolo=args.yolo, can_ask=False)
    try:
        if args.continue_:
            await shiro.sessions.resume(latest=True)
        elif args.resume:
            await shiro.sessions.resume(args.resume)
    except ShiroError as error:
        reference = "for this directory" if args.continue_ else f'matching "{args.resume}"'
        print(f"shiro: no saved session {reference} ({error.message})", file=sys.stderr)
        return 1
    if not args.yolo and not args.json:
        print(HEADLESS_DENIAL, file=sys.stderr)
    inputs = parse_inputs(args.input or [])
    if isinstance(inputs, str):
        print(f"shiro: {inputs}", file=sys.stderr)
        return 2
    images: list[tuple[str, str]] = []
    for file in args.image:
        try:
            kept, _ = await shiro.add_image(Path(file).name, data=Path(file).read_bytes())
        except (OSError, ShiroError) as error:
            reason = error.message if isinstance(error, ShiroError) else os_error_text(error)
            print(f"shiro: cannot send the image {file}: {reason}", file=sys.stderr)
            return 2
        images.append((kept.id, kept.name))
    ticket = runtime.submit(prompt, args.agent, inputs or None, images)
    outcome = await ticket.future
    await shiro.sessions.flush()
    return 1 if frontend.failed or outcome.stop_reason == "error" else 0


def parse_inputs(pairs: list[str]) -> dict[str, str] | str:
    """``--input name=value`` values for a custom command's ``${input:name}``, or what is wrong."""
    inputs: dict[str, str] = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name.strip():
            return f'--input takes name=value (got "{pair}")'
        inputs[name.strip()] = value
    return inputs


def _service(args: argparse.Namespace) -> Shiro:
    workspace = str(Path(args.workspace or os.getcwd()).resolve())
    settings, problems = load_settings({"home": args.home})
    for problem in problems:
        print(f"shiro: {problem}", file=sys.stderr)
    return Shiro(workspace, settings, reporter=lambda message: print(f"shiro: {message}", file=sys.stderr))


def commands_main(args: argparse.Namespace) -> int:
    """`shiro-lsp commands`: the custom commands `run -p "/name args"` can run, as /help lists them."""
    catalogue = _service(args).commands.load()
    if args.json:
        for c in catalogue.commands:
            row = {
                "name": c.name,
                "description": c.description,
                "argumentHint": c.argument_hint,
                "source": c.source,
                "scope": c.scope,
                "inputs": [{"name": v.name, "placeholder": v.placeholder} for v in c.inputs],
                "notes": list(c.notes),
                "error": c.error,
                "shadowedBy": c.shadowed_by,
            }
            print(json.dumps(row, ensure_ascii=False))
        return 0
    if not catalogue.commands:
        print(
            "No custom commands (.shiro/commands, .claude/commands, .github/prompts, or commands/ in the state root)."
        )
    for c in catalogue.commands:
        hint = f" {c.argument_hint}" if c.argument_hint else ""
        state = (
            f"  [{c.error}]"
            if c.error
            else f"  [not run: {c.shadowed_by} has this name]"
            if c.shadowed_by
            else ""
        )
        print(f"/{c.name}{hint} — {c.description} ({c.source}){state}")
        for v in c.inputs:
            print(f"    input {v.name}: {v.placeholder or '(no hint)'}  (give it with --input {v.name}=…)")
        for note in c.notes:
            print(f"    note: {note}")
    return 0


def hooks_main(args: argparse.Namespace) -> int:
    """`shiro-lsp hooks`: the hooks of the user and of the workspace, and trusting a workspace's."""
    hooks = _service(args).hooks
    try:
        if args.trust:
            listing = hooks.set_trust(args.trust, True)
        elif args.untrust:
            listing = hooks.set_trust(args.untrust, False)
        else:
            listing = hooks.listing()
    except ShiroError as error:
        print(f"shiro: {error.message}", file=sys.stderr)
        return 1
    if listing.restricted:
        print("No hook runs: the workspace is in restricted mode.")
    if not listing.hooks:
        print('No hooks (a "hooks" key in settings.json of the state root, or in .shiro/settings.json).')
    for status in listing.hooks:
        hook = status.hook
        state = "runs" if status.runs else "trusted" if status.trusted else "NOT TRUSTED: does not run"
        matcher = f" [{hook.matcher}]" if hook.matcher else ""
        print(f"{hook.event}{matcher} ({hook.source}, {state}) id {hook.fingerprint[:12]}")
        print(f"    {hook.command}")
    untrusted = [s for s in listing.hooks if not s.trusted]
    if untrusted:
        print("Trust one with: shiro-lsp hooks --trust ID (or --trust all); read each command first.")
    return 0
