"""The paired statistics of skillopt_core/evaluation/stats.py, checked against
scipy's exact binomial test and against hand-computed values."""

from __future__ import annotations

import random

import pytest
from scipy.stats import binomtest

from skillopt_core.evaluation.stats import (
    average_within_item, binomial_two_sided_p, bootstrap_ci, mcnemar_exact, mean_ci, paired_comparison,
)


@pytest.mark.parametrize("k,n", [(0, 5), (1, 7), (3, 6), (9, 20), (12, 12), (0, 0)])
def test_exact_binomial_matches_scipy(k, n):
    expected = 1.0 if n == 0 else binomtest(k, n, 0.5).pvalue
    assert binomial_two_sided_p(k, n) == pytest.approx(expected, rel=1e-12)


def test_mcnemar_uses_only_the_discordant_items():
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(3, 3) == 1.0
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_repeats_are_averaged_within_item():
    assert average_within_item([("a", 1), ("a", 0), ("b", 1), ("a", 1)]) == {"a": pytest.approx(2 / 3), "b": 1.0}


def test_bootstrap_interval_is_reproducible_and_covers_the_mean():
    rng = random.Random(1)
    deltas = [rng.choice([-1, 0, 0, 1, 1]) for _ in range(60)]
    low, high = bootstrap_ci(deltas, seed=3)
    assert (low, high) == bootstrap_ci(deltas, seed=3)
    mean = sum(deltas) / len(deltas)
    assert low < mean < high
    assert bootstrap_ci([0.5]) == (0.5, 0.5)
    with pytest.raises(ValueError):
        bootstrap_ci([])


def test_bootstrap_covers_zero_about_95_percent_of_the_time_under_no_difference():
    covered = 0
    for trial in range(200):
        rng = random.Random(trial)
        deltas = [rng.choice([-1, 0, 1]) for _ in range(40)]
        low, high = bootstrap_ci(deltas, n_boot=500, seed=trial)
        covered += low <= 0 <= high
    assert 0.88 <= covered / 200 <= 0.99


def test_mean_ci_is_a_t_interval():
    mean, low, high = mean_ci([1.0, 2.0, 3.0])
    assert mean == 2.0 and low == pytest.approx(2 - 4.302653 / 3 ** 0.5, rel=1e-5) and high == pytest.approx(4 - low)


def test_paired_comparison_counts_wins_losses_ties_and_tests_pass_fail():
    a = {f"q{i}": 0.0 for i in range(10)}
    b = {**a, **{f"q{i}": 1.0 for i in range(8)}}
    a["q9"] = 1.0
    c = paired_comparison(a, b)
    assert (c.wins, c.losses, c.ties) == (8, 1, 1)
    assert c.mcnemar_p == pytest.approx(binomtest(1, 9, 0.5).pvalue)
    assert c.diff == pytest.approx(0.7) and c.significant and "B better" in c.summary()


def test_graded_scores_get_no_mcnemar_and_mismatched_items_are_an_error():
    c = paired_comparison({"x": 0.2, "y": 0.5}, {"x": 0.4, "y": 0.5})
    assert c.mcnemar_p is None and c.wins == 1 and c.ties == 1
    with pytest.raises(ValueError, match="same items"):
        paired_comparison({"x": 1.0}, {"y": 1.0})
