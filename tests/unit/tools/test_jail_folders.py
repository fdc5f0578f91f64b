"""Multi-root paths (``jail.Folders``): which folder a path is in, how results name paths, what is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.jail import Folders, folder_relative, locate, relative_posix, write_atomic
from shiro_lsp.tools.search import folder_scope, glob_sync, grep_python, list_dir_sync


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path, Path]:
    api, web, outside = tmp_path / "api", tmp_path / "web", tmp_path / "outside"
    for folder in (api, web, outside):
        folder.mkdir()
    (api / "main.py").write_text("print('api')\n")
    (api / "web").mkdir()  # a folder of api's that shares the other folder's name
    (api / "web" / "inner.txt").write_text("api's own web\n")
    (web / "index.ts").write_text("export const web = 1\n")
    (outside / "secret.txt").write_text("outside\n")
    return api, web, outside


def folders(api: Path, web: Path) -> Folders:
    return Folders([("api", api), ("web", web)])


def test_a_folder_name_leads_into_that_folder_and_dot_slash_stays_home(
    roots: tuple[Path, Path, Path],
) -> None:
    api, web, _ = roots
    ws = folders(api, web)
    assert locate(ws, "main.py") == (api, api / "main.py")
    assert locate(ws, "web/index.ts") == (web, web / "index.ts")
    assert locate(ws, "./web/inner.txt") == (api, api / "web" / "inner.txt")
    assert locate(ws, str(web / "index.ts")) == (web, web / "index.ts")
    assert locate(ws, "api/main.py") == (api, api / "main.py")  # the session's own name works too
    assert locate(ws, "web") == (web, web)


def test_results_name_paths_so_they_resolve_back(roots: tuple[Path, Path, Path]) -> None:
    api, web, _ = roots
    ws = folders(api, web)
    for resolved in (api / "main.py", web / "index.ts", api / "web" / "inner.txt", web):
        shown = relative_posix(ws, resolved)
        assert locate(ws, shown)[1] == resolved, shown
    assert relative_posix(ws, api / "web" / "inner.txt") == "./web/inner.txt"
    assert relative_posix(ws, web / "index.ts") == "web/index.ts"
    # one folder: no prefixes, exactly as before
    assert folder_relative(api, 0, "web/inner.txt") == "web/inner.txt"
    assert relative_posix(Folders([("api", api)]), api / "web" / "inner.txt") == "web/inner.txt"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../web/index.ts", "escapes workspace folder api"),
        ("web/../api/main.py", "escapes workspace folder web"),
        ("../outside/secret.txt", "Path escapes workspace: ../outside/secret.txt"),
        ("web/../../outside/secret.txt", "Path escapes workspace"),
        ("/etc/passwd", "Path escapes workspace: /etc/passwd"),
    ],
)
def test_dot_dot_never_crosses_between_folders_or_out(
    roots: tuple[Path, Path, Path], path: str, message: str
) -> None:
    api, web, _ = roots
    with pytest.raises(ToolError, match=message.replace("(", r"\(")):
        locate(folders(api, web), path)


def test_a_symlink_out_of_all_folders_is_refused_and_writes_stay_inside(
    roots: tuple[Path, Path, Path],
) -> None:
    api, web, outside = roots
    os.symlink(outside, api / "out")
    ws = folders(api, web)
    with pytest.raises(ToolError, match="escapes workspace"):
        locate(ws, "out/secret.txt")
    with pytest.raises(ToolError, match="escapes workspace"):
        write_atomic(ws, "out/new.txt", b"x")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert write_atomic(ws, "web/new.txt", b"ok") == web / "new.txt"


def test_glob_grep_and_list_dir_search_the_folder_a_pattern_names(roots: tuple[Path, Path, Path]) -> None:
    api, web, _ = roots
    ws = folders(api, web)
    assert folder_scope(ws, "web/**/*.ts") == (1, web, "**/*.ts")
    assert folder_scope(ws, "./web/*.txt") == (0, api, "./web/*.txt")
    assert folder_scope(api, "web/**") == (0, api, "web/**")  # one folder: untouched
    assert glob_sync(ws, "web/**/*.ts", 10, False) == "web/index.ts"
    assert glob_sync(ws, "**/*.txt", 10, False) == "./web/inner.txt"
    assert glob_sync(ws, f"{web}/*.ts", 10, False) == "web/index.ts"
    assert list_dir_sync(ws, "web", 1, False) == "web/\nindex.ts  21B"
    hits = grep_python(web, "web", None, False, False, lambda rel: folder_relative(ws, 1, rel))
    assert hits == "web/index.ts:1: export const web = 1"
