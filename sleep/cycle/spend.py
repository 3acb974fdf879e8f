"""A night's spend, written to its record as each model call finishes.

The core's ledger gives the authoritative totals when the run ends; a night
killed before then (``kill -9``, a power cut, a full disk) would otherwise
lose what it spent. :class:`SpendMeter` wraps the night's backends (inside
the core's metering, so a call the budget refuses never reaches it) and
counts calls the way the ledger does: a finished call, and a failed request
(it was sent and may have cost money) with what it consumed. After each one
the night's record is saved, so ``history`` shows what a killed night spent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from skillopt_core import Backend, CompletionRequest, RequestFailed, Usage
from sleep import crashpoints


class SpendMeter:
    """Running totals in the shape of the night record's ``usage``; ``save`` persists them."""

    def __init__(self, save: Callable[[dict[str, Any]], None]) -> None:
        self._save = save
        self._lock = threading.Lock()
        self.calls = self.input_tokens = self.output_tokens = 0
        self.cost_usd = 0.0

    def usage(self) -> dict[str, Any]:
        return {"model_calls": self.calls, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "tokens": self.input_tokens + self.output_tokens, "cost_usd": round(self.cost_usd, 6)}

    def add(self, usage: Usage | None) -> None:
        with self._lock:
            self.calls += 1
            if usage is not None:
                self.input_tokens += usage.input_tokens
                self.output_tokens += usage.output_tokens
                self.cost_usd += usage.cost_usd or 0.0
            totals, n = self.usage(), self.calls
            self._save(totals)
        crashpoints.reached(f"model call {n}")

    def wrap(self, backends: dict[str, Backend]) -> dict[str, Backend]:
        """The same mapping with each distinct backend metered once (shared instances stay shared)."""
        wrapped: dict[int, Backend] = {}
        return {role: wrapped.setdefault(id(b), _Metered(b, self)) for role, b in backends.items()}


class _Metered:
    def __init__(self, inner: Backend, meter: SpendMeter) -> None:
        self.inner = inner
        self.meter = meter
        self.name = inner.name
        self.model = inner.model

    def describe(self) -> str:
        return self.inner.describe()

    async def complete(self, request: CompletionRequest):
        try:
            completion = await self.inner.complete(request)
        except RequestFailed as exc:
            self.meter.add(exc.usage)
            raise
        self.meter.add(completion.usage)
        return completion
