"""The one way Shiro runs git itself (the git tools, the checkpoint scans): no command that a
configuration file chooses ever runs (issue 20).

A repository's ``.git/config`` (and what it includes, and the user's global config when the home
folder is the workspace) is written by whoever wrote the repository, or by a sandboxed command. Git
runs many commands named there; Shiro's own git runs unsandboxed, so every one of them is turned off
with git's own mechanisms, which win over every configuration file:

- ``core.fsmonitor`` (run by ``status`` and ``diff``): ``false``.
- hooks (``core.hooksPath``, ``.git/hooks/*``; ``post-index-change``, ``reference-transaction``...):
  ``core.hooksPath=/dev/null``.
- pagers (``core.pager``, ``pager.<cmd>``, ``GIT_PAGER``, ``PAGER``): ``--no-pager``, ``core.pager=cat``.
- external diff (``diff.external``, ``diff.<driver>.command``, ``GIT_EXTERNAL_DIFF``) and textconv
  (``diff.<driver>.textconv``): ``--no-ext-diff`` and ``--no-textconv`` on ``diff``, ``show`` and
  ``log``, ``--no-textconv`` on ``blame``.
- filters (``filter.<driver>.clean``, ``.smudge``, ``.process``; run by ``status``, ``diff`` and
  ``cat-file --filters``): every driver the configuration names, read with ``git config`` right
  before the run, is given empty commands and ``required=false`` (an empty command is no filter);
  git is not run when a driver's name holds ``=`` (``-c`` could not name it).
  A driver added between those two git processes would run: nothing else runs meanwhile in a
  sandboxed turn (a sandboxed command's processes end with it), and an unsandboxed one already had
  the user's full rights.
- signatures (``log.showSignature`` with ``gpg.program``, ``gpg.<format>.program``):
  ``log.showSignature=false`` and every program ``false``.
- transports, which a partial clone's lazy fetch could start (``core.sshCommand``, ``core.gitProxy``,
  ``remote.<name>.uploadpack``/``vcs``, ``ext::`` URLs, ``credential.helper``, ``core.askPass``):
  ``protocol.allow=never``, ``credential.helper=`` (empties the list), ``core.sshCommand=false``,
  ``core.askPass=false``, ``GIT_NO_LAZY_FETCH=1``, ``GIT_TERMINAL_PROMPT=0``.
- editors (``core.editor``, ``sequence.editor``; no read-only command opens one): ``false``.
- automatic maintenance (``gc.auto``, ``maintenance.auto``): off. Index refreshes that write
  (``diff.autoRefreshIndex``, optional locks): off, ``GIT_OPTIONAL_LOCKS=0``.
- submodules: ``status`` and ``diff`` take ``--ignore-submodules=dirty``, so git never starts
  itself inside a submodule (whose own configuration the list above was not read from).
- a bare repository shipped inside the workspace (its ``config`` is the attacker's too):
  ``safe.bareRepository=explicit``, so git never takes a folder for one by discovery.
- ``core.worktree``, which would point git at files outside the workspace: ``--work-tree`` is
  always the folder holding the ``.git`` found from the workspace (what it is for a plain clone,
  a linked worktree or a submodule).
- a file read from a path the configuration names and shown back in an error
  (``blame.ignoreRevsFile``: its first bad line): ``blame --no-ignore-revs-file``.

Not run by the subcommands Shiro uses (documented so a new use checks them): ``alias.*`` (a
builtin's name is never an alias), ``difftool.*``, ``mergetool.*``, ``merge.<driver>.driver``,
``sendemail.*``, ``web.browser``/``browser.*``, ``man.*``, ``instaweb.*``, ``trailer.*.cmd``,
``core.alternateRefsCommand``, ``uploadpack.packObjectsHook``, ``submodule.<name>.update``,
``imap.tunnel``, ``guitool.*.cmd``.

The environment is built from a short allow-list (``PATH``, ``HOME``, ``XDG_CONFIG_HOME``, ``TZ``,
``TMPDIR``), so no ``GIT_DIR``, ``GIT_CONFIG_*``, ``GIT_EXEC_PATH``, ``GIT_SSH*`` or provider key
reaches git. The system and global configuration are still read: they are the user's own (ignore
rules in ``core.excludesFile``, ``core.autocrlf``, ``safe.directory``) and matter to what status
reports; the overrides above beat them as they beat the repository's.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

GIT_TIMEOUT_S = 60.0
MAX_STDERR = 65_536

SAFE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("core.askPass", "false"),
    ("core.sshCommand", "false"),
    ("protocol.allow", "never"),
    ("credential.helper", ""),
    ("log.showSignature", "false"),
    ("gpg.program", "false"),
    ("gpg.openpgp.program", "false"),
    ("gpg.x509.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("diff.autoRefreshIndex", "false"),
    ("status.submoduleSummary", "false"),
    ("safe.bareRepository", "explicit"),
    ("color.ui", "never"),
    ("core.quotePath", "off"),
)
"""Configuration that beats every file's (see the module's text)."""

SAFE_ENV: Mapping[str, str] = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "LC_ALL": "C",
}
KEPT_ENV = ("PATH", "HOME", "XDG_CONFIG_HOME", "TZ", "TMPDIR")
"""All that git gets from the server's environment."""

SUBCOMMAND_FLAGS: Mapping[str, tuple[str, ...]] = {
    "diff": ("--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty"),
    "show": ("--no-ext-diff", "--no-textconv"),
    "log": ("--no-ext-diff", "--no-textconv"),
    "blame": ("--no-textconv", "--no-ignore-revs-file"),
    "status": ("--ignore-submodules=dirty",),
}
"""Flags put right after the subcommand: off switches that exist only as options."""

