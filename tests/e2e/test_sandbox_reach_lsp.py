"""Issue 20, the sandbox: what a sandboxed bash command can reach is ``sandbox.REACH``, one list,
checked here as a whole through the real server and real bubblewrap. Every item of the list has
a probe below (a list item without one fails the test); the probes run as one sandboxed command.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chat_helpers import model_bodies
from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from lsp_client import SERVER_COMMAND, initialize, make_client
from shiro_lsp.tools import landlock, sandbox

pytest_plugins = ["fakes.fixtures"]
pytestmark = pytest.mark.skipif(sandbox.probe() is not None, reason=f"no sandbox here: {sandbox.probe()}")

KEY = "sk-reach-0123456789abcdefghij"
MINIMAL_DEV = {"core", "fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout"}
MINIMAL_DEV |= {"tty", "urandom", "zero"}

PROBE = r"""
import json, os, socket, sys
args = json.loads(sys.argv[1])
found = {}

def attempt(action):
    try:
        action()
        return "ok"
    except OSError as error:
        return type(error).__name__

def connect(address):
    client = socket.socket(socket.AF_UNIX)
    client.settimeout(5)
    client.connect(address.replace("@", "\0", 1) if address.startswith("@") else address)

def write(path):
    with open(path, "w") as out:
        out.write("x")

def listen_here():
    server = socket.socket(socket.AF_UNIX)
    server.bind("inside.sock")
    server.listen()
    connect("inside.sock")

def tcp():
    socket.create_connection(("127.0.0.1", args["port"]), timeout=5)

found["read"] = open(args["readable"]).read()
found["write"] = {"inside": attempt(lambda: write("inside.txt")),
                  "outside": attempt(lambda: write(args["outside_write"])),
                  "home": attempt(lambda: write(os.path.expanduser("~/.shiro-reach-test")))}
found["tmp"] = {path: os.path.exists(path) for path in args["hidden_files"]}
found["devices"] = sorted(os.listdir("/dev"))
found["path sockets"] = {path: attempt(lambda p=path: connect(p)) for path in args["sockets"]}
found["path sockets"]["inside"] = attempt(listen_here)
found["abstract sockets"] = attempt(lambda: connect(args["abstract"]))
found["network"] = attempt(tcp)
found["processes"] = len([p for p in os.listdir("/proc") if p.isdigit()])

def outlive():
    # a detached grandchild that holds outlive.fifo open for reading: it must end with the command
    os.mkfifo("outlive.fifo")
    ready, told = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.open("outlive.fifo", os.O_RDONLY | os.O_NONBLOCK)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.write(told, b"1")
            while True:
                __import__("signal").pause()
        os._exit(0)
    os.read(ready, 1)

outlive()
found["environment"] = {"key": os.environ.get("OPENAI_API_KEY"), "kept": os.environ.get("REACH_KEPT")}
print("REACH " + json.dumps(found))
"""


def reader_alive(fifo: Path) -> bool:
    """Whether any process still holds ``fifo`` open for reading (a write-open fails with ENXIO
    when none does)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError as error:
        if error.errno == errno.ENXIO:
            return False
        raise
    return True


@contextlib.contextmanager
def listening(address: str) -> Iterator[None]:
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(address.replace("@", "\0", 1) if address.startswith("@") else address)
        server.listen()
        yield
    finally:
        server.close()


@pytest.fixture
def outside_folders(tmp_path: Path) -> Iterator[list[Path]]:
    """Folders outside the workspace where sockets and runtime files live: /run (root only),
    /var/tmp, and one in the home folder (no rule hides it: its sockets are masked one by one)."""
    folders = [Path(tempfile.mkdtemp(prefix="shiro-reach-", dir=Path.home()))]
    folders.append(Path(tempfile.mkdtemp(prefix="shiro-reach-", dir="/var/tmp")))
    if os.access("/run", os.W_OK):
        folders.append(Path(tempfile.mkdtemp(prefix="shiro-reach-", dir="/run")))
    try:
        yield folders
    finally:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


async def run_probe(
    workspace: Path, home: Path, fake: FakeOpenAI, args: dict[str, Any], env: dict[str, str], network: bool
) -> dict[str, Any]:
    (workspace / "probe.py").write_text(PROBE)
    client = make_client()
    await client.start_io(*SERVER_COMMAND, env=env)
    try:
        await initialize(
            client,
            workspace,
            home=str(home),
            apiKey=KEY,
            baseUrl=fake.base_url,
            api="chat",
            maxRetries=0,
            permissions={"bash": "allow"},
            bashSandbox="required",
            bashSandboxNetwork=network,
        )
        command = f"python3 probe.py {json.dumps(json.dumps(args))}"
        fake.script += [Step(ToolCall("bash", {"command": command})), Step(Text("ok"))]
        await client.call("shiro/chat", {"text": "probe"})
    finally:
        await client.shutdown_session()
        await client.stop()
    last = model_bodies(fake)[-1]
    (output,) = [str(m["content"]) for m in last["messages"] if m["role"] == "tool"]
    lines = [line for line in output.splitlines() if line.startswith("REACH ")]
    assert lines, output
    line = lines[0]
    found: dict[str, Any] = json.loads(line.removeprefix("REACH "))
    return found


