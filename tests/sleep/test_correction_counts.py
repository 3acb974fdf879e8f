"""The night's summary adds up (issue 30 §5): every offered correction is kept by the gate,
rejected by the gate, refused (with the reason) or not selected, in the record the CLI and the
MCP tools show, over every skill of the night."""

from __future__ import annotations

from types import SimpleNamespace

from skillopt_core import Edit
from skillopt_core.run.record import StepRecord
from sleep.cycle.verdict import all_corrections, correction_outcomes, describe_corrections

A, B, C, D = (f"- Rule {x}." for x in "ABCD")


def test_each_offered_correction_is_counted_once_with_the_refusal_reason() -> None:
    refused = [(Edit("add", content=C, origin="correction"), "addresses the judge, not the task (x)"),
               (Edit("add", content="- The grader likes it.", origin="optimizer"), "instructs about grading")]
    history = [StepRecord.from_dict({"step": 1, "action": "reject", "selected_edits": [
                   {"op": "add", "content": B, "origin": "correction"}]}),
               StepRecord.from_dict({"step": 2, "action": "accept", "selected_edits": [
                   {"op": "add", "content": A, "origin": "correction+optimizer"},
                   {"op": "add", "content": "- Mine.", "origin": "optimizer"}]})]
    edits = [Edit("add", content=x, origin="correction") for x in (A, B, C, D)]
    c = correction_outcomes(edits, history, refused)
    assert c["kept"] == [A] and c["rejected"] == [B] and c["not_selected"] == [D]
    assert c["refused"] == [{"content": C, "reason": "addresses the judge, not the task (x)"}]
    assert sum(len(c[k]) for k in ("kept", "rejected", "refused", "not_selected")) == len(c["offered"]) == 4
    assert describe_corrections(c) == ("4 offered: 1 kept by the gate, 1 rejected by the gate, 1 refused, "
                                       "1 not selected (refused: '- Rule C.' addresses the judge, not the task (x))")


def test_the_night_line_counts_every_skill_and_reads_older_records() -> None:
    night = SimpleNamespace(corrections={"offered": [A], "accepted": [A], "rejected": []},
                            skills=[{"corrections": {"offered": [A], "accepted": [A], "rejected": []}},
                                    {"corrections": {"offered": [B, C], "kept": [B], "rejected": [],
                                                     "refused": [], "not_selected": [C]}}])
    assert describe_corrections(all_corrections(night)) == (
        "3 offered: 2 kept by the gate, 0 rejected by the gate, 0 refused, 1 not selected")
