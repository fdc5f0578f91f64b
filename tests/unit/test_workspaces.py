"""``Workspaces``: the folders of a window, which folder's service is live, what the tools see."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiro_lsp.config import load_settings
from shiro_lsp.errors import BadParams
from shiro_lsp.fs.jail import Folders
from shiro_lsp.workspaces import Workspaces, named_folders


@pytest.fixture
def window(tmp_path: Path) -> tuple[Workspaces, Path, Path]:
    api, web = tmp_path / "api", tmp_path / "web"
    api.mkdir()
    web.mkdir()
    settings, _ = load_settings({"home": str(tmp_path / "state")})
    return Workspaces([("api", str(api)), ("web", str(web))], settings), api, web


def test_names_are_unique_usable_and_each_path_counts_once() -> None:
    folders = named_folders(
        [("app", "/a/app"), ("app", "/b/app"), (None, "/c/lib"), ("x/y", "/d/tool"), ("app", "/a/app")]
    )
    assert [(f.name, f.path) for f in folders] == [
        ("app", "/a/app"),
        ("app-2", "/b/app"),
        ("lib", "/c/lib"),
        ("tool", "/d/tool"),
    ]


def test_one_folder_gives_the_tools_a_plain_path(tmp_path: Path) -> None:
    settings, _ = load_settings({"home": str(tmp_path / "state")})
    one = Workspaces([("only", str(tmp_path))], settings)
    assert one.tools_view(str(tmp_path)) == tmp_path
    assert one.active.workspace == str(tmp_path)  # the path as given: the state keys stay as they were


def test_each_folder_has_its_own_service_and_the_tools_see_all_folders(
    window: tuple[Workspaces, Path, Path],
) -> None:
    workspaces, api, web = window
    assert workspaces.active.workspace == str(api)
    web_service = workspaces.service(str(web / "src" / "x.ts"))  # a path inside a folder means the folder
    assert web_service.workspace == str(web) and web_service is not workspaces.active
    assert web_service.key != workspaces.active.key
    view = workspaces.tools_view(str(web))
    assert isinstance(view, Folders) and [n for n, _ in view.entries] == ["web", "api"]
    with pytest.raises(BadParams, match="is not in a workspace folder of this window"):
        workspaces.service("/elsewhere")


def test_nested_folders_resolve_to_the_innermost(tmp_path: Path) -> None:
    settings, _ = load_settings({"home": str(tmp_path / "state")})
    inner = tmp_path / "pkg"
    workspaces = Workspaces([("repo", str(tmp_path)), ("pkg", str(inner))], settings)
    assert workspaces.folder_at(str(inner / "a.py")).name == "pkg"
    assert workspaces.folder_at(str(tmp_path / "a.py")).name == "repo"


def test_removing_the_live_folder_moves_to_the_first_left_and_the_last_folder_stays(
    window: tuple[Workspaces, Path, Path],
) -> None:
    workspaces, api, web = window
    workspaces.activate(str(web))
    closed = workspaces.change([], [str(web)])
    assert [s.workspace for s in closed] == [str(web)]
    assert workspaces.active_path == str(api) and isinstance(workspaces.tools_view(str(api)), Path)
    assert workspaces.change([], [str(api)]) == [] and workspaces.active_path == str(api)
    workspaces.change([("web", str(web))], [])
    assert [f.name for f in workspaces.folders] == ["api", "web"]
