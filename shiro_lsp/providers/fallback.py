"""The endpoint policy of the reference (spec §7.1) for ``api: "auto"``.

Chat Completions first; on the official OpenAI endpoint only, a non-retryable 400/404/405/415/422/501
that arrives before anything streamed switches to the Responses API. The switch is sticky for the
process (per base URL), announced once with the reference's notice text, and if every endpoint
rejects the request the last error surfaces. 401, rate limits, 5xx and network errors propagate.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence

from shiro_lsp.providers.types import (
    GenerateResult,
    ModelClient,
    ModelEvent,
    ModelRequest,
    ProviderError,
    ProviderNotice,
    Retrying,
    close_stream,
)

FALLBACK_STATUSES = frozenset({400, 404, 405, 415, 422, 501})
ENDPOINT_NAMES = {"chat": "chat-completions", "responses": "responses"}

# base URL → index of the endpoint in use; sticky for the life of the process, like the reference.
_sticky: dict[str, int] = {}


def forget_fallbacks() -> None:
    """Forget every sticky switch (tests; a settings change that should retry Chat Completions)."""
    _sticky.clear()


def should_fall_back(error: ProviderError) -> bool:
    return error.status in FALLBACK_STATUSES and not error.is_stale_item


def fallback_notice(from_api: str, to_api: str, reason: str) -> str:
    return f"endpoint fallback: {from_api} rejected the request, retrying on {to_api}\n  {reason}"


class FallbackClient:
    """A ``ModelClient`` trying ``clients`` in order, remembering the first one that was not rejected."""

    def __init__(
        self,
        clients: Sequence[ModelClient],
        *,
        key: str,
        on_notice: Callable[[str], None] | None = None,
    ) -> None:
        if not clients:
            raise ValueError("FallbackClient needs at least one client")
        self._clients = list(clients)
        self._key = key
        self._on_notice = on_notice

    @property
    def current(self) -> ModelClient:
        return self._clients[_sticky.get(self._key, 0)]

    @property
    def api_name(self) -> str:
        return self.current.api_name

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        while True:
            client = self.current
            delivered = False
            try:
                events = client.stream(request)
                try:
                    async for event in events:
                        delivered = delivered or not isinstance(event, Retrying)
                        yield event
                finally:  # closed with this stream, at once: the endpoint's client must know it was cut
                    await close_stream(events)
                return
            except ProviderError as error:
                notice = None if delivered else self._switch(error)
                if notice is None:
                    raise
                yield ProviderNotice(notice)

    async def generate(self, request: ModelRequest) -> GenerateResult:
        while True:
            try:
                return await self.current.generate(request)
            except ProviderError as error:
                if self._switch(error) is None:
                    raise

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()

    def _switch(self, error: ProviderError) -> str | None:
        """Move to the next endpoint if ``error`` allows it; the notice text, or None to re-raise."""
        index = _sticky.get(self._key, 0)
        if index + 1 >= len(self._clients) or not should_fall_back(error):
            return None
        _sticky[self._key] = index + 1
        from_api, to_api = (
            ENDPOINT_NAMES.get(c.api_name, c.api_name) for c in self._clients[index : index + 2]
        )
        text = fallback_notice(from_api, to_api, error.message)
        if self._on_notice is not None:
            self._on_notice(text)
        return text
