"""Running bash inside a sandbox: bubblewrap (``bwrap``), or Landlock where bubblewrap is missing.

Modes (setting ``bashSandbox``):

- ``auto`` (default): bubblewrap when it is installed and works here; else, on Linux 5.13 and later,
  Landlock, which keeps the command's writes inside the workspace folders and the temporary folders
  (it reads everything, and reaches the host's sockets and processes); else unsandboxed, said once
  with how to get a sandbox (:func:`unavailable_notice`), and on every approval card.
- ``required``: bubblewrap or not at all (the call fails with the reason).
- ``off``: ``bash -c`` with the user's full rights; the approval card says so.

The network is kept (``bashSandboxNetwork``, default on) unless the user turns it off.

What a command sandboxed by bubblewrap can reach is :data:`REACH`, one list (README "Security"
repeats it, and ``tests/e2e/test_sandbox_reach_lsp.py`` walks it whole); :func:`wrap` builds
bubblewrap's arguments from the same decisions. Shiro's state root is hidden from it wherever it lies.

What remains: a UNIX socket bound by path in another network namespace (a container's) under a
folder none of the rules above hides, or bound after the command started, can be reached; with
``bashSandboxNetwork`` on a kernel without Landlock scoping (before Linux 6.12) the host's abstract
UNIX sockets can be too (the approval card says so).
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.secrets import private_roots
from shiro_lsp.tools import landlock

PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Reach:
    name: str
    rule: str


REACH: tuple[Reach, ...] = (
    Reach("read", "the whole filesystem, read-only (secrets files included), except Shiro's state root"),
    Reach("write", "the workspace folders only (read-write); everything else is read-only"),
    Reach("tmp", "/tmp, /var/tmp, /run (so /var/run) and $XDG_RUNTIME_DIR: private and empty"),
    Reach(
        "devices",
        "a fresh /dev with null, zero, full, random, urandom, tty, a private pts and shm; no disks, "
        "no GPU, no host terminal",
    ),
    Reach(
        "path sockets",
        "only those the command binds itself: the host's (ssh agent, Docker, D-Bus, X11) are in the "
        "hidden folders above, and every other socket the host listens on by path is masked, in the "
        "workspace too",
    ),
    Reach(
        "abstract sockets",
        "none of the host's: the command has its own network namespace; with the network allowed, "
        "a Landlock scope (Linux 6.12 and later) keeps them out",
    ),
    Reach("network", "the host's, unless bashSandboxNetwork is off (then none but loopback)"),
    Reach(
        "processes",
        "its own: a private PID namespace and session; none outlives the command, and it dies with "
        "the server",
    ),
    Reach(
        "environment",
        "the server's minus the provider's keys and secret-shaped names (tools/environment.py)",
    ),
)
"""What a sandboxed command can reach: the one list (README "Security" says the same)."""

HIDDEN_DIRS = ("/tmp", "/var/tmp", "/run", "/var/run")
"""Where the host's runtime files and sockets live: each gets a private, empty tmpfs."""
KEPT_FILES = ("/etc/resolv.conf",)
"""Files the system reads that may point into a hidden folder (systemd-resolved's stub): bound
back read-only."""

UNSANDBOXED_WARNING = (
    "bash runs unsandboxed: the command has your full access to every file you can read or change, "
    "including secrets files and everything outside the workspace, and to the network."
)
SANDBOXED_WARNING = (
    "bash runs sandboxed (bubblewrap): it can change files only inside the workspace; the rest of "
    "the filesystem is read-only (and readable, secrets included){network}."
)
ABSTRACT_OPEN = " (this kernel cannot keep the host's abstract UNIX sockets out: no Landlock scoping)"


LANDLOCK_WARNING = (
    "bash runs sandboxed (Landlock; bubblewrap is not installed): it can change files only inside the "
    "workspace and the temporary folders, never in Shiro's state folder; it can read everything (secrets included) and reach the "
    "host's sockets and processes{network}."
)
UNAVAILABLE_NOTICE = (
    "bash commands run unsandboxed here: {why_not}, and this kernel has no Landlock. Install "
    "bubblewrap (for example `sudo apt install bubblewrap`) to sandbox them; shiro.bashSandbox: off "
    "silences this."
)
TEMPORARY_FOLDERS = ("/tmp", "/var/tmp", "/dev")
"""Where a command confined by Landlock may write besides the workspace (devices: /dev/null, a tty)."""
MAX_SPLIT_ENTRIES = 1000
"""At most this many entries are granted one by one around Shiro's state root (see
:func:`landlock_writable`); more, and bash is not run under Landlock at all."""
TOO_MANY_ENTRIES = (
    "bash was not run: Shiro's state folder {private} lies inside {folder}, a folder Landlock would let "
    "the command change, and that folder has too many entries to grant one by one (over {limit}), so "
    "Landlock cannot keep the command out of Shiro's state. Install bubblewrap (for example `sudo apt "
    "install bubblewrap`), or set shiro.home to a folder outside the workspace."
)


