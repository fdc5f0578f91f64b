import os

import click


def test_xdg_config_home(monkeypatch):
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setenv("XDG_CONFIG_HOME", "/tmp/xdg")
    assert click.get_app_dir("Foo Bar") == "/tmp/xdg/foo-bar"


def test_default_config_folder(monkeypatch):
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", "/home/ada")
    assert click.get_app_dir("Foo Bar") == "/home/ada/.config/foo-bar"


def test_force_posix(monkeypatch):
    monkeypatch.setenv("HOME", "/home/ada")
    assert click.get_app_dir("Foo Bar", force_posix=True) == os.path.join("/home/ada", ".foo-bar")
