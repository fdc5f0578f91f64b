"""The naval example has a `ship sink NAME` command; its other commands still work."""

import importlib.util

from click.testing import CliRunner

spec = importlib.util.spec_from_file_location("naval", "examples/naval/naval.py")
assert spec and spec.loader
naval = importlib.util.module_from_spec(spec)
spec.loader.exec_module(naval)
runner = CliRunner()
result = runner.invoke(naval.cli, ["ship", "sink", "Titanic"])
assert result.exit_code == 0, result.output
assert result.output.strip() == "Ship Titanic sinks", result.output
result = runner.invoke(naval.cli, ["ship", "new", "Nautilus"])
assert result.output.strip() == "Created ship Nautilus", result.output
assert "sink" in runner.invoke(naval.cli, ["ship", "--help"]).output
