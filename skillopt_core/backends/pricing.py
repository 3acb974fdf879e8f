"""A small, documented price table for estimating the cost of API calls.

Prices are list prices in US dollars per million tokens (input, output) for
standard, uncached use, as published by OpenAI and Anthropic (2025 to early 2026). They are
an *estimate* for the run summary, not a bill: cached-input discounts, batch
pricing and price changes are not modelled. A model that is not listed (any
local or self-hosted model, an Azure deployment with a custom name) gets
``None``: unknown, never a guessed zero. The claude-code CLI reports its own
cost, which is used instead of this table.

Lookup is by the lower-cased model id: a listed name, optionally followed by a
dated snapshot (``gpt-4o-2024-08-06``, ``claude-sonnet-4-5-20250929``) or
``-latest``. Anything else (``o3-mini``, a newer ``claude-opus-4-6``) is
unknown rather than priced like a neighbour.
"""

from __future__ import annotations

import re

# What may follow a listed prefix: nothing, a dated snapshot, or "-latest".
_SNAPSHOT = re.compile(r"(-\d{4}-?\d{2}-?\d{2}|-latest)?")

PER_MILLION: dict[str, tuple[float, float]] = {
    # OpenAI
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "o3": (2.00, 8.00),
    "o4-mini": (1.10, 4.40),
    # Anthropic
    "claude-opus-4-6": (5.00, 25.00),
    "claude-opus-4-5": (5.00, 25.00),
    "claude-opus-4-1": (15.00, 75.00),
    "claude-opus-4": (15.00, 75.00),
    "claude-sonnet-4-6": (3.00, 15.00),
    "claude-sonnet-4-5": (3.00, 15.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-3-5-haiku": (0.80, 4.00),
}


def price_for(model: str | None) -> tuple[float, float] | None:
    """(input, output) dollars per million tokens, or None when unknown."""
    if not model:
        return None
    key = model.strip().lower()
    best = None
    for prefix in PER_MILLION:
        # "o3" must not claim "o3-mini", nor "claude-opus-4" a newer "claude-opus-4-6".
        if key.startswith(prefix) and _SNAPSHOT.fullmatch(key[len(prefix):]):
            if best is None or len(prefix) > len(best):
                best = prefix
    return PER_MILLION[best] if best else None


def estimate_cost(model: str | None, input_tokens: int, output_tokens: int) -> float | None:
    """Dollar estimate for one call, or None for a model not in the table."""
    price = price_for(model)
    if price is None:
        return None
    return round((input_tokens * price[0] + output_tokens * price[1]) / 1_000_000, 8)
