"""What a step after a skill's training returns: its :class:`StepResult` and what it :class:`Spent`.

The with/without measurement (:mod:`sleep.cycle.lifecycle`), the trigger step
(:mod:`sleep.cycle.triggers`) and the package step (:mod:`sleep.cycle.package`)
each return one frozen :class:`StepResult`; they touch no record. The part
(:mod:`sleep.cycle.aftertraining`) hands each to the night's writer
(:meth:`sleep.cycle.writer.NightWriter.step_done`), which keeps ``to_dict()``
under the part's field of the same name (``paired``, ``triggers``,
``package``); the part's usage adds what each spent. A step that decides the
part's outcome returns an :class:`Outcome`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Outcome", "Spent", "StepResult"]


@dataclass(frozen=True)
class Spent:
    """Model calls and tokens a step spent (the night record's ``spent`` keys)."""

    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    @classmethod
    def of_ledger(cls, totals: Mapping[str, Any], calls: int = 0) -> Spent:
        """From a usage ledger's totals (``calls``, ``input_tokens``, …), plus ``calls`` made outside it."""
        return cls(calls + totals.get("calls", 0), totals.get("input_tokens", 0), totals.get("output_tokens", 0),
                   totals.get("cost_usd", 0.0))

    def __add__(self, other: Spent) -> Spent:
        return Spent(self.model_calls + other.model_calls, self.input_tokens + other.input_tokens,
                     self.output_tokens + other.output_tokens, round(self.cost_usd + other.cost_usd, 6))

    def to_dict(self) -> dict[str, Any]:
        return {"model_calls": self.model_calls, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "cost_usd": self.cost_usd}

    def usage(self) -> dict[str, Any]:
        """As the part's usage (:class:`sleep.nightstore.NightUsage`)."""
        return {**self.to_dict(), "tokens": self.input_tokens + self.output_tokens, "cost_usd": round(self.cost_usd, 6)}


@dataclass(frozen=True)
class StepResult:
    """One step's result: what it measured (``figures``, as the record keeps them), or why it was
    ``skipped`` or failed (``error``), what it ``spent`` and the proposal it staged (``id``,
    ``branch``, ``kind``; or ``not_staged``: why)."""

    name: Literal["paired", "triggers", "package"]  # the part's field that keeps it
    figures: Mapping[str, Any] = field(default_factory=dict)
    skipped: str = ""
    error: str = ""
    spent: Spent | None = None
    proposal: Mapping[str, Any] | None = None

    @property
    def calls(self) -> int:
        return self.spent.model_calls if self.spent is not None else 0

    def get(self, key: str, default: Any = None) -> Any:
        """A figure (``kind``, ``verdict``, ``why``, …)."""
        return self.figures.get(key, default)

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.figures)
        out.update({k: v for k, v in (("skipped", self.skipped), ("error", self.error)) if v})
        if self.spent is not None:
            out["spent"] = self.spent.to_dict()
        if self.proposal is not None:
            out["proposal"] = dict(self.proposal)
        return out


@dataclass(frozen=True)
class Outcome:
    """A part's outcome as a step decided it (:func:`sleep.cycle.lifecycle.after_gate`): the part's
    ``outcome``, ``reason`` and the proposal staged (None: none)."""

    outcome: str
    reason: str
    proposal: dict[str, Any] | None = None
