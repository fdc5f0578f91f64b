"""Settings: `initializationOptions`, `workspace/didChangeConfiguration`, and the environment."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel, to_snake

from shiro_lsp.bounded import (
    MAX_CONTEXT_WINDOW,
    MIN_CONTEXT_WINDOW,
    context_window,
    context_window_refusal,
    small_int,
)

DEFAULT_MODEL = "gpt-5"
DEFAULT_COMPACT_THRESHOLD = 120_000
DEFAULT_APPROVAL_TIMEOUT_MS = 300_000
DEFAULT_MCP_TIMEOUT_MS = 120_000

Api = Literal["responses", "chat", "auto"]
AgentName = Literal["default", "quick", "deep", "plan", "review"]
Thinking = Literal["off", "low", "medium", "high", "max"]
ToolCallFormat = Literal["native", "text", "auto"]
ModelProfile = Literal["auto", "full", "compact"]
BashSandbox = Literal["off", "auto", "required"]
ImageInput = Literal["auto", "on", "off"]


class Settings(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore", strict=True)

    home: str | None = None
    model: str = DEFAULT_MODEL
    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    api: Api = "auto"
    agent: AgentName = "default"
    thinking: Thinking | None = None
    compact_threshold: int = Field(default=DEFAULT_COMPACT_THRESHOLD, gt=0)
    # A prompt that would take the history past the threshold first compacts it as /compact does.
    auto_compact: bool = True
    memory: bool = True
    approval_timeout_ms: int = Field(default=DEFAULT_APPROVAL_TIMEOUT_MS, gt=0)
    trusted: bool = True
    # How long an MCP server may take to start or to answer one tool call.
    mcp_timeout_ms: int = Field(default=DEFAULT_MCP_TIMEOUT_MS, gt=0)
    max_retries: int = Field(default=3, ge=0, le=10)
    # The model's context window in tokens; None: from the server's model metadata where it reports one.
    context_window: int | None = Field(default=None, ge=MIN_CONTEXT_WINDOW, le=MAX_CONTEXT_WINDOW)
    # auto: calls a model writes as text run until it makes a native call; native: never; text: see adapt/formats/text_calls.py.
    # One format for every model, or per model: {"qwen2.5*": "text", "gpt-*": "native"} (globs).
    tool_call_format: ToolCallFormat | dict[str, ToolCallFormat] = "auto"
    # max_tokens of each agent step (less when the context window has less room left).
    max_output_tokens: int = Field(default=16_384, gt=0)
    # Sampling temperature of agent steps; None: the model profile's (0 for the compact one: a small
    # model follows formats best greedy, as Aider runs it), else the server's default.
    temperature: float | None = Field(default=None, ge=0, le=2)
    # How Shiro works with the model (shiro_lsp/adapt/profiles.py): auto picks by what is known of it.
    model_profile: ModelProfile = "auto"
    # The command that checks the work (tests, a linter); it runs code, so the extension takes it from
    # the user's settings or a trusted workspace's only. None: AGENTS.md, the detected test runner (a trusted workspace only).
    check_command: str | None = None
    # bash sandboxed: auto (default: bubblewrap, else Landlock, else said once), required (bubblewrap
    # or refused), off. The network is kept unless bashSandboxNetwork is off.
    bash_sandbox: BashSandbox = "auto"
    bash_sandbox_network: bool = True
    # Whether the model is sent images (pasted, attached, read_file of one): auto = unless the endpoint's
    # model listing says it has no vision or it refused images once; on; off. Per model: {"llava*": "on"}.
    image_input: ImageInput | dict[str, ImageInput] = "auto"
    # Hosts web_fetch may reach although they resolve to a loopback, private or link-local address
    # (a host name, "*.example.internal" or an IP address). The user's own setting only.
    web_fetch_allow_hosts: list[str] = Field(default_factory=list)
    # Per-tool permission rules (spec §7.4): {"bash": {"git *": "allow", "rm *": "deny"}, "write_file": "ask"}.
    permissions: dict[str, str | dict[str, str]] = Field(default_factory=dict)

    def tool_call_format_for(self, model: str) -> ToolCallFormat:
        """The model's tool-call format: the exact entry, else the first glob that matches, else auto."""
        return _for_model(self.tool_call_format, model)

    def image_input_for(self, model: str) -> ImageInput:
        """Whether ``model`` is sent images, as the settings say (auto: as the endpoint says)."""
        return _for_model(self.image_input, model)


