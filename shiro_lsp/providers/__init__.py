"""Model providers on the openai SDK: Responses and Chat Completions adapters, the endpoint policy.

Importing this package does not import ``openai`` (server start time): the SDK loads in ``make_client``.
"""

from shiro_lsp.providers.factory import list_models, make_client
from shiro_lsp.providers.types import (
    GenerateResult,
    ModelClient,
    ModelEvent,
    ModelRequest,
    ProviderError,
    ProviderNotice,
    ReasoningDelta,
    Retrying,
    StepFinished,
    TextDelta,
    ToolCallReady,
    ToolInputStart,
    ToolSpec,
)
from shiro_lsp.usage import Usage

__all__ = [
    "GenerateResult",
    "ModelClient",
    "ModelEvent",
    "ModelRequest",
    "ProviderError",
    "ProviderNotice",
    "ReasoningDelta",
    "Retrying",
    "StepFinished",
    "TextDelta",
    "ToolCallReady",
    "ToolInputStart",
    "ToolSpec",
    "Usage",
    "list_models",
    "make_client",
]