async def test_a_sandboxed_command_reaches_exactly_what_the_list_says(
    workspace: Path, home: Path, fake: FakeOpenAI, outside_folders: list[Path]
) -> None:
    outside = outside_folders[0]  # /tmp is private in the sandbox: the home folder is not
    (outside / "readable.txt").write_text("readable everywhere\n")
    runtime = outside_folders[0] / "xdg-runtime"
    runtime.mkdir()
    (runtime / "bus-file").write_text("runtime\n")
    hidden_files = [str(runtime / "bus-file"), *(str(f / "file") for f in outside_folders[1:])]
    for path in hidden_files[1:]:
        Path(path).write_text("hidden\n")
    sockets = [str(folder / "s") for folder in outside_folders]
    sockets.append(str(workspace / "host.sock"))  # bound by a process outside, in the workspace
    abstract = f"@shiro-reach-{os.getpid()}"
    port = int(fake.base_url.split(":")[-1].split("/")[0])
    env = {**os.environ, "OPENAI_API_KEY": KEY, "REACH_KEPT": "kept", "XDG_RUNTIME_DIR": str(runtime)}
    args = {
        "readable": str(outside / "readable.txt"),
        "outside_write": str(outside / "written.txt"),
        "hidden_files": hidden_files,
        "sockets": sockets,
        "abstract": abstract,
        "port": port,
    }
    with contextlib.ExitStack() as stack:
        for address in [*sockets, abstract]:
            stack.enter_context(listening(address))
        found = await run_probe(workspace, home, fake, args, env, network=False)

    expected: dict[str, Any] = {
        "read": "readable everywhere\n",
        "write": {"inside": "ok", "outside": "OSError", "home": "OSError"},
        "tmp": dict.fromkeys(hidden_files, False),
        "devices": sorted(MINIMAL_DEV),
        "path sockets": {**dict.fromkeys(sockets, "refused"), "inside": "ok"},
        "abstract sockets": "ConnectionRefusedError",
        "network": "ConnectionRefusedError",
        "processes": {"seen": "few", "outlived the command": False},
        "environment": {"key": None, "kept": "kept"},
    }
    assert {item.name for item in sandbox.REACH} == set(expected)  # every item of the list is probed
    found["path sockets"] = {
        k: ("refused" if v in ("FileNotFoundError", "ConnectionRefusedError") else v)
        for k, v in found["path sockets"].items()
    }
    found["write"] = {k: ("OSError" if v != "ok" else v) for k, v in found["write"].items()}
    found["processes"] = {
        "seen": "few" if found["processes"] <= 3 else found["processes"],
        "outlived the command": reader_alive(workspace / "outlive.fifo"),
    }
    for item in sandbox.REACH:
        assert found[item.name] == expected[item.name], f"{item.name}: {item.rule}"
    assert not (outside / "written.txt").exists() and (workspace / "inside.txt").exists()


@pytest.mark.skipif(not landlock.can_scope_abstract_sockets(), reason="no Landlock scoping here")
async def test_with_the_network_on_host_sockets_stay_out_of_reach(
    workspace: Path, home: Path, fake: FakeOpenAI, outside_folders: list[Path]
) -> None:
    abstract = f"@shiro-reach-net-{os.getpid()}"
    sockets = [str(folder / "s") for folder in outside_folders]
    port = int(fake.base_url.split(":")[-1].split("/")[0])
    args = {
        "readable": "/etc/hostname",
        "outside_write": "/nonexistent/x",
        "hidden_files": [],
        "sockets": sockets,
        "abstract": abstract,
        "port": port,
    }
    with contextlib.ExitStack() as stack:
        for address in [*sockets, abstract]:
            stack.enter_context(listening(address))
        found = await run_probe(workspace, home, fake, args, dict(os.environ), network=True)
    assert found["network"] == "ok"  # the network is on
    assert found["abstract sockets"] == "PermissionError"  # Landlock's scope
    assert all(
        v in ("FileNotFoundError", "ConnectionRefusedError")
        for k, v in found["path sockets"].items()
        if k != "inside"
    )
    assert found["path sockets"]["inside"] == "ok"
