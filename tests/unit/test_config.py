"""Settings: options over the environment, merges over the current settings, bad values dropped by name."""

from __future__ import annotations

from shiro_lsp.config import DEFAULT_COMPACT_THRESHOLD, DEFAULT_MODEL, Settings, load_settings, secret_values

NO_ENV: dict[str, str] = {}


def test_defaults_without_options_or_environment() -> None:
    settings, problems = load_settings(None, env=NO_ENV)
    assert problems == []
    assert settings.model == DEFAULT_MODEL and settings.compact_threshold == DEFAULT_COMPACT_THRESHOLD
    assert settings.api_key is None and settings.api == "auto" and settings.memory is True


def test_the_environment_gives_defaults_that_options_override() -> None:
    env = {"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1", "SHIRO_MODEL": "qwen"}
    settings, _ = load_settings({"model": "gpt-5-mini"}, env=env)
    assert (settings.api_key, settings.base_url, settings.model) == (
        "sk-env",
        "http://127.0.0.1:8080/v1",
        "gpt-5-mini",
    )
    assert load_settings(None, env={"SHIRO_CONTEXT_WINDOW": "32768"})[0].context_window == 32_768
    assert load_settings(None, env={"SHIRO_CONTEXT_WINDOW": "lots"})[0].context_window is None


def test_camel_case_options_are_read_and_unknown_or_null_ones_ignored() -> None:
    settings, problems = load_settings(
        {"compactThreshold": 50_000, "maxRetries": 0, "someFutureSetting": 1, "model": None}, env=NO_ENV
    )
    assert problems == []
    assert (
        settings.compact_threshold == 50_000 and settings.max_retries == 0 and settings.model == DEFAULT_MODEL
    )


def test_a_bad_value_is_dropped_with_a_message_naming_it_and_the_rest_apply() -> None:
    settings, problems = load_settings(
        {"compactThreshold": -5, "api": "grpc", "maxRetries": "3", "model": "gpt-5-mini"}, env=NO_ENV
    )
    assert settings.model == "gpt-5-mini"
    assert settings.compact_threshold == DEFAULT_COMPACT_THRESHOLD and settings.api == "auto"
    assert settings.max_retries == 3  # the default: a string is not an integer here
    assert len(problems) == 3
    assert [p.split('"')[1] for p in problems] == ["compactThreshold", "api", "maxRetries"]


def test_a_change_merges_over_the_current_settings() -> None:
    current, _ = load_settings(
        {"model": "gpt-5-mini", "apiKey": "sk-1", "compactThreshold": 40_000}, env=NO_ENV
    )
    changed, problems = load_settings({"compactThreshold": 60_000}, base=current)
    assert problems == []
    assert (changed.model, changed.api_key, changed.compact_threshold) == ("gpt-5-mini", "sk-1", 60_000)
    unchanged, problems = load_settings({"compactThreshold": 0}, base=current)
    assert unchanged.compact_threshold == 40_000 and len(problems) == 1


def test_the_api_key_is_never_in_the_settings_repr() -> None:
    settings, _ = load_settings({"apiKey": "sk-secret-value"}, env=NO_ENV)
    assert "sk-secret-value" not in repr(settings)


def test_secrets_include_the_key_and_credentials_in_a_base_url() -> None:
    settings, _ = load_settings(
        {"apiKey": "sk-1", "baseUrl": "https://user:pass@proxy.example/v1"}, env=NO_ENV
    )
    secrets = secret_values(settings, env={"OPENAI_API_KEY": "sk-env"})
    assert {"sk-1", "sk-env", "user:pass", "user", "pass"} <= set(secrets)
    assert secret_values(load_settings(None, env=NO_ENV)[0], env=NO_ENV) == []


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


def test_a_running_server_keeps_its_state_root_and_is_never_trusted_by_a_pushed_setting() -> None:
    current, _ = load_settings({"home": "/home/u/state", "trusted": False}, env=NO_ENV)
    changed, problems = load_settings(
        {"home": "/repo/shipped-home", "trusted": True, "model": "gpt-5-mini"}, base=current
    )
    assert (changed.home, changed.trusted, changed.model) == ("/home/u/state", False, "gpt-5-mini")
    assert len(problems) == 1 and '"home"' in problems[0] and "restart" in problems[0]
    # the same home again (every push carries it) says nothing; trust can still be lowered
    trusted, _ = load_settings({"home": "/home/u/state"}, env=NO_ENV)
    lowered, problems = load_settings({"home": "/home/u/state", "trusted": False}, base=trusted)
    assert problems == [] and lowered.trusted is False and lowered.home == "/home/u/state"
