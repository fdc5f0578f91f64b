"""Token prices and the usage line (spec §3.6): USD per million tokens, matched by longest prefix."""

from __future__ import annotations

# (input, output) USD per million tokens.
PRICES: dict[str, tuple[float, float]] = {
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-haiku-4": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5-nano": (0.05, 0.4),
    "gpt-5": (1.25, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4o": (2.5, 10.0),
    "o4-mini": (1.1, 4.4),
    "deepseek-chat": (0.27, 1.1),
    "deepseek-reasoner": (0.55, 2.19),
    "grok-4": (3.0, 15.0),
}


def price_of(model: str) -> tuple[float, float] | None:
    """The (input, output) rate of ``model``: lowercased, provider prefix (``openai/…``) stripped."""
    name = model.lower().rsplit("/", 1)[-1]
    matches = [prefix for prefix in PRICES if name.startswith(prefix)]
    return PRICES[max(matches, key=len)] if matches else None


def cost_of(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """USD for the tokens, or None when the model is unpriced."""
    rate = price_of(model)
    if rate is None:
        return None
    return input_tokens / 1e6 * rate[0] + output_tokens / 1e6 * rate[1]


def format_usd(amount: float) -> str:
    if amount == 0:
        return "$0.00"
    if amount < 0.01:
        return f"${amount:.4f}"
    return f"${amount:.2f}"


def usage_line(model: str, input_tokens: int, output_tokens: int) -> str:
    tokens = f"{input_tokens} in / {output_tokens} out tokens"
    cost = cost_of(model, input_tokens, output_tokens)
    return f"{tokens} - {format_usd(cost)}" if cost is not None else f"{tokens} ({model} is unpriced)"
