"""The console's gate line: the val scores compared and a verdict that agrees with them.

Built from real gate decisions (skillopt_core.evaluation.gate), as the trainer emits them."""

from __future__ import annotations

from skillopt_core.cli.console import gate_text
from skillopt_core.evaluation.gate import GateSettings, decide, decide_early
from skillopt_core.run import events as ev


def line(decision) -> str:
    return gate_text(ev.GateDecided(1, 2, "accept" if decision.accept else "reject", decision.reason,
                                    decision.current_mean, decision.candidate_mean, decision.n_evaluated,
                                    decision.n_items))


def test_a_better_candidate_accepted_reads_as_a_plain_comparison() -> None:
    d = decide(GateSettings("mean"), {"a": 0.5, "b": 0.5}, {"a": 1.0, "b": 0.5})
    assert line(d) == "val score 0.75 > 0.50 ✓ ACCEPT"


def test_a_higher_candidate_the_gate_rejects_says_why() -> None:
    d = decide(GateSettings("paired", alpha=0.1), {"a": 0.0, "b": 0.0}, {"a": 1.0, "b": 0.0})
    assert not d.accept
    text = line(d)
    assert text == f"val score 0.50 > 0.00 ✗ REJECT: {d.reason}" and "sign test" in text
    d = decide(GateSettings("mean", min_effect=0.6), {"a": 0.0, "b": 0.0}, {"a": 1.0, "b": 0.0})
    assert line(d) == f"val score 0.50 > 0.00 ✗ REJECT: {d.reason}" and "min effect" in d.reason


def test_a_worse_candidate_and_a_tie_read_as_rejects_without_more() -> None:
    assert line(decide(GateSettings("mean"), {"a": 1.0, "b": 0.5}, {"a": 0.5, "b": 0.5})) == \
        "val score 0.50 < 0.75 ✗ REJECT"
    assert line(decide(GateSettings("mean"), {"a": 1.0, "b": 0.0}, {"a": 0.0, "b": 1.0})) == \
        "val score 0.50 = 0.50 ✗ REJECT (ties reject)"


def test_an_early_reject_says_over_which_items_and_what_it_assumed_of_the_rest() -> None:
    current = {"a": 0.0, "b": 0.0, "c": 1.0, "d": 1.0, "e": 1.0, "f": 1.0}
    d = decide_early(GateSettings("mean"), current, {"a": 0.0, "b": 0.0})
    assert d is not None and not d.accept and "0.67 = 0.67" in d.reason
    assert line(d) == ("val score 0.00 = 0.00 on the 2 of 6 val items scored ✗ REJECT: even if the other 4 items "
                       "all scored 1.00, tie (0.67 = 0.67): ties reject")


def test_no_change_and_the_gate_off_keep_their_words() -> None:
    assert gate_text(ev.GateDecided(1, 2, "no_change", "candidate identical")) == "skipped (candidate identical)"
    assert gate_text(ev.GateDecided(1, 2, "accept_ungated", "gate off", 0.5, 0.75, 2, 2)) == \
        "val score 0.75 > 0.50 ✓ ACCEPT (gate off)"
