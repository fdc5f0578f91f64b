"""Landlock's abstract-UNIX-socket scope (Linux 6.12, ABI 6) for a sandbox that shares the host's
network namespace (``bashSandboxNetwork``): the command can then connect only to abstract sockets
bound inside the sandbox, not to the host's (X11's ``@/tmp/.X11-unix/X0``, a D-Bus bus,
containerd's shims).

Run as a script inside bubblewrap (``python -I -S landlock.py CMD...``): it enters the scope and
execs the command, or exits 126 without running it. Only the standard library: nothing of Shiro's
is importable there.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys

CREATE_RULESET = 444
RESTRICT_SELF = 446
"""Syscall numbers (the same on every architecture since Linux 5.13)."""
CREATE_RULESET_VERSION = 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1
SCOPE_ABI = 6
PR_SET_NO_NEW_PRIVS = 38
REFUSED = 126


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


@functools.cache
def can_scope_abstract_sockets() -> bool:
    """Whether this kernel's Landlock can keep a process from the host's abstract sockets."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        abi = int(_libc().syscall(CREATE_RULESET, None, 0, CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return False
    return abi >= SCOPE_ABI


def enter_scope() -> str | None:
    """Scope this process (and what it starts) away from outside abstract sockets; None when
    done, else why not."""
    libc = _libc()
    attr = _RulesetAttr(0, 0, SCOPE_ABSTRACT_UNIX_SOCKET)
    fd = int(libc.syscall(CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0))
    if fd < 0:
        return f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}"
    try:
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return f"no_new_privs: {os.strerror(ctypes.get_errno())}"
        if libc.syscall(RESTRICT_SELF, fd, 0) != 0:
            return f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}"
    finally:
        os.close(fd)
    return None


def main(argv: list[str]) -> int:
    why_not = enter_scope()
    if why_not is not None:
        print(
            f"shiro sandbox: cannot scope abstract UNIX sockets ({why_not}); nothing was run.",
            file=sys.stderr,
        )
        return REFUSED
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
