"""list_dir, glob, grep: .gitignore respected (nested too), includeIgnored, caps; grep on both backends."""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.ignore import Walker
from shiro_lsp.tools.search import glob_regex, grep_python, grep_ripgrep
from tool_helpers import RunTool

RG = shutil.which("rg")
Grep = Callable[[Path, str, str | None, bool, bool], Awaitable[str]]


async def _python(ws: Path, pattern: str, include: str | None, ignore_case: bool, ignored: bool) -> str:
    return grep_python(ws, pattern, include, ignore_case, ignored)


async def _ripgrep(ws: Path, pattern: str, include: str | None, ignore_case: bool, ignored: bool) -> str:
    assert RG is not None
    return await grep_ripgrep(RG, ws, pattern, include, ignore_case, ignored)


BACKENDS = [
    pytest.param(_python, id="python"),
    pytest.param(_ripgrep, id="ripgrep", marks=pytest.mark.skipif(RG is None, reason="rg is not installed")),
]


@pytest.fixture
def project(workspace: Path) -> Path:
    files = {
        ".gitignore": "build/\n*.log\n!keep.log\n",
        "README.md": "# Demo\nTODO: write docs\n",
        "src/app.py": "import os\n\ndef main():\n    # TODO: fix\n    return os.getcwd()\n",
        "src/util.py": "def helper():\n    return 'todo lowercase'\n",
        "src/gen/.gitignore": "*.gen.py\n",
        "src/gen/model.gen.py": "TODO = 'generated'\n",
        "src/gen/model.py": "value = 1\n",
        "build/out.txt": "TODO in build\n",
        "debug.log": "TODO in log\n",
        "keep.log": "TODO kept\n",
        ".env": "API_KEY=TODO-secret\n",
        ".env.example": "API_KEY=TODO-fill-me\n",
        "node_modules/pkg/index.js": "// TODO vendored\n",
    }
    for rel, text in files.items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (workspace / "logo.bin").write_bytes(b"TODO\x00\x01binary")
    return workspace


async def test_list_dir_tree_respects_gitignore(run: RunTool, project: Path) -> None:
    assert await run("list_dir", depth=3) == (
        ".\n"
        ".env  20B\n"
        ".env.example  21B\n"
        ".gitignore  23B\n"
        "README.md  24B\n"
        "keep.log  10B\n"
        "logo.bin  12B\n"
        "src/\n"
        "  app.py  62B\n"
        "  gen/\n"
        "    .gitignore  9B\n"
        "    model.py  10B\n"
        "  util.py  42B"
    )


async def test_list_dir_depth_subdir_and_include_ignored(run: RunTool, project: Path) -> None:
    assert await run("list_dir", path="src", depth=1) == "src/\napp.py  62B\ngen/\nutil.py  42B"
    everything = await run("list_dir", depth=1, includeIgnored=True)
    assert "build/" in everything and "debug.log" in everything and "node_modules/" in everything


async def test_list_dir_errors_and_empty(run: RunTool, workspace: Path) -> None:
    with pytest.raises(ToolError, match=r"Not a directory: nope"):
        await run("list_dir", path="nope")
    (workspace / "empty").mkdir()
    assert await run("list_dir", path="empty") == "empty/ is empty (or everything in it is ignored)."


async def test_list_dir_stops_at_300_entries(run: RunTool, workspace: Path) -> None:
    for i in range(350):
        (workspace / f"f{i:03}.txt").write_text("x")
    lines = (await run("list_dir")).splitlines()
    assert len(lines) == 1 + 300 + 1
    assert lines[-1] == "... [300-entry limit reached]"


async def test_glob_patterns(run: RunTool, project: Path) -> None:
    assert await run("glob", pattern="**/*.py") == "src/app.py\nsrc/gen/model.py\nsrc/util.py"
    assert await run("glob", pattern="src/*.py") == "src/app.py\nsrc/util.py"
    assert await run("glob", pattern="*.{md,log}") == "README.md\nkeep.log"
    assert await run("glob", pattern="./src/?pp.py") == "src/app.py"
    assert await run("glob", pattern="**/*.rs") == "No files matched."


