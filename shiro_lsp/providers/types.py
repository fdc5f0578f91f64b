"""What the engine and the provider adapters exchange: requests, stream events, usage, errors."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from shiro_lsp.errors import MODEL_ERROR, ShiroError
from shiro_lsp.messages import Message
from shiro_lsp.tools.base import ToolSpec as ToolSpec  # one type for what the model is offered
from shiro_lsp.usage import Usage

ReasoningEffort = Literal["none", "low", "medium", "high", "xhigh"]
FinishReason = Literal["stop", "length", "tool-calls", "content-filter", "other"]
ErrorKind = Literal[
    "auth",
    "model_not_found",
    "rate_limit",
    "network",
    "stale_item",
    "bad_request",
    "server",
    "cancelled",
    "unknown",
]

STALE_ITEM = re.compile(r"item with id '[^']*' not found", re.IGNORECASE)
# What servers with no native tool calling answer to a request with ``tools``: Ollama (a model with no
# tool template), vLLM without --enable-auto-tool-choice, llama-server without --jinja.
TOOLS_UNSUPPORTED = re.compile(
    r"does not support tools|--enable-auto-tool-choice|tools param requires --jinja|tools are not supported",
    re.IGNORECASE,
)

# What servers answer to an image part for a model (or a server build) that takes no images: llama.cpp
# without --mmproj, vLLM and LM Studio with a text-only model, OpenAI's text-only models, Ollama.
IMAGES_UNSUPPORTED = re.compile(
    r"image input is not supported|(?:model|it) does not support (?:images?|vision)|not a multimodal model"
    r"|image_url is only supported|does not support image|images? (?:are|is) not supported"
    r"|vision is not (?:supported|enabled)|multimodal (?:input )?is not supported|--mmproj",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ModelRequest:
    model: str
    instructions: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    reasoning_effort: ReasoningEffort | None = None  # None: the model has no reasoning setting
    max_output_tokens: int | None = None
    temperature: float | None = None  # None: the server's default


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True)
class ToolInputStart:
    call_id: str
    name: str


@dataclass(frozen=True)
class ToolCallReady:
    call_id: str
    name: str
    arguments: str  # raw JSON text as the model wrote it; the engine parses and validates


@dataclass(frozen=True)
class ProviderNotice:
    """Something the user should see that is not model output (e.g. an endpoint fallback)."""

    text: str


@dataclass(frozen=True)
class Retrying:
    """A model call failed and will be tried again after ``delay_seconds``: ``attempt`` of ``max_attempts``."""

    attempt: int
    max_attempts: int
    delay_seconds: float
    reason: str  # the error, in words


@dataclass(frozen=True)
class StepFinished:
    """The end of one model call: the assistant message (spec §5.1) to append, usage, why it stopped."""

    message: Message
    usage: Usage
    finish_reason: FinishReason


ModelEvent = (
    TextDelta | ReasoningDelta | ToolInputStart | ToolCallReady | ProviderNotice | Retrying | StepFinished
)


@dataclass(frozen=True)
class GenerateResult:
    text: str
    usage: Usage


class ModelClient(Protocol):
    @property
    def api_name(self) -> str:
        """``"responses"`` or ``"chat"`` (a fallback client reports the API it currently uses)."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """One model call, streamed; ends with exactly one ``StepFinished`` or raises ``ProviderError``."""
        ...

    async def generate(self, request: ModelRequest) -> GenerateResult:
        """One model call without tools (summaries, memory compaction)."""
        ...

    async def aclose(self) -> None:
        """Close the HTTP connections (the client is not used afterwards)."""
        ...


class ProviderError(ShiroError):
    """A model call that failed, with a message a person can act on and a ``kind`` code can act on."""

    code = MODEL_ERROR

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind,
        status: int | None = None,
        retry_after: float | None = None,
        request_id: str | None = None,
        provider_code: str | None = None,
    ) -> None:
        data: dict[str, Any] = {"kind": kind}
        if status is not None:
            data["status"] = status
        super().__init__(message, data=data)
        self.kind: ErrorKind = kind
        self.status = status
        self.retry_after = retry_after
        self.request_id = request_id
        self.provider_code = provider_code  # OpenAI's error code, e.g. "context_length_exceeded"

    @property
    def is_tools_unsupported(self) -> bool:
        """The server cannot take native tools for this model: the text format can still work."""
        return self.status == 400 and bool(TOOLS_UNSUPPORTED.search(self.message))

    @property
    def is_images_unsupported(self) -> bool:
        """The model or server refused the request's images: the text can still go."""
        return bool(IMAGES_UNSUPPORTED.search(self.message))

    @property
    def is_stale_item(self) -> bool:
        """The provider lost an item this history points at (spec §5.6); resend the history inline."""
        return self.kind == "stale_item" or bool(STALE_ITEM.search(self.message))


async def close_stream(events: AsyncIterator[Any]) -> None:
    """Ends a model stream now (its request with it), rather than when the garbage collector gets to it."""
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()
