"""The validation gate: keep a candidate skill only if it scores better.

Candidate and current skill are compared on the same val items, item by item.
Each item's value is a float in ``[0, 1]`` (the engine passes the mean hard
score over that item's samples, see :func:`gate_scores_from_samples`).

Policies:

- ``mean``: accept iff the candidate's mean beats the current mean by more
  than ``min_effect`` (the paper's gate). A tie rejects.
- ``paired``: per-item deltas (candidate - current). Accept iff the mean delta
  is at least ``min_effect`` and strictly positive, AND a one-sided exact sign
  test over the non-zero deltas gives ``p <= alpha``.
- ``no_regression``: accept iff no item got worse AND the candidate mean beats
  the current mean by more than ``min_effect``.

Float noise: two values closer than :data:`TIE_EPSILON` count as equal (item
scores are means over samples, so ``1/3 + 2/3`` and ``1.0`` must tie).

Early stopping (:func:`decide_early`) rests on one property, proved in the
tests: every policy's accept rule is *monotone* in each candidate value --
raising one candidate item's score can turn a reject into an accept, never the
reverse. Candidate values lie in ``[0, 1]``, so any completion of a partial
evaluation lies between "all remaining items at 0.0" and "all at 1.0"; if both
extremes give the same answer, every completion does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

GatePolicy = Literal["mean", "paired", "no_regression"]
GATE_POLICIES: tuple[str, ...] = get_args(GatePolicy)

TIE_EPSILON = 1e-9
"""Differences at or below this are float noise and count as ties."""

_MAX_LISTED = 3  # regressed / missing items named in one message


@dataclass(frozen=True)
class GateSettings:
    """``min_effect``: the gain (in mean score, 0..1) the candidate must show.
    ``alpha``: the sign test's significance level (``paired`` only)."""

    policy: GatePolicy = "mean"
    min_effect: float = 0.0
    alpha: float = 0.1

    def __post_init__(self) -> None:
        if self.policy not in GATE_POLICIES:
            raise ValueError(
                f"unknown gate policy {self.policy!r}; use one of: {', '.join(GATE_POLICIES)}"
            )
        if not (isinstance(self.min_effect, (int, float)) and 0.0 <= self.min_effect <= 1.0):
            raise ValueError(
                f"gate min_effect must be within 0..1 (a gain in mean score), got {self.min_effect!r}"
            )
        if not (isinstance(self.alpha, (int, float)) and 0.0 < self.alpha <= 1.0):
            raise ValueError(f"gate alpha must be within (0, 1], got {self.alpha!r}")


