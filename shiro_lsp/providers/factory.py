"""Build the ``ModelClient`` for a base URL, key and API choice (the only place that builds SDK clients)."""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from shiro_lsp.providers.types import ModelClient, ProviderError

if TYPE_CHECKING:
    import openai

OFFICIAL_BASE_URL = "https://api.openai.com/v1"
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})
LOCAL_DUMMY_KEY = "not-needed"
APIS = ("auto", "responses", "chat")
NO_KEY_MESSAGE = (
    'No API key. Set it with the command "Shiro: Set API key", the OPENAI_API_KEY environment variable, '
    "or point shiro.baseUrl at a local server (Ollama, LM Studio)."
)


def is_local(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
    return host in LOCAL_HOSTS or host.endswith(".localhost")


def is_official(base_url: str) -> bool:
    parts = urlsplit(base_url)
    return parts.scheme == "https" and (parts.hostname or "").lower() == "api.openai.com"


def resolve_endpoint(
    base_url: str | None, api_key: str | None, *, environment: bool = True
) -> tuple[str, str]:
    """The base URL and key to use; raises the "no key" ``ProviderError`` for a remote endpoint.

    ``environment=False`` never falls back to ``OPENAI_API_KEY`` (an address the user did not configure).
    """
    url = (base_url or os.environ.get("OPENAI_BASE_URL") or OFFICIAL_BASE_URL).rstrip("/")
    key = api_key or (os.environ.get("OPENAI_API_KEY") if environment else None) or None
    if key is None:
        if not is_local(url):
            raise ProviderError(NO_KEY_MESSAGE, kind="auth")
        key = LOCAL_DUMMY_KEY
    return url, key


def make_client(
    base_url: str | None,
    api_key: str | None,
    api: str = "auto",
    *,
    timeout: float = 600.0,
    connect_timeout: float = 10.0,
    max_retries: int = 3,
    store: bool = False,
    reasoning_summary: str | None = "auto",
    treat_as_official: bool | None = None,
    on_notice: Callable[[str], None] | None = None,
) -> ModelClient:
    """The client for ``api`` ("auto" | "responses" | "chat") at ``base_url`` (default: OpenAI).

    ``None`` for ``base_url``/``api_key`` falls back to ``OPENAI_BASE_URL``/``OPENAI_API_KEY``. A local
    server (127.0.0.1, localhost, ::1) needs no key. ``treat_as_official`` overrides the check for
    ``https://api.openai.com`` (tests point the fallback policy at a local fake with it).
    Raises ``ProviderError`` (kind "auth" or "bad_request") at once for a missing key or an unknown API.
    """
    if api not in APIS:
        raise ProviderError(f'Unknown API "{api}". Use "auto", "responses" or "chat".', kind="bad_request")
    url, key = resolve_endpoint(base_url, api_key)
    official = is_official(url) if treat_as_official is None else treat_as_official

    import openai

    from shiro_lsp.providers.chat_completions import ChatClient
    from shiro_lsp.providers.fallback import FallbackClient
    from shiro_lsp.providers.responses import ResponsesClient

    sdk = openai.AsyncOpenAI(
        base_url=url,
        api_key=key,
        max_retries=0,  # Shiro retries itself (providers/retry.py), so each wait is shown
        timeout=openai.Timeout(timeout, connect=connect_timeout),
    )
    responses = ResponsesClient(
        sdk, store=store, reasoning_summary=reasoning_summary, max_retries=max_retries
    )
    chat = ChatClient(sdk, official=official, max_retries=max_retries)
    only_chat = api == "chat" or (api != "responses" and not official)
    _warm_up(sdk, chat=api != "responses", responses=not only_chat)
    if api == "responses":
        return responses
    if only_chat:
        return chat
    return FallbackClient([chat, responses], key=url, on_notice=on_notice)


# The SDK's response models build their validators on first use (Response alone takes ~240 ms).
_CHAT_MODELS = ("ChatCompletionChunk", "ChatCompletion")
_RESPONSES_MODELS = (
    "Response",
    "ResponseCreatedEvent",
    "ResponseInProgressEvent",
    "ResponseOutputItemAddedEvent",
    "ResponseOutputItemDoneEvent",
    "ResponseContentPartAddedEvent",
    "ResponseContentPartDoneEvent",
    "ResponseTextDeltaEvent",
    "ResponseTextDoneEvent",
    "ResponseFunctionCallArgumentsDeltaEvent",
    "ResponseFunctionCallArgumentsDoneEvent",
    "ResponseReasoningSummaryTextDeltaEvent",
    "ResponseCompletedEvent",
    "ResponseFailedEvent",
    "ResponseIncompleteEvent",
    "ResponseErrorEvent",
)


def _warm_up(sdk: openai.AsyncOpenAI, *, chat: bool, responses: bool) -> None:
    """Do now what the SDK does on first use (callers build clients off the loop), not in the first
    request on the event loop (~50 ms of CPU for a chat, ~400 ms for a response): import its
    resources and the anyio backend httpcore connects with, build the response models' validators."""
    _ = sdk.chat.completions, sdk.responses
    with contextlib.suppress(ImportError):
        importlib.import_module("anyio._backends._asyncio")
    for module, names in (
        ("openai.types.chat", _CHAT_MODELS if chat else ()),
        ("openai.types.responses", _RESPONSES_MODELS if responses else ()),
    ):
        types = importlib.import_module(module)
        for name in names:
            model = getattr(types, name, None)
            if model is not None:
                model.model_rebuild()


async def list_models(base_url: str | None, api_key: str | None, *, timeout: float = 15.0) -> list[str]:
    """The model ids ``GET /v1/models`` offers (for a picker), sorted; ``ProviderError`` on failure."""
    url, key = resolve_endpoint(base_url, api_key)

    import openai

    from shiro_lsp.providers.errors import provider_error

    async with openai.AsyncOpenAI(base_url=url, api_key=key, max_retries=1, timeout=timeout) as sdk:
        try:
            return sorted([model.id async for model in sdk.models.list()])
        except Exception as exc:
            raise provider_error(exc, url) from exc
