"""The learning-rate schedule: exact per-step budgets and its invariants.

Expected budgets below were computed by hand from the formulas in the brief:
linear  lr=8, min=1, 8 steps: value = 8 - k               -> 8 7 6 5 4 3 2 1
cosine  lr=8, min=1, 8 steps: value = 1 + 3.5 (1 + cos(pi k / 7))
        = 8.00 7.65 6.68 5.28 3.72 2.32 1.35 1.00          -> 8 8 7 5 4 2 1 1
linear  lr=4, min=1, 5 steps: 4.00 3.25 2.50 1.75 1.00      -> 4 3 3 2 1
cosine  lr=4, min=1, 5 steps: 4.00 3.56 2.50 1.44 1.00      -> 4 4 3 1 1
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillopt_core.optim.schedule import (
    SCHEDULERS,
    describe_budget,
    edit_budget,
    lr_value,
)


def budget_schedule(total_steps, learning_rate, scheduler, min_learning_rate=1.0):
    return [edit_budget(k, total_steps, learning_rate, scheduler, min_learning_rate) for k in range(total_steps)]


def test_constant_budget_is_learning_rate_at_every_step():
    assert budget_schedule(8, 8, "constant") == [8] * 8


def test_linear_budgets_lr8_min1_8_steps():
    assert [edit_budget(k, 8, 8, "linear", 1) for k in range(8)] == [8, 7, 6, 5, 4, 3, 2, 1]


def test_cosine_budgets_lr8_min1_8_steps():
    assert [edit_budget(k, 8, 8, "cosine", 1) for k in range(8)] == [8, 8, 7, 5, 4, 2, 1, 1]


def test_linear_budgets_round_half_up():
    # Step 2 has value exactly 2.5: round half up gives 3 (banker's round gives 2).
    assert lr_value(2, 5, 4, "linear", 1) == 2.5
    assert budget_schedule(5, 4, "linear", 1) == [4, 3, 3, 2, 1]


def test_cosine_budgets_lr4_min1_5_steps():
    assert budget_schedule(5, 4, "cosine", 1) == [4, 4, 3, 1, 1]


def test_cosine_value_matches_formula_midway():
    assert lr_value(1, 8, 8, "cosine", 1) == pytest.approx(7.6534, abs=1e-4)


def test_budget_is_never_below_one_edit():
    assert budget_schedule(4, 2, "linear", 0) == [2, 1, 1, 1]


def test_single_step_run_uses_learning_rate():
    for scheduler in SCHEDULERS:
        assert lr_value(0, 1, 6, scheduler, 1) == 6.0


@settings(max_examples=200, deadline=None)
@given(
    total_steps=st.integers(min_value=1, max_value=300),
    learning_rate=st.floats(min_value=0.01, max_value=64),
    min_fraction=st.floats(min_value=0, max_value=1),
    scheduler=st.sampled_from(["linear", "cosine"]),
)
def test_decaying_schedules_start_at_lr_end_at_min_and_never_increase(
    total_steps, learning_rate, min_fraction, scheduler
):
    min_lr = learning_rate * min_fraction
    values = [lr_value(k, total_steps, learning_rate, scheduler, min_lr) for k in range(total_steps)]
    budgets = [edit_budget(k, total_steps, learning_rate, scheduler, min_lr) for k in range(total_steps)]
    assert values[0] == learning_rate
    if total_steps > 1:
        assert values[-1] == min_lr
    assert all(min_lr <= v <= learning_rate for v in values)
    assert all(a >= b for a, b in zip(values, values[1:]))
    assert all(a >= b for a, b in zip(budgets, budgets[1:]))


def test_unknown_scheduler_error_names_valid_ones():
    with pytest.raises(ValueError, match="constant, linear, cosine"):
        lr_value(0, 8, 8, "exponential", 1)  # type: ignore[arg-type]


def test_step_outside_run_is_rejected_with_range():
    with pytest.raises(ValueError, match=r"outside 0\.\.7"):
        edit_budget(8, 8, 8, "linear", 1)


def test_min_above_learning_rate_is_rejected():
    with pytest.raises(ValueError, match="min_learning_rate"):
        lr_value(0, 8, 2, "cosine", 3)


def test_zero_total_steps_is_rejected():
    with pytest.raises(ValueError, match="total_steps"):
        lr_value(0, 0, 8, "constant", 1)


def test_describe_budget_decaying():
    assert describe_budget(1, 8, 8, "cosine", 1) == "lr=8, cosine → 7.7"


def test_describe_budget_constant():
    assert describe_budget(3, 8, 4, "constant", 1) == "lr=4, constant"
