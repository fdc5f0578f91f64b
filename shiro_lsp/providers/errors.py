"""openai SDK exceptions → ``ProviderError`` with a message a person can act on (never a traceback)."""

from __future__ import annotations

import math
import socket
from typing import Any

from shiro_lsp.providers.types import STALE_ITEM, ErrorKind, ProviderError

SET_KEY_HINT = 'Set it with "Shiro: Set API key" or OPENAI_API_KEY.'


def provider_error(exc: BaseException, base_url: str) -> ProviderError:
    """Translate an exception raised by the openai SDK (or a stream) into a ``ProviderError``."""
    import openai

    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, openai.APIStatusError):
        return _status_error(exc, base_url)
    if isinstance(exc, openai.APITimeoutError):
        return ProviderError(f"The model at {base_url} did not answer in time.", kind="network")
    if isinstance(exc, openai.APIConnectionError):
        return ProviderError(
            f"Cannot reach the model at {base_url}: {_connection_reason(exc)}.", kind="network"
        )
    if isinstance(exc, openai.APIError):  # an error reported inside a stream: no HTTP status
        return stream_error(exc.message, _body_field(exc.body, "code"), base_url)
    if isinstance(exc, openai.OpenAIError):
        return ProviderError(f"The model client failed: {exc}", kind="unknown")
    return ProviderError(f"The model call failed unexpectedly: {type(exc).__name__}: {exc}", kind="unknown")


def stream_error(message: str, code: str | None, base_url: str) -> ProviderError:
    """An error the provider sent mid-stream (Responses ``error`` event, Chat ``{"error": …}`` chunk)."""
    if STALE_ITEM.search(message):
        return ProviderError(
            f"The provider no longer has an item this session points at: {message}", kind="stale_item"
        )
    kind: ErrorKind = "rate_limit" if code == "rate_limit_exceeded" else "server"
    suffix = f" ({code})" if code else ""
    return ProviderError(f"The model at {base_url} failed mid-reply{suffix}: {message}", kind=kind)


def cut_stream(base_url: str) -> ProviderError:
    return ProviderError(
        f"The connection to the model at {base_url} closed before the reply finished.", kind="network"
    )


def _status_error(exc: Any, base_url: str) -> ProviderError:
    status: int = exc.status_code
    detail = _detail(exc)
    code = exc.code if isinstance(exc.code, str) else None
    kind: ErrorKind
    retry_after: float | None = None
    if status == 401:
        kind, message = "auth", f"The API key was rejected (401). {SET_KEY_HINT}"
    elif status == 403:
        kind, message = "auth", f"The API key is not allowed to do this (403): {detail}"
    elif STALE_ITEM.search(detail):
        kind = "stale_item"
        message = f"The provider no longer has an item this session points at ({status}): {detail}"
    elif status == 404 and _is_model_not_found(code, detail):
        kind, message = "model_not_found", f'The model "{_model_of(exc)}" was not found at {base_url} (404).'
    elif status == 429:
        kind, retry_after = "rate_limit", retry_after_header(exc.response.headers)
        wait = f"; retry after {_seconds(retry_after)}" if retry_after is not None else ""
        quota = f": {detail}" if code == "insufficient_quota" else ""
        message = f"Rate limited by the provider (429){wait}.{quota}"
    elif status >= 500:
        kind, message = "server", f"The model server at {base_url} failed ({status}): {detail}"
    elif status == 404:
        kind, message = "bad_request", f"{base_url} has no such endpoint or resource (404): {detail}"
    else:
        kind, message = "bad_request", f"The provider rejected the request ({status}): {detail}"
    return ProviderError(
        message,
        kind=kind,
        status=status,
        retry_after=retry_after,
        request_id=exc.request_id,
        provider_code=code,
    )


def _detail(exc: Any) -> str:
    message = _body_field(exc.body, "message")
    if message:
        return message
    text = str(exc.message)
    return text.removeprefix(f"Error code: {exc.status_code} - ").strip() or "no details given"


def _body_field(body: object, name: str) -> str | None:
    if isinstance(body, dict):
        value = body.get(name)
        if isinstance(value, str):
            return value
    return None


def _is_model_not_found(code: str | None, detail: str) -> bool:
    lowered = detail.lower()
    return code == "model_not_found" or (
        "model" in lowered and ("not found" in lowered or "does not exist" in lowered)
    )


def _model_of(exc: Any) -> str:
    import json

    try:
        body = json.loads(exc.request.content or b"{}")
    except (ValueError, AttributeError):
        return "?"
    return str(body.get("model", "?")) if isinstance(body, dict) else "?"


def retry_after_header(headers: Any) -> float | None:
    """The wait a ``retry-after-ms`` or ``retry-after`` (seconds) header asks for, if any."""
    for header, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


def _seconds(value: float) -> str:
    return f"{value:g} s" if value >= 1 or value == 0 else f"{value * 1000:g} ms"


def _connection_reason(exc: BaseException) -> str:
    chain = _causes(exc)
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return "connection refused"
    if any(isinstance(e, socket.gaierror) for e in chain):
        return "host not found"
    text = " | ".join(f"{type(e).__name__}: {e}" for e in chain).lower()
    if "incomplete" in text or "peer closed" in text or "remoteprotocol" in text:
        return "the connection closed before the reply finished"
    if "ssl" in text or "certificate" in text:
        return f"TLS failed ({chain[-1]})"
    return str(chain[-1]) if len(chain) > 1 else "connection error"


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it, outermost first (cycles cut)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 10:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain
