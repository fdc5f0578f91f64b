"""Settings: one bad option is dropped in words, the rest still apply; per-model tool-call formats."""

from __future__ import annotations

from shiro_lsp.config import Settings, load_settings


def test_a_bad_option_is_dropped_with_its_name_and_the_rest_apply() -> None:
    settings, problems = load_settings({"model": "qwen", "toolCallFormat": "xml", "maxRetries": 0}, env={})
    assert settings.model == "qwen" and settings.max_retries == 0
    assert settings.tool_call_format == "auto"
    assert len(problems) == 1 and 'Ignored the setting "toolCallFormat"' in problems[0]


def test_the_tool_call_format_is_chosen_per_model_exact_first_then_the_first_glob() -> None:
    settings, problems = load_settings(
        {"toolCallFormat": {"qwen2.5-coder:1.5b": "native", "qwen*": "text", "*": "native"}}, env={}
    )
    assert problems == []
    assert settings.tool_call_format_for("qwen2.5-coder:1.5b") == "native"
    assert settings.tool_call_format_for("qwen3:4b") == "text"
    assert settings.tool_call_format_for("gpt-5") == "native"
    assert Settings(tool_call_format={"qwen*": "text"}).tool_call_format_for("gpt-5") == "auto"
    assert Settings(tool_call_format="text").tool_call_format_for("anything") == "text"


def test_a_per_model_map_with_a_bad_format_is_refused_whole() -> None:
    settings, problems = load_settings({"toolCallFormat": {"qwen*": "xml"}}, env={})
    assert settings.tool_call_format == "auto" and problems
