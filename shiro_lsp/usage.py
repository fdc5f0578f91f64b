"""One value type for token usage and its cost: a model step, a turn, a chat, a session.

How an unpriced cost adds up: ``cost_usd`` None means unknown (a model with no known price, a
local one), and unknown + known = unknown. A total that mixes an unpriced step with priced ones is
not a price, so it is shown as unknown ("unpriced model"), never as the priced part alone. The zero
``Usage()`` costs a known 0.0, so priced steps add up from it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    """Of ``input_tokens``, those the provider served from its prompt cache."""
    reasoning_tokens: int = 0
    """Of ``output_tokens``, those spent reasoning (as the provider reports them)."""
    cost_usd: float | None = 0.0
    """USD; None when unknown (see the module docstring)."""

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            cost,
        )

    @property
    def counted(self) -> bool:
        """Whether any token was counted (a total with none has nothing to price)."""
        return bool(self.input_tokens or self.output_tokens)

    @classmethod
    def saved(
        cls, input_tokens: int, output_tokens: int, cached_input_tokens: int, cost_usd: float | None
    ) -> Usage:
        """A total as a session stores it: no cost there means unknown, unless no token was counted
        yet (then nothing was priced: a known zero)."""
        total = cls(input_tokens, output_tokens, cached_input_tokens, cost_usd=cost_usd)
        return (
            total
            if cost_usd is not None or total.counted
            else cls(input_tokens, output_tokens, cached_input_tokens)
        )


NOT_RUN = Usage(cost_usd=None)
"""A chat that never reached the model (failed before its turn, cleared from the queue): no cost to show."""
