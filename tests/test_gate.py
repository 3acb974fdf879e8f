"""The validation gate: policies, early stopping, and the early == full property."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillopt_core.evaluation.gate import (
    GATE_POLICIES,
    GateSettings,
    decide,
    decide_early,
    gate_scores_from_samples,
    sign_test_p,
)

MEAN = GateSettings(policy="mean")
PAIRED = GateSettings(policy="paired", min_effect=0.0, alpha=0.1)
NO_REGRESSION = GateSettings(policy="no_regression")


def ids(n: int) -> list[str]:
    return [f"q{i}" for i in range(n)]


# --- mean ---------------------------------------------------------------------


def test_mean_gate_accepts_strictly_better():
    decision = decide(MEAN, {"a": 0.6, "b": 0.7}, {"a": 0.66, "b": 0.7})
    assert decision.accept
    assert decision.reason == "val score 0.68 > 0.65"


def test_mean_gate_rejects_tie():
    decision = decide(MEAN, {"a": 0.6, "b": 0.7}, {"a": 0.7, "b": 0.6})
    assert not decision.accept
    assert decision.reason == "tie (0.65 = 0.65): ties reject"


def test_mean_gate_treats_float_noise_as_tie():
    # 0.1 + 0.2 != 0.3 in binary floating point; the gate must still see a tie.
    decision = decide(MEAN, {"a": 0.3, "b": 0.0}, {"a": 0.1, "b": 0.2})
    assert not decision.accept
    assert "tie" in decision.reason


def test_mean_gate_rejects_worse():
    decision = decide(MEAN, {"a": 0.6, "b": 0.7}, {"a": 0.5, "b": 0.7})
    assert not decision.accept
    assert decision.reason == "val score 0.60 < 0.65"


def test_mean_gate_rejects_gain_below_min_effect():
    decision = decide(GateSettings("mean", min_effect=0.1), {"a": 0.6, "b": 0.7}, {"a": 0.7, "b": 0.7})
    assert not decision.accept
    assert "min effect 0.100" in decision.reason


def test_decision_records_per_item_deltas():
    decision = decide(MEAN, {"a": 0.5, "b": 1.0}, {"a": 1.0, "b": 0.75})
    assert decision.deltas == {"a": 0.5, "b": -0.25}
    assert (decision.n_items, decision.n_evaluated, decision.early_stopped) == (2, 2, False)


# --- paired -------------------------------------------------------------------


def test_sign_test_p_is_exact_binomial_tail():
    assert sign_test_p(8, 8) == 1 / 256
    assert sign_test_p(6, 11) == 0.5
    assert sign_test_p(0, 0) == 1.0


def test_paired_gate_accepts_clear_gain_above_min_effect():
    current = {i: 0.0 for i in ids(8)} | {"q8": 1.0, "q9": 1.0}
    candidate = {i: 1.0 for i in ids(10)}
    decision = decide(GateSettings("paired", min_effect=0.1, alpha=0.1), current, candidate)
    assert decision.accept
    assert "8 of 8 changed items improved" in decision.reason


def test_paired_gate_rejects_significant_gain_below_min_effect():
    current = {i: 0.5 for i in ids(20)}
    candidate = {i: 0.52 for i in ids(20)}  # 20 of 20 improved, p ~ 1e-6, gain 0.02
    decision = decide(GateSettings("paired", min_effect=0.05, alpha=0.1), current, candidate)
    assert not decision.accept
    assert "< min effect 0.050" in decision.reason


def test_paired_gate_rejects_tiny_noisy_gains():
    # 6 items up, 5 down, 9 unchanged: mean gain +0.05 but p = 0.5.
    current = {i: 0.0 for i in ids(6)} | {f"d{i}": 1.0 for i in range(5)} | {f"u{i}": 0.5 for i in range(9)}
    candidate = {i: 1.0 for i in ids(6)} | {f"d{i}": 0.0 for i in range(5)} | {f"u{i}": 0.5 for i in range(9)}
    decision = decide(PAIRED, current, candidate)
    assert not decision.accept
    assert "6 of 11 changed items improved (sign test p=0.5 > alpha 0.1)" in decision.reason


def test_paired_gate_rejects_tie():
    decision = decide(PAIRED, {"a": 1.0, "b": 0.0}, {"a": 1.0, "b": 0.0})
    assert not decision.accept
    assert "ties reject" in decision.reason


# --- no_regression ------------------------------------------------------------


def test_no_regression_accepts_gain_without_regression():
    decision = decide(NO_REGRESSION, {"a": 0.5, "b": 1.0}, {"a": 1.0, "b": 1.0})
    assert decision.accept
    assert decision.reason == "no item regressed and val score 1.00 > 0.75"


def test_no_regression_rejects_regression_despite_higher_mean():
    decision = decide(NO_REGRESSION, {"a": 0.0, "b": 0.0, "q17": 1.0}, {"a": 1.0, "b": 1.0, "q17": 0.0})
    assert not decision.accept
    assert decision.reason == "item q17 (1.00 → 0.00) regressed"


def test_no_regression_rejects_tie_without_regression():
    decision = decide(NO_REGRESSION, {"a": 0.5}, {"a": 0.5})
    assert not decision.accept
    assert "ties reject" in decision.reason


def test_no_regression_rejects_a_single_regression_early():
    current = {i: 1.0 for i in ids(10)}
    decision = decide_early(NO_REGRESSION, current, {"q3": 0.0})
    assert decision is not None
    assert not decision.accept
    assert decision.early_stopped
    assert decision.n_evaluated == 1
    assert "item q3 (1.00 → 0.00) regressed" in decision.reason


# --- early stopping -----------------------------------------------------------


def test_mean_early_waits_while_remaining_items_could_still_win():
    current = {i: 0.8 for i in ids(10)}
    assert decide_early(MEAN, current, {"q0": 0.0}) is None


def test_mean_early_rejects_once_even_perfect_remaining_cannot_beat():
    current = {i: 0.8 for i in ids(10)}
    # Two zeros: at best (8 * 1.0) / 10 = 0.8, a tie, which rejects.
    decision = decide_early(MEAN, current, {"q0": 0.0, "q1": 0.0})
    assert decision is not None and not decision.accept
    assert decision.early_stopped
    assert decision.reason == (
        "decided after 2 of 10 items: even if the other 8 items all scored 1.00, "
        "tie (0.80 = 0.80): ties reject"
    )


def test_mean_early_accepts_once_already_won():
    current = {i: 0.2 for i in ids(10)}  # total 2.0
    assert decide_early(MEAN, current, {"q0": 1.0, "q1": 1.0}) is None  # worst case ties
    decision = decide_early(MEAN, current, {"q0": 1.0, "q1": 1.0, "q2": 1.0})
    assert decision is not None and decision.accept
    assert decision.early_stopped
    assert "other 7 items all scored 0.00, val score 0.30 > 0.20" in decision.reason


def test_early_decision_records_evaluated_items_only():
    current = {"q0": 0.5, "q1": 1.0, "q2": 0.0}
    decision = decide_early(NO_REGRESSION, current, {"q1": 0.0})
    assert decision is not None
    assert (decision.n_items, decision.n_evaluated) == (3, 1)
    assert decision.deltas == {"q1": -1.0}
    assert (decision.current_mean, decision.candidate_mean) == (1.0, 0.0)


def test_early_with_every_item_evaluated_is_the_full_decision():
    current = {"a": 0.6, "b": 0.7}
    candidate = {"a": 0.66, "b": 0.7}
    assert decide_early(MEAN, current, candidate) == decide(MEAN, current, candidate)


# --- the early == full property -----------------------------------------------

VALUES = st.one_of(st.sampled_from([0.0, 0.25, 1 / 3, 0.5, 2 / 3, 0.75, 1.0]), st.floats(0.0, 1.0))


@st.composite
def gate_cases(draw, policy):
    names = ids(draw(st.integers(0, 12)))
    current = {i: draw(VALUES) for i in names}
    # Often keep the current value, so ties and unchanged items are common.
    candidate = {i: draw(st.one_of(st.just(current[i]), VALUES)) for i in names}
    order = draw(st.permutations(names))
    gate = GateSettings(
        policy=policy,
        min_effect=draw(st.sampled_from([0.0, 0.05, 0.1, 0.25])),
        alpha=draw(st.sampled_from([0.05, 0.1, 0.25, 0.5, 1.0])),
    )
    return gate, current, candidate, order


@pytest.mark.parametrize("policy", GATE_POLICIES)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_early_decision_always_equals_full_decision(policy, data):
    gate, current, candidate, order = data.draw(gate_cases(policy))
    full = decide(gate, current, candidate)
    for k in range(len(order) + 1):
        partial = {i: candidate[i] for i in order[:k]}
        early = decide_early(gate, current, partial)
        if k == len(order):
            assert early == full
        elif early is not None:
            assert early.accept == full.accept
            assert early.n_evaluated == k and early.early_stopped


@pytest.mark.parametrize("gate", [MEAN, GateSettings("mean", min_effect=0.25), PAIRED, NO_REGRESSION])
def test_early_decision_holds_for_every_completion_on_a_grid(gate):
    grid = (0.0, 0.5, 1.0)
    names = ids(3)
    decided = 0
    for current_values in itertools.product(grid, repeat=3):
        current = dict(zip(names, current_values))
        for partial_values in itertools.product((None, *grid), repeat=3):
            partial = {i: v for i, v in zip(names, partial_values) if v is not None}
            early = decide_early(gate, current, partial)
            if early is None:
                continue
            decided += 1
            remaining = [i for i in names if i not in partial]
            for fill in itertools.product(grid, repeat=len(remaining)):
                full = decide(gate, current, partial | dict(zip(remaining, fill)))
                assert full.accept == early.accept, (current, partial, fill)
    assert decided > 27  # more than the fully evaluated cases: early stops happened


# --- inputs and outputs -------------------------------------------------------


def test_decide_requires_candidate_on_every_val_item():
    with pytest.raises(ValueError, match="not evaluated on 1 of 2 val items \\(b\\)"):
        decide(MEAN, {"a": 0.5, "b": 0.5}, {"a": 1.0})


def test_decide_rejects_candidate_items_unknown_to_current():
    with pytest.raises(ValueError, match="same val items"):
        decide_early(MEAN, {"a": 0.5}, {"z": 1.0})


def test_scores_outside_unit_interval_are_rejected():
    with pytest.raises(ValueError, match="'a' must be within 0..1"):
        decide(MEAN, {"a": 1.5}, {"a": 1.0})


def test_empty_val_set_rejects():
    decision = decide(MEAN, {}, {})
    assert not decision.accept
    assert "no val items" in decision.reason


def test_unknown_policy_error_names_valid_ones():
    with pytest.raises(ValueError, match="mean, paired, no_regression"):
        GateSettings(policy="median")  # type: ignore[arg-type]


def test_decision_to_dict_is_json_ready():
    decision = decide(MEAN, {"a": 0.5}, {"a": 1.0})
    data = json.loads(json.dumps(decision.to_dict()))
    assert data["accept"] is True
    assert data["deltas"] == {"a": 0.5}
    assert data["policy"] == "mean"


def test_gate_scores_from_samples_is_mean_per_item():
    assert gate_scores_from_samples({"a": [1.0, 0.0, 1.0, 1.0], "b": [0.0]}) == {"a": 0.75, "b": 0.0}


def test_gate_scores_from_samples_rejects_item_without_samples():
    with pytest.raises(ValueError, match="'a' has no samples"):
        gate_scores_from_samples({"a": []})
