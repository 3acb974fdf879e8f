"""The miner on the harder hand-labelled set (tests/sleep/mine_hard.py, issue 23 §4).

The figures asserted are the ones reached (bench/mine_labelled.py prints them beside
the baseline and the previous method), with a little margin, so a change that loses
ground fails here. The whole set now meets the issue's targets (recall and precision
>= 0.85, at most 2 near-miss merges); the held-out half's recall (0.833) is just below.
"""

from __future__ import annotations

import mine_hard
import mine_score
import pytest

# Reached on this set (the "held" half was not looked at while tuning): 0.906 / 0.968 / 2 of 12.
# Before: 0.781 / 0.788 / 5 (the first round of issue 23); baseline before the one-argument
# rule: recall 0.344, precision 0.462, 11 of 12 near-miss pairs merged.
REACHED = {"recall": 0.906, "precision": 0.968, "near_miss_merges": 2}
TARGET = {"recall": 0.85, "precision": 0.85, "near_miss_merges": 2}
MARGIN = 0.03


@pytest.fixture(scope="module")
def figures() -> dict:
    corpus, split = mine_hard.build()
    mp = pytest.MonkeyPatch()
    import tempfile
    with tempfile.TemporaryDirectory() as home:
        mp.setenv("SKILLOPT_HOME", home)
        try:
            tasks = mine_score.mine_home(corpus.sessions)
        finally:
            mp.undo()
    return mine_score.score(tasks, corpus.labels, corpus.near_miss_pairs, split)


def test_the_set_is_what_it_claims() -> None:
    corpus, split = mine_hard.build()
    assert len(corpus.clusters()) == 32 and len(corpus.near_miss_pairs) == 12
    assert len({s.project_dir for s in corpus.sessions}) == 4
    assert {s.host for s in corpus.sessions} >= {"claude-code", "codex", "copilot-vscode", "copilot-cli"}
    for pair in corpus.near_miss_pairs:  # a pair is never split between tuning and held-out
        assert len({split[k] for k in pair}) == 1


def test_recall_and_precision_hold(figures) -> None:
    assert figures["all"]["recall"] >= REACHED["recall"] - MARGIN, figures["all"]["missed"]
    assert figures["all"]["precision"] >= REACHED["precision"] - MARGIN


def test_near_miss_merges_do_not_grow(figures) -> None:
    assert figures["all"]["near_miss_merges"] <= REACHED["near_miss_merges"], figures["all"]["merged"]


def test_the_whole_set_meets_the_issue_targets(figures) -> None:
    whole = figures["all"]
    assert whole["recall"] >= TARGET["recall"], whole["missed"]
    assert whole["precision"] >= TARGET["precision"]
    assert whole["near_miss_merges"] <= TARGET["near_miss_merges"], whole["merged"]


def test_the_tuning_half_holds(figures) -> None:
    tune = figures["tune"]  # 1.000 / 1.000 / 0 of 6 reached
    assert tune["recall"] >= 1.0 - MARGIN and tune["precision"] >= 1.0 - MARGIN
    assert tune["near_miss_merges"] == 0, tune["merged"]


def test_one_argument_apart_is_two_tasks(figures) -> None:
    merged = set(figures["all"]["merged"])
    for pair in ("ledger/bump-minor+ledger/bump-patch", "ledger/integration-tests+ledger/unit-tests",
                 "ledger/review-last-commit+ledger/review-staged", "store/i18n-de+store/i18n-fr",
                 "grepr/bench-main+grepr/bench-release"):
        assert pair not in merged


def test_the_held_out_half_holds_too(figures) -> None:
    held = figures["held"]  # never looked at while tuning: 0.833 / 0.941 / 2 of 6 reached (before: 3 of 6)
    assert held["recall"] >= 0.833 - MARGIN and held["precision"] >= 0.941 - MARGIN
    assert held["near_miss_merges"] <= 2, held["merged"]
