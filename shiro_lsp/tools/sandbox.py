"""Running bash inside bubblewrap (``bwrap``) when the user asks for it and the platform allows.

Modes (setting ``bashSandbox``):

- ``off`` (default): ``bash -c`` with the user's full rights; the approval card says so.
- ``auto``: sandboxed when bubblewrap is installed and works here, unsandboxed otherwise (and the
  card says which).
- ``required``: sandboxed or not at all (the call fails with the reason).

Inside the sandbox the whole filesystem is read-only except the workspace roots (read-write) and a
private ``/tmp``; ``/dev`` and ``/proc`` are fresh; the network is unshared unless
``bashSandboxNetwork`` is set; the command dies with the server.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from shiro_lsp.errors import ToolError

PROBE_TIMEOUT_S = 10.0

UNSANDBOXED_WARNING = (
    "bash runs unsandboxed: the command has your full access to every file you can read or change, "
    "including secrets files and everything outside the workspace, and to the network."
)
SANDBOXED_WARNING = (
    "bash runs sandboxed (bubblewrap): it can change files only inside the workspace; the rest of "
    "the filesystem is read-only (and readable, secrets included){network}."
)


@dataclass(frozen=True)
class Plan:
    sandboxed: bool
    why_not: str | None = None


@functools.cache
def probe() -> str | None:
    """None when bubblewrap can run a command here, else why not (checked once per process)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        done = subprocess.run(
            [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "true"],
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap could not start: {error}"
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bubblewrap cannot create a sandbox here ({detail[-1] if detail else done.returncode})"
    return None


def plan(mode: str) -> Plan:
    """Blocking (the first call probes bwrap): call through ``asyncio.to_thread``."""
    if mode == "off":
        return Plan(False, "bashSandbox is off")
    why_not = probe()
    if why_not is None:
        return Plan(True)
    if mode == "required":
        raise ToolError(
            f"bash is set to run only sandboxed (bashSandbox: required), but {why_not}. "
            "Nothing was run. Install bubblewrap, or set bashSandbox to auto or off."
        )
    return Plan(False, why_not)


def warning(mode: str, network: bool) -> str:
    """What the bash approval card says about where the command will run."""
    try:
        chosen = plan(mode)
    except ToolError as error:
        return error.message
    if chosen.sandboxed:
        return SANDBOXED_WARNING.format(network="; network allowed" if network else "; no network")
    if mode == "off":
        return UNSANDBOXED_WARNING
    return f"{UNSANDBOXED_WARNING} (Sandbox unavailable: {chosen.why_not}.)"


def wrap(argv: Sequence[str], roots: Sequence[Path], *, network: bool) -> list[str]:
    """``argv`` run inside bubblewrap with the roots writable."""
    bwrap = shutil.which("bwrap") or "bwrap"
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for root in roots:
        args += ["--bind", str(root), str(root)]
    if not network:
        args.append("--unshare-net")
    args += ["--unshare-pid", "--die-with-parent", "--new-session", "--chdir", str(roots[0]), "--"]
    return [*args, *argv]