DRIVER_COMMANDS = r"^filter\..+\.(clean|smudge|process)$"
FILTER_OFF = (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false"))


@dataclass(frozen=True)
class GitRun:
    code: int | None
    """git's exit code; None when it could not start, was stopped at the timeout, or the
    configuration could not be read (``problem`` says which)."""
    out: bytes
    err: str
    truncated: bool = False
    """stdout passed ``limit``: git was stopped there and ``out`` is its head."""
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.code == 0 or self.truncated


def run_git(
    cwd: Path,
    args: Sequence[str],
    *,
    stdin: bytes | None = None,
    timeout: float = GIT_TIMEOUT_S,
    limit: int | None = None,
) -> GitRun:
    """``git <args>`` in ``cwd`` with every configured command off. Blocking: async callers use
    ``asyncio.to_thread``."""
    drivers = _configured_drivers(cwd, timeout)
    if isinstance(drivers, GitRun):
        return drivers
    if any("=" in key for key in drivers):
        return GitRun(
            None, b"", "", problem="git was not run: a filter driver's name in its configuration holds '='"
        )
    overrides = [*SAFE_CONFIG, *_filters_off(drivers)]
    return _run(cwd, _argv(overrides, [*_work_tree(cwd), *args]), _env(), stdin, timeout, limit)


def _work_tree(cwd: Path) -> list[str]:
    """``--work-tree`` at the folder that holds the ``.git`` git finds from ``cwd``: a
    ``core.worktree`` pointing elsewhere (above the workspace, say) is not followed."""
    for folder in (cwd, *cwd.parents):
        if os.path.lexists(folder / ".git"):
            return [f"--work-tree={folder}"]
    return []


def _configured_drivers(cwd: Path, timeout: float) -> list[str] | GitRun:
    """The filter driver keys every configuration file in force here names."""
    found = _run(
        cwd,
        _argv(SAFE_CONFIG, ["config", "--null", "--name-only", "--get-regexp", DRIVER_COMMANDS]),
        _env(),
        None,
        timeout,
        None,
    )
    if found.code == 1 and not found.err.strip():
        return []  # no such key
    if found.code != 0:
        detail = found.problem or found.err.strip() or f"git config exited {found.code}"
        return GitRun(None, b"", found.err, problem=f"git could not read its configuration: {detail}")
    return [key for key in found.out.decode("utf-8", "surrogateescape").split("\0") if key]


def _filters_off(keys: Iterable[str]) -> list[tuple[str, str]]:
    drivers = {key.rpartition(".")[0] for key in keys}
    return [(f"{driver}.{name}", value) for driver in sorted(drivers) for name, value in FILTER_OFF]


def _argv(overrides: Sequence[tuple[str, str]], args: Sequence[str]) -> list[str]:
    """``-c`` works in every git (``GIT_CONFIG_COUNT`` is ignored before 2.31: the overrides would
    silently be lost); a driver name holding ``=``, which ``-c`` would split on, is refused above."""
    args = list(args)
    at = next((i for i, arg in enumerate(args) if not arg.startswith("-")), None)
    if at is not None:
        args[at + 1 : at + 1] = SUBCOMMAND_FLAGS.get(args[at], ())
    settings = [part for key, value in overrides for part in ("-c", f"{key}={value}")]
    return ["git", "--no-pager", *settings, *args]


def _env() -> dict[str, str]:
    env = {name: os.environ[name] for name in KEPT_ENV if name in os.environ}
    env.update(SAFE_ENV)
    return env


def _run(
    cwd: Path,
    argv: list[str],
    env: dict[str, str],
    stdin: bytes | None,
    timeout: float,
    limit: int | None,
) -> GitRun:
    with tempfile.TemporaryFile() as err_file:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err_file,
            )
        except FileNotFoundError:
            return GitRun(None, b"", "", problem="git is not installed or not on PATH")
        except OSError as error:
            return GitRun(None, b"", "", problem=f"git could not start: {error}")
        stopped = threading.Event()

        def stop() -> None:
            stopped.set()
            with contextlib.suppress(ProcessLookupError):
                proc.kill()

        timer = threading.Timer(timeout, stop)
        timer.start()
        try:
            out, truncated = _collect(proc, stdin, limit)
            proc.wait()
        except BaseException:
            stop()
            proc.wait()
            raise
        finally:
            timer.cancel()
        err_file.seek(0)
        err = err_file.read(MAX_STDERR).decode("utf-8", "replace")
    if stopped.is_set():
        return GitRun(None, out, err, problem=f"git took longer than {timeout:.0f} s and was stopped")
    return GitRun(proc.returncode, out, err, truncated)


def _collect(proc: subprocess.Popen[bytes], stdin: bytes | None, limit: int | None) -> tuple[bytes, bool]:
    """stdout up to ``limit`` bytes (True: there was more, and git is stopped), ``stdin`` fed from
    a thread so that neither pipe can fill up and stall the other."""
    if stdin is not None:
        assert proc.stdin is not None
        threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True).start()
    assert proc.stdout is not None
    chunks: list[bytes] = []
    size = 0
    with proc.stdout:
        while chunk := proc.stdout.read(65_536):
            chunks.append(chunk)
            size += len(chunk)
            if limit is not None and size > limit:
                proc.kill()
                return b"".join(chunks)[:limit], True
    return b"".join(chunks), False


def _feed(pipe: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(OSError), pipe:
        pipe.write(data)
