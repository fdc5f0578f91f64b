"""The harnesses under test: how each is installed, started on a task, and read afterwards.

Shiro runs from the project's own venv through its headless CLI; Aider and qwen-code are installed from
the registries into ~/.cache/shiro-eval (never Shiro dependencies). Each run gets its own HOME.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("SHIRO_EVAL_CACHE", Path.home() / ".cache" / "shiro-eval"))
AIDER_VERSION = os.environ.get("EVAL_AIDER_VERSION", "0.86.2")
QWEN_CODE_PACKAGE = os.environ.get("EVAL_QWEN_CODE_PACKAGE", "@qwen-code/qwen-code")
HARNESSES = ("shiro", "aider", "qwen-code")
DEFAULT_URL = "http://127.0.0.1:8091/v1"
"""The model server's base URL unless one is given: scripts/realmodel's llama-server."""
_STRIPPED_ENV = ("OPENAI_", "SHIRO_", "AIDER_", "QWEN_", "ANTHROPIC_", "GEMINI_")
SHIRO_KNOBS = ("SHIRO_ADAPT_OFF", "SHIRO_MODEL_PROFILE")
"""The caller's settings Shiro's runs keep: the ablation switch and the model profile (shiro_lsp/adapt/)."""


@dataclass
class Invocation:
    argv: list[str]
    env: dict[str, str]
    cwd: Path


def base_env(home: Path) -> dict[str, str]:
    """The inherited environment without any model settings, with HOME pointing at the run's own folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_STRIPPED_ENV)}
    env |= {"HOME": str(home), "NO_COLOR": "1", "TERM": "dumb", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("VIRTUAL_ENV", None)
    return env


def shiro_command() -> Path:
    override = os.environ.get("EVAL_SHIRO_CMD")
    return Path(override) if override else PROJECT / ".venv" / "bin" / "shiro-lsp"


def aider_command() -> Path:
    return CACHE / "aider-venv" / "bin" / "aider"


def qwen_command() -> Path:
    return CACHE / "qwen-code" / "node_modules" / ".bin" / "qwen"


def _say(message: str) -> None:
    print(f"eval: {message}", file=sys.stderr, flush=True)


def ensure_installed(harness: str) -> None:
    """Install a peer harness into the cache on first use (PyPI / npm only)."""
    if harness == "shiro":
        if not shiro_command().exists():
            raise SystemExit(f"eval: {shiro_command()} is missing; run `make venv` first")
    elif harness == "aider":
        if aider_command().exists():
            return
        venv = CACHE / "aider-venv"
        _say(f"installing aider-chat=={AIDER_VERSION} into {venv} (PyPI; a few minutes)")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", f"aider-chat=={AIDER_VERSION}"], check=True,
            stdout=sys.stderr,
        )  # fmt: skip
    elif harness == "qwen-code":
        if qwen_command().exists():
            return
        prefix = CACHE / "qwen-code"
        prefix.mkdir(parents=True, exist_ok=True)
        if not shutil.which("npm"):
            raise SystemExit("eval: qwen-code needs node and npm on PATH")
        _say(f"installing {QWEN_CODE_PACKAGE} into {prefix} (npm)")
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), QWEN_CODE_PACKAGE], check=True,
            stdout=sys.stderr,
        )  # fmt: skip
    else:
        raise SystemExit(f"eval: unknown harness {harness!r} (known: {', '.join(HARNESSES)})")