@dataclass(frozen=True)
class Plan:
    sandboxed: bool
    why_not: str | None = None
    kind: Literal["bubblewrap", "landlock"] | None = None


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
        return Plan(True, kind="bubblewrap")
    if mode == "required":
        raise ToolError(
            f"bash is set to run only sandboxed (bashSandbox: required), but {why_not}. "
            "Nothing was run. Install bubblewrap, or set bashSandbox to auto or off."
        )
    if landlock.can_confine_writes():
        return Plan(True, why_not, kind="landlock")
    return Plan(False, why_not)


_said_unavailable = False


def unavailable_notice(mode: str) -> str | None:
    """What the user is told, once per server, when ``auto`` finds no sandbox at all (None after
    that, or when there is one). Blocking, as :func:`plan`."""
    global _said_unavailable
    if mode != "auto" or _said_unavailable:
        return None
    chosen = plan(mode)
    if chosen.sandboxed:
        return None
    _said_unavailable = True
    return UNAVAILABLE_NOTICE.format(why_not=chosen.why_not)


def warning(mode: str, network: bool) -> str:
    """What the bash approval card says about where the command will run."""
    try:
        chosen = plan(mode)
    except ToolError as error:
        return error.message
    if chosen.kind == "landlock":
        return LANDLOCK_WARNING.format(network="" if network else "; no TCP network")
    if chosen.sandboxed:
        if not network:
            return SANDBOXED_WARNING.format(network="; no network")
        scoped = landlock.can_scope_abstract_sockets()
        return SANDBOXED_WARNING.format(network="; network allowed" + ("" if scoped else ABSTRACT_OPEN))
    if mode == "off":
        return UNSANDBOXED_WARNING
    return f"{UNSANDBOXED_WARNING} (Sandbox unavailable: {chosen.why_not}.)"


def _helper(*options: str) -> list[str]:
    """The Landlock helper run in front of a command (its own interpreter, isolated)."""
    return [os.path.realpath(sys.executable), "-I", "-S", os.path.realpath(landlock.__file__), *options, "--"]


def wrap_landlock(argv: Sequence[str], roots: Sequence[Path], *, network: bool) -> list[str]:
    """``argv`` confined by Landlock: writes only below the workspace folders and the temporary
    ones, never in Shiro's state root (:func:`landlock_writable`). Blocking (it may list a folder)."""
    allowed = [
        folder
        for folder in (*(str(root) for root in roots), *TEMPORARY_FOLDERS, os.environ.get("TMPDIR", ""))
        if folder.startswith("/")
    ]
    private = [str(root) for root in private_roots()]
    writable = landlock_writable(allowed, private)
    if isinstance(writable, Refused):
        raise ToolError(
            TOO_MANY_ENTRIES.format(private=writable.private, folder=writable.folder, limit=MAX_SPLIT_ENTRIES)
        )
    options: list[str] = []
    for folder in writable:
        options += ["--write", folder]
    if not network:
        options.append("--no-network")
    if landlock.can_scope_abstract_sockets():
        options.append("--scope")
    return [*_helper(*options), *argv]


@dataclass(frozen=True)
class Refused:
    """:func:`landlock_writable` could not grant ``folder`` without ``private``."""

    folder: str
    private: str


