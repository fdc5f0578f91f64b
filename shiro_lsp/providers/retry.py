"""Shiro's own retries of a model call (the SDK's are off), so each wait can be shown to the user.

The policy is the openai SDK's: a 408/409/429/5xx answer or a connection failure/timeout is retried
(an ``x-should-retry`` header overrides that), waiting what ``retry-after(-ms)`` asks when it is
between 0 and 60 s, else an exponential backoff (0.5 s doubling, at most 8 s, minus up to 25 % jitter).
Only opening the call is retried: a stream that breaks after it started is not (the user saw part of it).
"""

from __future__ import annotations

import random

from shiro_lsp.providers.errors import provider_error, retry_after_header
from shiro_lsp.providers.types import ProviderError, Retrying

INITIAL_DELAY = 0.5
MAX_DELAY = 8.0
MAX_RETRY_AFTER = 60.0
RETRIED_STATUSES = frozenset({408, 409, 429})


class Retries:
    """The retry budget of one model call: ``after(exc)`` is the next wait, or raises the error to give up."""

    def __init__(self, max_retries: int, base_url: str, *, rng: random.Random | None = None) -> None:
        self.max_retries = max(0, max_retries)
        self.base_url = base_url
        self.done = 0
        self._rng = rng or random.Random()

    def after(self, exc: BaseException) -> Retrying:
        """The wait before the next attempt; raises the ``ProviderError`` for ``exc`` when there is none."""
        error = provider_error(exc, self.base_url)
        if self.done >= self.max_retries or not should_retry(exc, error):
            raise error from exc
        delay = self._delay(exc)
        self.done += 1
        return Retrying(
            attempt=self.done + 1,
            max_attempts=self.max_retries + 1,
            delay_seconds=round(delay, 3),
            reason=error.message,
        )

    def _delay(self, exc: BaseException) -> float:
        response = getattr(exc, "response", None)
        asked = retry_after_header(response.headers) if response is not None else None
        if asked is not None and 0 < asked <= MAX_RETRY_AFTER:
            return asked
        backoff = min(INITIAL_DELAY * 2.0**self.done, MAX_DELAY)
        return backoff * (1 - 0.25 * self._rng.random())


def should_retry(exc: BaseException, error: ProviderError) -> bool:
    import openai

    if isinstance(exc, openai.APIStatusError):
        header = exc.response.headers.get("x-should-retry")
        if header in ("true", "false"):
            return header == "true"
        if error.provider_code == "insufficient_quota" or error.is_images_unsupported:
            return False  # (a server without vision says so with a 500: the same request fails again)
        return exc.status_code in RETRIED_STATUSES or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError)  # APITimeoutError is one too
