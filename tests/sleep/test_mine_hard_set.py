"""The miner on the harder hand-labelled set (tests/sleep/mine_hard.py, issue 23 §4).

The figures asserted are the ones reached (bench/mine_labelled.py prints them beside
the baseline), with a little margin; the issue's targets (recall and precision
>= 0.85, at most 2 near-miss merges) are not met yet, and the test says so by
pinning what is, so a change that loses ground fails here.
"""

from __future__ import annotations

import mine_hard
import mine_score
import pytest

# Reached on this set (the "held" half was not looked at while tuning); baseline before the
# one-argument rule: recall 0.344, precision 0.462, 11 of 12 near-miss pairs merged.
REACHED = {"recall": 0.78, "precision": 0.79, "near_miss_merges": 5}
MARGIN = 0.05


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


def test_one_argument_apart_is_two_tasks(figures) -> None:
    merged = set(figures["all"]["merged"])
    for pair in ("ledger/bump-minor+ledger/bump-patch", "ledger/integration-tests+ledger/unit-tests",
                 "ledger/review-last-commit+ledger/review-staged"):
        assert pair not in merged


def test_the_held_out_half_holds_too(figures) -> None:
    held = figures["held"]  # never looked at while tuning: 0.833 / 0.941 / 3 of 6 reached
    assert held["recall"] >= 0.83 - MARGIN and held["precision"] >= 0.94 - MARGIN
    assert held["near_miss_merges"] <= 3, held["merged"]
