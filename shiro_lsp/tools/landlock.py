"""Landlock (Linux 5.13 and later), run as a script in front of a bash command
(``python -I -S landlock.py [--write DIR]... [--no-network] [--scope] -- CMD...``): it restricts
itself, then execs the command, or exits 126 without running it. Only the standard library:
nothing of Shiro's is importable there.

Two uses:

- **The sandbox where bubblewrap is missing** (``bashSandbox: auto``): ``--write`` folders are the
  only places the command (and everything it starts) may create, change, rename or remove files;
  the rest of the filesystem stays readable. ``--no-network`` refuses TCP (ABI 4, Linux 6.7).
- **Inside bubblewrap**, with the network shared (``bashSandboxNetwork``): ``--scope`` keeps the
  command from the host's abstract UNIX sockets (X11's ``@/tmp/.X11-unix/X0``, a D-Bus bus,
  containerd's shims): ABI 6, Linux 6.12. Outside bubblewrap it is added whenever the kernel has it.
"""

from __future__ import annotations

import ctypes
import functools
import os
import stat
import sys

CREATE_RULESET = 444
ADD_RULE = 445
RESTRICT_SELF = 446
"""Syscall numbers (the same on every architecture since Linux 5.13)."""
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1
SCOPE_ABI = 6
NET_ABI = 4
PR_SET_NO_NEW_PRIVS = 38
REFUSED = 126

# LANDLOCK_ACCESS_FS_*: what changes the filesystem (reading and executing stay allowed everywhere)
WRITE_FILE = 1 << 1
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = (1 << n for n in range(6, 13))
REFER = 1 << 13  # ABI 2: rename and link across folders
TRUNCATE = 1 << 14  # ABI 3
WRITES_BY_ABI = (
    (1, WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO),
    (1, MAKE_BLOCK | MAKE_SYM),
    (2, REFER),
    (3, TRUNCATE),
)
FILE_WRITES = WRITE_FILE | TRUNCATE
"""What a rule on a file (not a folder) may allow."""
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


@functools.cache
def abi() -> int:
    """The kernel's Landlock ABI version (0: none, or not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = int(_libc().syscall(CREATE_RULESET, None, 0, CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(version, 0)


def can_scope_abstract_sockets() -> bool:
    """Whether this kernel's Landlock can keep a process from the host's abstract sockets."""
    return abi() >= SCOPE_ABI


def can_confine_writes() -> bool:
    """Whether this kernel's Landlock can keep a command's writes inside given folders."""
    return abi() >= 1


def _writes(version: int) -> int:
    return sum(bits for since, bits in WRITES_BY_ABI if version >= since)


def _error(what: str) -> str:
    return f"{what}: {os.strerror(ctypes.get_errno())}"


def restrict(writable: list[str], *, network: bool = True, scope: bool = False) -> str | None:
    """Restrict this process (and what it starts): files change only below ``writable`` (when
    given), no TCP unless ``network``, no outside abstract socket with ``scope``. None when done,
    else why not."""
    libc, version = _libc(), abi()
    writes = _writes(version) if writable else 0
    net = NET_BIND_TCP | NET_CONNECT_TCP if not network and version >= NET_ABI else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET if scope else 0
    attr = _RulesetAttr(writes, net, scoped)
    size = 24 if scoped else 16 if net else 8
    fd = int(libc.syscall(CREATE_RULESET, ctypes.byref(attr), size, 0))
    if fd < 0:
        return _error("landlock_create_ruleset")
    try:
        for folder in writable:
            problem = _allow_writes(libc, fd, folder, writes)
            if problem is not None:
                return problem
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return _error("no_new_privs")
        if libc.syscall(RESTRICT_SELF, fd, 0) != 0:
            return _error("landlock_restrict_self")
    finally:
        os.close(fd)
    return None


def _allow_writes(libc: ctypes.CDLL, ruleset: int, folder: str, writes: int) -> str | None:
    try:
        parent = os.open(folder, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return None  # a folder that is not there needs no rule
    try:
        if not stat.S_ISDIR(os.fstat(parent).st_mode):
            writes &= FILE_WRITES  # a folder's rights on a file are refused (EINVAL)
        rule = _PathBeneath(writes, parent)
        if libc.syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
            return _error(f"landlock_add_rule {folder}")
    finally:
        os.close(parent)
    return None


def main(argv: list[str]) -> int:
    writable: list[str] = []
    network, scope = True, False
    while argv and argv[0] != "--":
        option, *argv = argv
        if option == "--write" and argv:
            folder, *argv = argv
            writable.append(folder)
        elif option == "--no-network":
            network = False
        elif option == "--scope":
            scope = True
        else:
            print(f"shiro sandbox: unknown option {option}; nothing was run.", file=sys.stderr)
            return REFUSED
    command = argv[1:]
    why_not = restrict(writable, network=network, scope=scope) if command else "no command"
    if why_not is not None:
        print(f"shiro sandbox: cannot restrict the command ({why_not}); nothing was run.", file=sys.stderr)
        return REFUSED
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