def landlock_writable(allowed: Sequence[str], private: Sequence[str]) -> list[str] | Refused:
    """The paths a Landlock rule lets a command change (each with everything below it): the
    ``allowed`` folders, but never a ``private`` one (Shiro's state root) or anything in it.

    A Landlock rule cannot except a subtree, so a folder that holds a private one (the home folder
    opened as the workspace, the state root inside it) is granted entry by entry: every entry but
    the one leading to the private folder, which is split the same way. A symbolic link among them
    is left out (a rule follows it, wherever it points). The folder itself is then not granted:
    the command can change what is inside its entries, but cannot add, remove or rename an entry
    of it. Refused when that takes more than :data:`MAX_SPLIT_ENTRIES` entries."""
    reals = [os.path.realpath(p) for p in private]
    out: list[str] = []
    budget = [MAX_SPLIT_ENTRIES]
    for folder in allowed:
        real = os.path.realpath(folder)
        if any(_under(real, p) for p in reals):
            continue  # inside Shiro's state: nothing of it
        inside = [p for p in reals if _under(p, real)]
        if not inside:
            out.append(folder)
            continue
        refused = _split(real, inside, out, budget)
        if refused is not None:
            return Refused(folder, refused)
    return list(dict.fromkeys(out))


def _split(folder: str, inside: list[str], out: list[str], budget: list[int]) -> str | None:
    """Grant ``folder``'s entries but the ones holding ``inside`` (split in turn); the private
    folder that made it refuse, or None."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None  # not listable: nothing of it is granted
    if len(names) > budget[0]:
        return inside[0]
    budget[0] -= len(names)
    for name in names:
        path = os.path.join(folder, name)
        inner = [p for p in inside if _under(p, path)]
        if inner:
            if path not in inner:
                refused = _split(path, inner, out, budget)
                if refused is not None:
                    return refused
            continue
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                continue
        except OSError:
            continue
        out.append(path)
    return None


def wrap(argv: Sequence[str], roots: Sequence[Path], *, network: bool) -> list[str]:
    """``argv`` run inside bubblewrap as :data:`REACH` says. Blocking (it reads the host's socket
    table): call through ``asyncio.to_thread``."""
    bwrap = shutil.which("bwrap") or "bwrap"
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    hidden = _hidden_dirs()
    for folder in hidden:
        args += ["--tmpfs", folder]
    for kept in KEPT_FILES:
        real = os.path.realpath(kept)
        if real != kept and any(_under(real, folder) for folder in hidden) and os.path.isfile(real):
            args += ["--ro-bind", real, real]
    for root in roots:
        args += ["--bind", str(root), str(root)]
    for socket in _listening_sockets(hidden, roots):
        args += ["--ro-bind", "/dev/null", socket]
    for private in map(str, private_roots()):  # Shiro's state root (blobs of secrets files): hidden
        if os.path.isdir(private) and not any(_under(private, folder) for folder in hidden):
            args += ["--tmpfs", private]
    scope = network and landlock.can_scope_abstract_sockets()
    helper = _helper("--scope")
    if scope:  # Shiro's own interpreter and helper may live in a hidden folder (a checkout in /tmp)
        for path in (helper[0], helper[3], os.path.realpath(sys.base_prefix)):
            if any(_under(path, folder) for folder in hidden):
                args += ["--ro-bind", path, path]
    if not network:
        args.append("--unshare-net")
    args += ["--unshare-pid", "--die-with-parent", "--new-session", "--chdir", str(roots[0]), "--"]
    return [*args, *(helper if scope else []), *argv]


def _hidden_dirs() -> list[str]:
    """:data:`HIDDEN_DIRS` and ``$XDG_RUNTIME_DIR``, each real folder once (``/var/run`` is
    usually a link to ``/run``), outer ones first."""
    found: list[str] = []
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    for folder in (*HIDDEN_DIRS, *([runtime] if runtime.startswith("/") else [])):
        real = os.path.realpath(folder)
        if os.path.isdir(real) and not any(_under(real, done) for done in found):
            found.append(real)
    return sorted(found, key=len)


def _listening_sockets(hidden: Sequence[str], roots: Sequence[Path]) -> list[str]:
    """The paths of the UNIX sockets bound in this network namespace (``/proc/net/unix``) that the
    command would see: outside the hidden folders, or inside a workspace folder (a socket there
    is a door to a process outside the sandbox all the same)."""
    try:
        with open("/proc/net/unix", encoding="utf-8", errors="surrogateescape") as table:
            lines = table.read().splitlines()[1:]
    except OSError:
        return []
    found: set[str] = set()
    for line in lines:
        fields = line.split(maxsplit=7)
        if len(fields) < 8 or not fields[7].startswith("/"):
            continue  # unnamed, or abstract (@name)
        path = os.path.realpath(fields[7])
        in_root = any(_under(path, os.path.realpath(root)) for root in roots)
        if path in found or (not in_root and any(_under(path, folder) for folder in hidden)):
            continue
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                found.add(path)
        except OSError:
            continue
    return sorted(found)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")