@dataclass(frozen=True)
class GateDecision:
    """A gate verdict with its evidence.

    ``current_mean`` and ``candidate_mean`` are over the ``n_evaluated`` items
    the candidate was scored on (0.0 when none); ``deltas`` maps each of those
    item ids to candidate - current. ``early_stopped`` is true when the answer
    was certain before every val item was evaluated.
    """

    accept: bool
    policy: str
    current_mean: float
    candidate_mean: float
    n_items: int
    n_evaluated: int
    early_stopped: bool
    deltas: dict[str, float] = field(default_factory=dict)
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def gate_scores_from_samples(per_item_samples: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """Mean score per item id. An item with no samples cannot be scored and
    raises ``ValueError`` (score a failed sample 0.0 instead of dropping it)."""
    result: dict[str, float] = {}
    for item_id, samples in per_item_samples.items():
        if len(samples) == 0:
            raise ValueError(
                f"val item {item_id!r} has no samples; score failed samples 0.0 "
                "rather than dropping them"
            )
        values = [_check_value("sample", item_id, v) for v in samples]
        result[item_id] = math.fsum(values) / len(values)
    return result


def decide(
    settings: GateSettings,
    current: Mapping[str, float],
    candidate: Mapping[str, float],
) -> GateDecision:
    """The gate decision on complete data.

    ``candidate`` must have exactly ``current``'s item ids; otherwise
    ``ValueError`` names the missing or unknown ids. Values must be in 0..1.
    With no val items at all the candidate cannot show a gain: reject.
    """
    cur = _check_scores("current", current)
    cand = _check_scores("candidate", candidate)
    _check_no_unknown_ids(cur, cand)
    missing = [item_id for item_id in cur if item_id not in cand]
    if missing:
        raise ValueError(
            f"candidate was not evaluated on {len(missing)} of {len(cur)} val items "
            f"({_list_ids(missing)}); evaluate it on every val item, or call "
            "decide_early() with partial results"
        )
    accept, reason = _rule(settings, cur, cand)
    return _decision(settings, cur, cand, accept=accept, early_stopped=False, reason=reason)


def decide_early(
    settings: GateSettings,
    current: Mapping[str, float],
    candidate_partial: Mapping[str, float],
) -> GateDecision | None:
    """The gate decision if it is already certain, else ``None``.

    ``candidate_partial`` holds the val items evaluated so far (any subset of
    ``current``'s ids, in any order). The decision is computed with every
    remaining item at its best (1.0) and at its worst (0.0); when both agree,
    that is the decision, and it equals what :func:`decide` returns for every
    possible completion (see the module docstring for why). Under
    ``no_regression`` one regressed item therefore rejects at once. When no
    item remains this is simply :func:`decide`.
    """
    cur = _check_scores("current", current)
    partial = _check_scores("candidate", candidate_partial)
    _check_no_unknown_ids(cur, partial)
    remaining = [item_id for item_id in cur if item_id not in partial]
    if not remaining:
        return decide(settings, cur, partial)
    best = {item_id: partial.get(item_id, 1.0) for item_id in cur}
    worst = {item_id: partial.get(item_id, 0.0) for item_id in cur}
    accept_best, reason_best = _rule(settings, cur, best)
    accept_worst, reason_worst = _rule(settings, cur, worst)
    if accept_best != accept_worst:
        return None
    # Explain with the extreme that makes the verdict certain: a reject holds
    # even at best, an accept holds even at worst.
    fill, bound_reason = ("0.00", reason_worst) if accept_worst else ("1.00", reason_best)
    others = "the other item" if len(remaining) == 1 else f"the other {len(remaining)} items all"
    reason = (
        f"decided after {len(partial)} of {len(cur)} items: even if {others} "
        f"scored {fill}, {bound_reason}"
    )
    evaluated = {item_id: cur[item_id] for item_id in cur if item_id in partial}
    return _decision(
        settings,
        evaluated,
        partial,
        accept=accept_worst,
        early_stopped=True,
        reason=reason,
        n_items=len(cur),
    )


# --- the rules -------------------------------------------------------------
#
# Each rule sees full vectors with the same ids and must be monotone in every
# candidate value (decide_early depends on it). Every quantity used below is a
# monotone function of each candidate value: fsum is correctly rounded, and
# rounding, division by a positive count and subtracting a constant all
# preserve order, so the float computation keeps the monotonicity of the math.


def _rule(
    settings: GateSettings, current: dict[str, float], candidate: dict[str, float]
) -> tuple[bool, str]:
    if not current:
        return False, "no val items to compare: nothing can show a gain"
    if settings.policy == "mean":
        return _mean_rule(settings, current, candidate)
    if settings.policy == "paired":
        return _paired_rule(settings, current, candidate)
    return _no_regression_rule(settings, current, candidate)


def _mean_rule(
    settings: GateSettings, current: dict[str, float], candidate: dict[str, float]
) -> tuple[bool, str]:
    cur_mean, cand_mean = _mean(current), _mean(candidate)
    gain = cand_mean - cur_mean
    if gain > settings.min_effect + TIE_EPSILON:
        c, u = _two(cand_mean, cur_mean)
        extra = f" + min effect {settings.min_effect:.2f}" if settings.min_effect > 0 else ""
        return True, f"val score {c} > {u}{extra}"
    if abs(gain) <= TIE_EPSILON:
        return False, f"tie ({cand_mean:.2f} = {cur_mean:.2f}): ties reject"
    c, u = _two(cand_mean, cur_mean)
    if gain < 0:
        return False, f"val score {c} < {u}"
    return False, (
        f"val score {c} > {u} but the gain {gain:+.3f} is not above "
        f"min effect {settings.min_effect:.3f}"
    )


def _no_regression_rule(
    settings: GateSettings, current: dict[str, float], candidate: dict[str, float]
) -> tuple[bool, str]:
    regressed = [
        item_id for item_id in current if candidate[item_id] - current[item_id] < -TIE_EPSILON
    ]
    if regressed:
        shown = ", ".join(
            f"{item_id} ({current[item_id]:.2f} → {candidate[item_id]:.2f})"
            for item_id in regressed[:_MAX_LISTED]
        )
        more = len(regressed) - _MAX_LISTED
        tail = f" and {more} more" if more > 0 else ""
        if len(regressed) == 1:
            return False, f"item {shown} regressed"
        return False, f"{len(regressed)} items regressed: {shown}{tail}"
    accept, reason = _mean_rule(settings, current, candidate)
    return accept, ("no item regressed and " if accept else "no item regressed but ") + reason


def _paired_rule(
    settings: GateSettings, current: dict[str, float], candidate: dict[str, float]
) -> tuple[bool, str]:
    # Monotone in each delta: the mean gain only grows; a delta moving from
    # negative to zero drops one trial and keeps the successes (P[Bin(n-1) >= k]
    # <= P[Bin(n) >= k]); from zero to positive adds a trial and a success
    # (P[Bin(n+1) >= k+1] = (P[Bin(n) >= k] + P[Bin(n) >= k+1]) / 2
    # <= P[Bin(n) >= k]). So p never rises as a delta rises, and both
    # conditions of the conjunction are upward-closed.
    deltas = [candidate[item_id] - current[item_id] for item_id in current]
    improved = sum(1 for d in deltas if d > TIE_EPSILON)
    changed = improved + sum(1 for d in deltas if d < -TIE_EPSILON)
    p = sign_test_p(improved, changed)
    gain = _mean(candidate) - _mean(current)

    # "mean gain >= max(min_effect, tiny epsilon)", with the >= read up to
    # float noise so a gain equal to min_effect in exact arithmetic passes.
    gain_ok = gain > TIE_EPSILON and gain >= settings.min_effect - TIE_EPSILON
    test_ok = p <= settings.alpha
    evidence = f"{improved} of {changed} changed items improved (sign test p={p:.3g}"
    if gain_ok and test_ok:
        return True, (
            f"mean gain {gain:+.3f} ≥ min effect {settings.min_effect:.3f} and "
            f"{evidence} ≤ alpha {settings.alpha:g})"
        )
    problems = []
    if abs(gain) <= TIE_EPSILON:
        problems.append(f"tie (mean gain {gain:+.3f}): ties reject")
    elif gain < 0:
        problems.append(f"mean gain {gain:+.3f} is negative")
    elif not gain_ok:
        problems.append(f"mean gain {gain:+.3f} < min effect {settings.min_effect:.3f}")
    if not test_ok:
        problems.append(f"{evidence} > alpha {settings.alpha:g})")
    return False, "; ".join(problems)


def sign_test_p(improved: int, changed: int) -> float:
    """One-sided exact sign test: P[X >= improved] for X ~ Binomial(changed, 1/2).

    With no changed items there is no evidence of a gain: p = 1.0.
    """
    if not 0 <= improved <= changed:
        raise ValueError(f"need 0 <= improved <= changed, got {improved} of {changed}")
    if changed == 0:
        return 1.0
    tail = sum(math.comb(changed, k) for k in range(improved, changed + 1))
    return tail / 2**changed  # exact integers, one correctly rounded division


# --- helpers ---------------------------------------------------------------


def _decision(
    settings: GateSettings,
    current: dict[str, float],
    candidate: dict[str, float],
    *,
    accept: bool,
    early_stopped: bool,
    reason: str,
    n_items: int | None = None,
) -> GateDecision:
    """Build the decision; ``current`` holds exactly the evaluated items."""
    return GateDecision(
        accept=accept,
        policy=settings.policy,
        current_mean=_mean(current),
        candidate_mean=_mean({item_id: candidate[item_id] for item_id in current}),
        n_items=len(current) if n_items is None else n_items,
        n_evaluated=len(current),
        early_stopped=early_stopped,
        deltas={item_id: candidate[item_id] - current[item_id] for item_id in current},
        reason=reason,
    )


def _mean(scores: Mapping[str, float]) -> float:
    # fsum is exact then rounded once, so the mean does not depend on the
    # order items were evaluated in.
    return math.fsum(scores.values()) / len(scores) if scores else 0.0


def _two(a: float, b: float) -> tuple[str, str]:
    """Format two different scores with just enough digits to tell them apart."""
    for digits in (2, 4, 6):
        left, right = f"{a:.{digits}f}", f"{b:.{digits}f}"
        if left != right:
            break
    return left, right


def _check_value(what: str, item_id: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} score for val item {item_id!r} must be a number, got {value!r}")
    number = float(value)
    if not (math.isfinite(number) and 0.0 <= number <= 1.0):
        raise ValueError(f"{what} score for val item {item_id!r} must be within 0..1, got {value!r}")
    return number


def _check_scores(what: str, scores: Mapping[str, float]) -> dict[str, float]:
    return {item_id: _check_value(what, item_id, v) for item_id, v in scores.items()}


def _check_no_unknown_ids(current: dict[str, float], candidate: dict[str, float]) -> None:
    unknown = [item_id for item_id in candidate if item_id not in current]
    if unknown:
        raise ValueError(
            f"candidate has scores for {len(unknown)} item(s) the current skill was not "
            f"evaluated on ({_list_ids(unknown)}); compare both skills on the same val items"
        )


def _list_ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:_MAX_LISTED])
    more = len(ids) - _MAX_LISTED
    return f"{shown} and {more} more" if more > 0 else shown
