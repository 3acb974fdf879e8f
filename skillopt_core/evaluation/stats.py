"""Paired statistics for comparing two skills on the same items.

Everything here takes per-item values of two skills measured on the *same*
items with the *same* sample seeds (repeats already averaged within each
item, see :func:`average_within_item`), so the comparison is paired: item
difficulty cancels out and only the skills' difference is left.

- :func:`bootstrap_ci` -- a percentile bootstrap interval for the mean of
  per-item differences, resampling items (the unit that was drawn).
- :func:`mcnemar_exact` -- the exact McNemar test for pass/fail outcomes: of
  the discordant items (one skill passed, the other failed), is the split
  further from 50/50 than chance allows? An exact two-sided binomial test.
- :func:`paired_comparison` -- both, plus per-item wins / losses / ties, as
  one :class:`Comparison` a person can read.

The bootstrap draws are seeded, so a report is reproducible.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

TIE = 1e-9


def average_within_item(samples: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Mean value per item id of ``(item_id, value)`` pairs (repeats of one
    item -- several samples or seeds -- count as one item, not several)."""
    sums: dict[str, list[float]] = {}
    for item_id, value in samples:
        sums.setdefault(item_id, []).append(float(value))
    return {k: math.fsum(v) / len(v) for k, v in sums.items()}


def binomial_two_sided_p(k: int, n: int) -> float:
    """Exact two-sided p of ``k`` successes in ``n`` trials at p = 1/2:
    twice the smaller tail, capped at 1 (n = 0 gives 1.0)."""
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 1.0
    low = min(k, n - k)
    tail = sum(math.comb(n, i) for i in range(low + 1))
    return min(1.0, 2 * tail / 2**n)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Exact McNemar p-value: ``a_only`` items passed by A and failed by B,
    ``b_only`` the reverse; concordant items carry no information."""
    if a_only < 0 or b_only < 0:
        raise ValueError(f"counts must be non-negative, got {a_only}, {b_only}")
    return binomial_two_sided_p(a_only, a_only + b_only)


def bootstrap_ci(
    deltas: Sequence[float], *, level: float = 0.95, n_boot: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``deltas`` (resampling
    items with replacement). One delta gives the degenerate interval
    ``(d, d)``; none is an error."""
    if not deltas:
        raise ValueError("bootstrap_ci needs at least one paired item")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be within (0, 1), got {level}")
    n = len(deltas)
    if n == 1:
        return float(deltas[0]), float(deltas[0])
    rng = random.Random(seed)
    values = list(map(float, deltas))
    means = sorted(math.fsum(rng.choices(values, k=n)) / n for _ in range(n_boot))
    lo_i = math.floor((1 - level) / 2 * n_boot)
    hi_i = min(n_boot - 1, math.ceil((1 + level) / 2 * n_boot) - 1)
    return means[lo_i], means[hi_i]


def mean_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """Mean and Student-t interval of ``values`` (e.g. one figure per seed):
    ``(mean, low, high)``. One value gives a zero-width interval."""
    if not values:
        raise ValueError("mean_ci needs at least one value")
    n = len(values)
    mean = math.fsum(values) / n
    if n == 1:
        return mean, mean, mean
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    from scipy.stats import t  # a dependency of the core already

    half = float(t.ppf((1 + level) / 2, n - 1)) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


@dataclass(frozen=True)
class Comparison:
    """B minus A on ``n_items`` shared items.

    ``wins``: items where B scored higher; ``losses``: lower; ``ties``: equal.
    ``mcnemar_p`` is set when every value is 0 or 1 (pass/fail), else None.
    """

    n_items: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float
    level: float
    wins: int
    losses: int
    ties: int
    mcnemar_p: float | None
    per_item: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def significant(self) -> bool:
        """The interval excludes zero."""
        return self.ci_low > 0 or self.ci_high < 0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "significant": self.significant}

    def summary(self, a: str = "A", b: str = "B") -> str:
        pct = f"{self.level:.0%}"
        test = f"; exact McNemar p={self.mcnemar_p:.3g}" if self.mcnemar_p is not None else ""
        verdict = ("no difference shown" if not self.significant
                   else f"{b} better" if self.diff > 0 else f"{a} better")
        return (f"{b} - {a}: {self.diff:+.3f} ({pct} CI {self.ci_low:+.3f} .. {self.ci_high:+.3f}) over "
                f"{self.n_items} items; {self.wins} wins, {self.losses} losses, {self.ties} ties{test}: {verdict}")


def paired_comparison(
    a: Mapping[str, float], b: Mapping[str, float], *, level: float = 0.95, n_boot: int = 2000, seed: int = 0
) -> Comparison:
    """Compare B with A item by item. Both must hold the same item ids
    (otherwise ``ValueError`` names the ones only one side has)."""
    only_a = sorted(set(a) - set(b))
    only_b = sorted(set(b) - set(a))
    if only_a or only_b:
        raise ValueError(
            f"the two skills were not measured on the same items (only A: {only_a[:3]}, only B: {only_b[:3]}); "
            "evaluate both on the same split and limit"
        )
    if not a:
        raise ValueError("no items to compare; load more items or choose another split")
    ids = sorted(a)
    deltas = [float(b[i]) - float(a[i]) for i in ids]
    wins = sum(d > TIE for d in deltas)
    losses = sum(d < -TIE for d in deltas)
    binary = all(float(v) in (0.0, 1.0) for v in (*a.values(), *b.values()))
    p = None
    if binary:
        p = mcnemar_exact(losses, wins)
    low, high = bootstrap_ci(deltas, level=level, n_boot=n_boot, seed=seed)
    mean_a = math.fsum(map(float, a.values())) / len(a)
    mean_b = math.fsum(map(float, b.values())) / len(b)
    return Comparison(
        len(ids), mean_a, mean_b, math.fsum(deltas) / len(deltas), low, high, level,
        wins, losses, len(ids) - wins - losses, p,
        {i: {"a": float(a[i]), "b": float(b[i])} for i in ids},
    )