Choice = TypeVar("Choice", bound=str)


def _for_model(value: Choice | dict[str, Choice], model: str) -> Choice:
    """A per-model setting: one value, or the exact entry, else the first glob that matches, else auto."""
    if isinstance(value, str):
        return value
    if model in value:
        return value[model]
    return next(
        (v for pattern, v in value.items() if fnmatch.fnmatchcase(model, pattern)), cast(Choice, "auto")
    )


def _environment_defaults(env: Mapping[str, str], problems: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if env.get("OPENAI_API_KEY"):
        values["api_key"] = env["OPENAI_API_KEY"]
    if env.get("OPENAI_BASE_URL"):
        values["base_url"] = env["OPENAI_BASE_URL"]
    if env.get("SHIRO_MODEL"):
        values["model"] = env["SHIRO_MODEL"]
    given = env.get("SHIRO_CONTEXT_WINDOW", "")
    if given.strip():
        window = context_window(small_int(given))
        if window is None:
            problems.append(context_window_refusal("SHIRO_CONTEXT_WINDOW", given.strip()))
        else:
            values["context_window"] = window
    hosts = [h.strip() for h in env.get("SHIRO_WEB_FETCH_ALLOW_HOSTS", "").split(",") if h.strip()]
    if hosts:
        values["web_fetch_allow_hosts"] = hosts
    if env.get("SHIRO_MODEL_PROFILE") in get_args(ModelProfile):
        values["model_profile"] = env["SHIRO_MODEL_PROFILE"]
    return values


# Taken from ``initializationOptions`` only, fixed while the server runs: the state root. A later
# ``workspace/didChangeConfiguration`` that names another one is ignored (and said so), so the state
# never moves under a running server, and nothing pushed later (say, a workspace's own settings
# forwarded by some client) can make a folder's ``mcp.json`` count as the user's own.
START_ONLY = frozenset({"home"})


def _reconfigurable(name: str, value: Any, base: Settings) -> str | None:
    """Why a changed setting is not applied to a running server (None: it is)."""
    if name in START_ONLY and value != getattr(base, name):
        return f'Ignored the setting "{to_camel(name)}": it is fixed while the server runs; restart the server to change it.'
    return None


def load_settings(
    options: Mapping[str, Any] | None, env: Mapping[str, str] | None = None, base: Settings | None = None
) -> tuple[Settings, list[str]]:
    """Merge options over ``base`` (or the environment's defaults).

    An invalid option is dropped with a message naming it, so one bad setting never keeps the
    server from starting. Returns the settings and those messages. With ``base`` (a running
    server's reconfiguration) the state root stays (``START_ONLY``), and ``trusted`` can only be
    lowered: trust is granted by starting the server again with it, never by a pushed setting.
    """
    problems: list[str] = []
    current = (
        base.model_dump() if base else _environment_defaults(os.environ if env is None else env, problems)
    )
    for key, value in (options or {}).items():
        if value is None:
            continue
        name = to_snake(key)
        if name not in Settings.model_fields:
            continue
        if base is not None:
            if name == "trusted" and value is not False:
                continue
            refusal = _reconfigurable(name, value, base)
            if refusal:
                problems.append(refusal)
                continue
        candidate = {**current, name: value}
        try:
            current = Settings.model_validate(candidate).model_dump()
        except ValidationError as error:
            first = error.errors()[0]
            problems.append(f'Ignored the setting "{key}": {first["msg"]}.')
    return Settings.model_validate(current), problems


def secret_values(settings: Settings, env: Mapping[str, str] | None = None) -> list[str]:
    """The configured credentials: kept out of commands' environments and cut out of tool output."""
    environ = os.environ if env is None else env
    values = [settings.api_key, environ.get("OPENAI_API_KEY")]
    for url in (settings.base_url, environ.get("OPENAI_BASE_URL")):
        if url and "@" in url and "://" in url:
            userinfo = url.split("://", 1)[1].split("@", 1)[0]
            values += [userinfo, *userinfo.split(":", 1)]
    return [v for v in values if v]
