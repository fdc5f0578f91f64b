"""Token prices and the usage line (spec §3.6): USD per million tokens, matched by longest prefix."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from shiro_lsp.providers.factory import is_local
from shiro_lsp.usage import Usage

# (input, output, cached input) USD per million tokens; cached input is what the provider bills for
# prompt tokens it served from its cache (OpenAI's "cached input", Anthropic's cache reads).
PRICES: dict[str, tuple[float, float, float]] = {
    "claude-opus-4": (15.0, 75.0, 1.5),
    "claude-sonnet-4": (3.0, 15.0, 0.3),
    "claude-haiku-4": (1.0, 5.0, 0.1),
    "claude-3-5-haiku": (0.8, 4.0, 0.08),
    "gpt-5-mini": (0.25, 2.0, 0.025),
    "gpt-5-nano": (0.05, 0.4, 0.005),
    "gpt-5": (1.25, 10.0, 0.125),
    "gpt-4o-mini": (0.15, 0.6, 0.075),
    "gpt-4o": (2.5, 10.0, 1.25),
    "o4-mini": (1.1, 4.4, 0.275),
    "deepseek-chat": (0.27, 1.1, 0.07),
    "deepseek-reasoner": (0.55, 2.19, 0.14),
    "grok-4": (3.0, 15.0, 0.75),
}


def is_billed(base_url: str | None) -> bool:
    """Whether tokens sent to this endpoint cost money: not a server on this machine or on a private
    network (a local model server serves any model name, "gpt-5" included, for free). None: the
    default endpoint (OpenAI's)."""
    if not base_url:
        return True
    if is_local(base_url):
        return False
    host = urlsplit(base_url).hostname or ""
    try:
        return not ipaddress.ip_address(host).is_private
    except ValueError:  # a name, not an address
        return True


def price_of(model: str) -> tuple[float, float] | None:
    """The (input, output) rates of ``model``: lowercased, provider prefix (``openai/…``) stripped."""
    rates = _rates_of(model)
    return None if rates is None else rates[:2]


def _rates_of(model: str) -> tuple[float, float, float] | None:
    name = model.lower().rsplit("/", 1)[-1]
    matches = [prefix for prefix in PRICES if name.startswith(prefix)]
    return PRICES[max(matches, key=len)] if matches else None


def cost_of(model: str, usage: Usage) -> float | None:
    """USD for the tokens (``cached_input_tokens`` are part of ``input_tokens``), or None when unpriced."""
    input_tokens, output_tokens = usage.input_tokens, usage.output_tokens
    cached_input_tokens = usage.cached_input_tokens
    rate = _rates_of(model)
    if rate is None:
        return None
    cached = min(max(cached_input_tokens, 0), input_tokens)
    return ((input_tokens - cached) * rate[0] + cached * rate[2] + output_tokens * rate[1]) / 1e6


def format_usd(amount: float) -> str:
    if amount == 0:
        return "$0.00"
    if amount < 0.01:
        return f"${amount:.4f}"
    return f"${amount:.2f}"


def usage_line(model: str, input_tokens: int, output_tokens: int) -> str:
    tokens = f"{input_tokens} in / {output_tokens} out tokens"
    cost = cost_of(model, Usage(input_tokens, output_tokens))
    return f"{tokens} - {format_usd(cost)}" if cost is not None else f"{tokens} ({model} is unpriced)"
