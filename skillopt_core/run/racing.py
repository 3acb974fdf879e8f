"""Racing: stop evaluating a candidate once its outcome is predicted with confidence.

The screen and the val gate compare a candidate with the current skill item by
item (paired deltas ``candidate - current``, each in ``[-1, 1]``) and decide
on the sum of the deltas over all ``n + m`` items: the candidate passes iff
that sum exceeds a bar. Exact early stopping (``decide_early``) only stops
once no completion could change the answer, which on 40 items with mostly
tied outcomes is rarely before item 35. Racing stops on a prediction instead:
the ``m`` items not yet evaluated are taken as a sample of the same items as
the ``n`` evaluated ones (val and screen items come in an order unrelated to
their scores), so their summed delta ``R`` has mean ``m * mean(d)`` and a
prediction interval of half-width

    z * sqrt(m * v * (1 + m / n))

(``v`` the variance of one delta, ``m * v`` the spread of the remaining sum,
``m / n`` the uncertainty of the mean itself). ``v`` is shrunk towards
``PRIOR_VARIANCE`` with weight ``PRIOR_WEIGHT`` items, so a few evaluated
items that all tie cannot claim a variance of 0. The race stops

- with a **reject** when even the interval's top, ``S + m * mean(d) +
  half-width``, does not exceed the bar (``S`` the sum so far);
- with a **pass** when even its bottom exceeds it;

never before ``min_items`` items, and never differently from the exact rule
when that is already certain. ``z`` is the one-sided normal quantile (1.64:
about a 5 % chance, per stop, that evaluating the rest would have changed the
answer, under the model above). The rule trades a bounded share of decisions
that would have flipped for the val rollouts of the many candidates that are
clearly worse, which are most of them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from skillopt_core.evaluation.gate import GateDecision, GateSettings

PRIOR_VARIANCE = 0.25
"""The variance of one delta assumed before any item is seen (outcomes that
disagree one time in four)."""
PRIOR_WEIGHT = 4.0
"""How many items' worth of weight the prior variance has."""

Verdict = Literal["pass", "fail"]


@dataclass(frozen=True)
class RaceSettings:
    """``z``: the one-sided normal quantile of the prediction bound of a
    reject (the top of the interval below the bar); ``accept_z``: that of a
    pass (its bottom above the bar; ``None``: ``z``; ``math.inf``: never
    pass early); ``min_items``: items evaluated before the race may stop."""

    z: float
    min_items: int = 10
    accept_z: float | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.z) and self.z > 0):
            raise ValueError(f"racing z must be a positive number (e.g. 1.64), got {self.z!r}")
        if self.accept_z is not None and not (self.accept_z > 0):  # inf allowed: never pass early
            raise ValueError(f"racing accept z must be a positive number or inf, got {self.accept_z!r}")
        if self.min_items < 1:
            raise ValueError(f"racing min_items must be at least 1, got {self.min_items!r}")

    @property
    def pass_z(self) -> float:
        return self.z if self.accept_z is None else self.accept_z


@dataclass(frozen=True)
class RaceCall:
    """A predicted outcome and the numbers it rests on (for the step's record)."""

    verdict: Verdict
    evaluated: int
    remaining: int
    sum_so_far: float
    low: float   # the predicted final sum's lower bound
    high: float  # and upper bound
    bar: float

    def describe(self) -> str:
        total = self.evaluated + self.remaining
        if self.verdict == "fail":
            return (f"raced after {self.evaluated} of {total} items: the paired sum {self.sum_so_far:+g} "
                    f"is predicted to end at most {self.high:+.2f}, not above the bar {self.bar:+g}")
        return (f"raced after {self.evaluated} of {total} items: the paired sum {self.sum_so_far:+g} "
                f"is predicted to end at least {self.low:+.2f}, above the bar {self.bar:+g}")


def predicted_range(deltas: Sequence[float], remaining: int, z: float) -> tuple[float, float]:
    """Bounds on the final sum of deltas once ``remaining`` more items are evaluated."""
    n = len(deltas)
    total = math.fsum(deltas)
    if remaining <= 0:
        return total, total
    if n == 0:
        return total - remaining, total + remaining
    mean = total / n
    squares = math.fsum((d - mean) ** 2 for d in deltas)
    variance = (squares + PRIOR_WEIGHT * PRIOR_VARIANCE) / (n - 1 + PRIOR_WEIGHT)
    half = z * math.sqrt(remaining * variance * (1 + remaining / n))
    centre = total + remaining * mean
    # No completion can leave [total - remaining, total + remaining]: deltas lie in [-1, 1].
    return max(total - remaining, centre - half), min(total + remaining, centre + half)


def race(settings: RaceSettings, deltas: Sequence[float], remaining: int, bar: float) -> RaceCall | None:
    """``pass`` when the final sum of deltas is predicted to exceed ``bar``,
    ``fail`` when it is predicted not to, ``None`` to keep evaluating.

    With no item remaining this is the exact answer; with fewer than
    ``settings.min_items`` evaluated it is ``None``."""
    n = len(deltas)
    if remaining > 0 and n < settings.min_items:
        return None
    # An infinite pass z leaves the hard bound: a pass only once certain.
    _, high = predicted_range(deltas, remaining, settings.z)
    low, _ = predicted_range(deltas, remaining, settings.pass_z)
    total = math.fsum(deltas)
    if low > bar:
        return RaceCall("pass", n, remaining, total, low, high, bar)
    if high <= bar:
        return RaceCall("fail", n, remaining, total, low, high, bar)
    return None


def raced_decision(settings: GateSettings, current: Mapping[str, float], partial: Mapping[str, float],
                   call: RaceCall) -> GateDecision:
    """The val gate's decision from a race: means and deltas over the evaluated items, like an exact early stop."""
    ids = [k for k in current if k in partial]
    return GateDecision(
        accept=call.verdict == "pass", policy=settings.policy,
        current_mean=math.fsum(current[k] for k in ids) / len(ids) if ids else 0.0,
        candidate_mean=math.fsum(partial[k] for k in ids) / len(ids) if ids else 0.0,
        n_items=len(current), n_evaluated=len(ids), early_stopped=True,
        deltas={k: partial[k] - current[k] for k in ids}, reason=call.describe())
