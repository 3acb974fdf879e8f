"""The learning-rate schedule: how many edits a training step may apply.

The learning rate is an edit budget. Each step the optimizer proposes patches;
the selector keeps at most ``edit_budget(...)`` of them. Like a neural-network
learning rate it can stay constant or decay over the run:

- ``constant``: ``learning_rate`` at every step.
- ``linear``: from ``learning_rate`` at step 0 straight down to
  ``min_learning_rate`` at the last step.
- ``cosine``: ``min + (lr - min) * (1 + cos(pi * t)) / 2`` with
  ``t = global_step / (total_steps - 1)``: slow decay at first and at the end,
  fast in the middle.

``global_step`` is 0-based over the whole run (``epoch * steps_per_epoch +
step``), and every function here is a pure function of its arguments, so a
resumed run computes exactly the budgets the uninterrupted run would have.
"""

from __future__ import annotations

import math
from typing import Literal, get_args

Scheduler = Literal["constant", "linear", "cosine"]
SCHEDULERS: tuple[str, ...] = get_args(Scheduler)


def _validate(
    global_step: int,
    total_steps: int,
    learning_rate: float,
    scheduler: str,
    min_learning_rate: float,
) -> None:
    if scheduler not in SCHEDULERS:
        raise ValueError(
            f"unknown learning-rate scheduler {scheduler!r}; "
            f"use one of: {', '.join(SCHEDULERS)}"
        )
    for name, value in (("global_step", global_step), ("total_steps", total_steps)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if total_steps < 1:
        raise ValueError(
            f"total_steps must be at least 1, got {total_steps} "
            "(total_steps = epochs * steps_per_epoch)"
        )
    if not 0 <= global_step < total_steps:
        raise ValueError(
            f"global_step {global_step} is outside 0..{total_steps - 1} for "
            f"total_steps={total_steps} (global_step is 0-based: "
            "epoch * steps_per_epoch + step)"
        )
    rates: dict[str, object] = {"learning_rate": learning_rate, "min_learning_rate": min_learning_rate}
    for name, rate in rates.items():
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate):
            raise ValueError(f"{name} must be a finite number, got {rate!r}")
    if learning_rate <= 0:
        raise ValueError(
            f"learning_rate must be above 0 (it is the edit budget per step), "
            f"got {learning_rate}"
        )
    if min_learning_rate < 0:
        raise ValueError(f"min_learning_rate must be 0 or more, got {min_learning_rate}")
    if min_learning_rate > learning_rate:
        raise ValueError(
            f"min_learning_rate ({min_learning_rate:g}) is above learning_rate "
            f"({learning_rate:g}); lower min_learning_rate or raise learning_rate"
        )


def lr_value(
    global_step: int,
    total_steps: int,
    learning_rate: float,
    scheduler: Scheduler,
    min_learning_rate: float = 1.0,
) -> float:
    """The (real-valued) learning rate at ``global_step``.

    Always within ``[min_learning_rate, learning_rate]``; equal to
    ``learning_rate`` at step 0 and, for ``linear`` and ``cosine``, to
    ``min_learning_rate`` at the last step. A one-step run gets
    ``learning_rate``. Raises ``ValueError`` for an unknown scheduler, a step
    outside ``0..total_steps-1`` or ``min_learning_rate > learning_rate``.
    """
    _validate(global_step, total_steps, learning_rate, scheduler, min_learning_rate)
    lr = float(learning_rate)
    low = float(min_learning_rate)
    # Step 0 is returned exactly rather than through the formula, whose float
    # rounding could land one ulp away from learning_rate.
    if scheduler == "constant" or total_steps == 1 or global_step == 0:
        value = lr
    else:
        t = global_step / (total_steps - 1)  # exactly 1.0 at the last step
        if scheduler == "linear":
            weight = 1.0 - t
        else:
            weight = (1.0 + math.cos(math.pi * t)) / 2.0
        # low + positive * weight is monotone in weight, and weight is 0.0 at
        # the last step, so the last value is exactly min_learning_rate.
        value = low + (lr - low) * weight
    return min(lr, max(low, value))


def edit_budget(
    global_step: int,
    total_steps: int,
    learning_rate: float,
    scheduler: Scheduler,
    min_learning_rate: float = 1.0,
) -> int:
    """The maximum number of edits the selector may apply at ``global_step``.

    Rounding: ``max(1, floor(value + 0.5))``, i.e. round half *up* (2.5 -> 3,
    not Python's banker's ``round`` which gives 2), and never fewer than one
    edit, because a step that may change nothing is wasted rollouts.
    """
    value = lr_value(global_step, total_steps, learning_rate, scheduler, min_learning_rate)
    return max(1, math.floor(value + 0.5))


def describe_budget(
    global_step: int,
    total_steps: int,
    learning_rate: float,
    scheduler: Scheduler,
    min_learning_rate: float = 1.0,
) -> str:
    """A short human label: ``"lr=8, cosine → 7.7"`` or ``"lr=4, constant"``."""
    value = lr_value(global_step, total_steps, learning_rate, scheduler, min_learning_rate)
    if scheduler == "constant":
        return f"lr={learning_rate:g}, constant"
    return f"lr={learning_rate:g}, {scheduler} → {value:.1f}"