async def test_glob_include_ignored(run: RunTool, project: Path) -> None:
    result = await run("glob", pattern="**/*.{py,txt,log}", includeIgnored=True)
    assert "build/out.txt" in result and "debug.log" in result and "src/gen/model.gen.py" in result


async def test_glob_limit_says_how_many_more(run: RunTool, workspace: Path) -> None:
    for i in range(5):
        (workspace / f"f{i}.txt").write_text("x")
    assert await run("glob", pattern="*.txt", limit=2) == (
        "f0.txt\nf1.txt\n... [3 more not shown; narrow the pattern or raise limit]"
    )


async def test_glob_refuses_escapes(run: RunTool, workspace: Path) -> None:
    with pytest.raises(ToolError, match=r"Path escapes workspace"):
        await run("glob", pattern="../**/*")
    with pytest.raises(ToolError, match=r"Path escapes workspace"):
        await run("glob", pattern="/etc/*")


def test_glob_regex_semantics() -> None:
    assert glob_regex("**/*.py").match("a.py")
    assert glob_regex("**/*.py").match("a/b/c.py")
    assert not glob_regex("*.py").match("a/b.py")
    assert glob_regex("src/**").match("src/a/b")
    assert glob_regex("[ab].txt").match("a.txt") and not glob_regex("[!ab].txt").match("a.txt")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_respects_ignores_binaries_and_secrets(backend: Grep, project: Path) -> None:
    result = await backend(project, "TODO", None, False, False)
    assert result.splitlines() == [
        ".env.example:1: API_KEY=TODO-fill-me",
        "README.md:2: TODO: write docs",
        "keep.log:1: TODO kept",
        "src/app.py:4:     # TODO: fix",
        "[1 secrets file was skipped (.env): Shiro never searches or sends the contents of secrets "
        "files to the model]",
    ]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_options(backend: Grep, project: Path) -> None:
    assert (await backend(project, "todo", "*.py", True, False)).splitlines() == [
        "src/app.py:4:     # TODO: fix",
        "src/util.py:2:     return 'todo lowercase'",
    ]
    with_ignored = await backend(project, "TODO", None, False, True)
    assert "build/out.txt:1: TODO in build" in with_ignored
    assert "node_modules/pkg/index.js:1: // TODO vendored" in with_ignored
    assert "src/gen/model.gen.py:1: TODO = 'generated'" in with_ignored
    assert ".env:" not in with_ignored
    assert (await backend(project, "no-such-text-anywhere", None, False, False)).startswith(
        "No matches.\n[1 secrets file was skipped (.env)"
    )
    assert await backend(project, "no-such-text-anywhere", "*.py", False, False) == "No matches."


@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_stops_at_200_hits(backend: Grep, workspace: Path) -> None:
    (workspace / "many.txt").write_text("hit\n" * 500)
    lines = (await backend(workspace, "hit", None, False, False)).splitlines()
    assert len(lines) == 201
    assert lines[-1] == "... [hit limit 200]"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_invalid_regex(backend: Grep, workspace: Path) -> None:
    (workspace / "a.txt").write_text("x\n")
    with pytest.raises(ToolError, match=r"Invalid regex"):
        await backend(workspace, "(unclosed", None, False, False)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_cuts_long_lines(backend: Grep, workspace: Path) -> None:
    (workspace / "min.js").write_text("needle" + "y" * 10_000 + "\n")
    (line,) = (await backend(workspace, "needle", None, False, False)).splitlines()
    assert line.startswith("min.js:1: needle") and len(line) < 400


async def test_grep_tool_runs_through_the_registry(run: RunTool, project: Path) -> None:
    assert "src/app.py:4:     # TODO: fix" in await run("grep", pattern="TODO")


def test_walker_answers_for_single_paths(project: Path) -> None:
    walker = Walker(project)
    assert walker.is_ignored("build/out.txt", is_dir=False)
    assert walker.is_ignored("src/gen/model.gen.py", is_dir=False)
    assert walker.is_ignored("node_modules/pkg/index.js", is_dir=False)
    assert not walker.is_ignored("keep.log", is_dir=False)
    assert not walker.is_ignored("src/gen/model.py", is_dir=False)
    assert not Walker(project, include_ignored=True).is_ignored("debug.log", is_dir=False)