def version(harness: str) -> str:
    try:
        if harness == "shiro" and os.environ.get("EVAL_SHIRO_CMD"):
            return f"shiro (EVAL_SHIRO_CMD={os.environ['EVAL_SHIRO_CMD']})"
        if harness == "shiro":
            commit = subprocess.run(
                ["git", "-C", str(PROJECT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
            ).stdout.strip()
            dirty = subprocess.run(
                ["git", "-C", str(PROJECT), "status", "--porcelain", "shiro_lsp"],
                capture_output=True,
                text=True,
            ).stdout.strip()
            return f"shiro {commit}{'+dirty' if dirty else ''}"
        argv = [str(aider_command() if harness == "aider" else qwen_command()), "--version"]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=base_env(Path.home()))
        last = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else "?"
        return last if last.lower().startswith(harness.split("-")[0]) else f"{harness} {last}"
    except (OSError, subprocess.SubprocessError):
        return f"{harness} ?"


def invocation(harness: str, prompt: str, ws: Path, home: Path, url: str, model: str) -> Invocation:
    """The command line and environment of one run. ``url`` is the recording proxy's base URL."""
    env = base_env(home)
    if harness == "shiro":
        env |= {"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "x", "SHIRO_MODEL": model, "SHIRO_HOME": str(home)}
        env |= {knob: os.environ[knob] for knob in SHIRO_KNOBS if os.environ.get(knob)}
        argv = [str(shiro_command()), "run", "-p", prompt, "--json", "--yolo",
                "--workspace", str(ws), "--home", str(home / "shiro-state")]  # fmt: skip
        return Invocation(argv, env, ws)
    if harness == "aider":
        env |= {
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "AIDER_ANALYTICS": "false",
            "AIDER_CHECK_UPDATE": "false",
        }
        # A small workspace's files all go into the chat; in a git repository (the repository set) Aider
        # finds them itself with its repository map, as its user would let it, and commits nothing.
        in_git = (ws / ".git").is_dir()
        files = [] if in_git else sorted(
            str(p.relative_to(ws)) for p in ws.rglob("*") if p.is_file() and "__pycache__" not in p.parts
        )  # fmt: skip
        git = ["--no-auto-commits", "--no-dirty-commits", "--no-gitignore"] if in_git else ["--no-git"]
        argv = [
            str(aider_command()), "--yes-always", *git, "--model", f"openai/{model}",
            "--openai-api-base", url, "--openai-api-key", "x", "--analytics-disable", "--no-check-update",
            "--no-show-release-notes", "--no-show-model-warnings", "--no-pretty", "--no-fancy-input",
            "--chat-history-file", str(home / "aider.chat.history.md"),
            "--input-history-file", str(home / "aider.input.history"),
            "--message", prompt, *files,
        ]  # fmt: skip
        return Invocation(argv, env, ws)
    if harness == "qwen-code":
        env |= {"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "x", "OPENAI_MODEL": model}
        settings = home / ".qwen" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(
            json.dumps(
                {"selectedAuthType": "openai", "security": {"auth": {"selectedType": "openai"}},
                 "usageStatisticsEnabled": False, "privacy": {"usageStatisticsEnabled": False},
                 "telemetry": {"enabled": False}, "checkForUpdates": False, "disableAutoUpdate": True}
            )
        )  # fmt: skip
        return Invocation([str(qwen_command()), "--yolo", "-p", prompt], env, ws)
    raise SystemExit(f"eval: unknown harness {harness!r}")


def shiro_events(stdout: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
    return events


_TOOL_EVENTS = ("tool-call", "tool-result", "tool-error", "tool-denied", "tool-start")


def shiro_final_text(events: list[dict[str, Any]]) -> str:
    """The answer's text after the turn's last tool event; or, when the turn's last reply wrote files
    out and said what it did (its calls were read from its text, and no request followed), that
    reply's text: the answer the user reads, above the cards of the files it wrote."""
    last = max((i for i, e in enumerate(events) if e.get("type") in _TOOL_EVENTS), default=-1)
    after = "".join(str(e.get("text", "")) for e in events[last + 1 :] if e.get("type") == "text")
    if after.strip() or last < 0:
        return after
    said = max((i for i, e in enumerate(events[:last]) if e.get("type") == "text"), default=-1)
    tail = events[said + 1 : last + 1]
    calls = [e for e in tail if e.get("type") == "tool-call"]
    if said < 0 or not calls or any(e.get("origin") != "text" for e in calls):
        return after
    start = said
    while start > 0 and events[start - 1].get("type") == "text":
        start -= 1
    return "".join(str(e.get("text", "")) for e in events[start : said + 1])
