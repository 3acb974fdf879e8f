"""One proposal per lesson (issue 30 §4): staging a candidate whose lesson is pending, adopted
or rejected for the same skill is refused (a rejected one again once its evidence changed);
review never lists a duplicate staged before the check; adopting the twin of an adopted
proposal says it changes nothing and exits 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from proposal_testutil import CANDIDATE, NIGHT, SKILL, make_repo, report

from sleep.cli import main
from sleep.proposals import adopt, get, review, stage
from sleep.proposals.decide import reject
from sleep.proposals.errors import DuplicateProposal, NothingToAdopt, NothingToPropose


def test_the_same_lesson_is_not_staged_twice_whatever_its_whitespace(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    first = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    with pytest.raises(DuplicateProposal, match=f"same lesson as proposal {first.id} \\(pending"):
        stage(repo / SKILL, CANDIDATE.replace("- Run `ruff", "-  Run   `ruff") + "\n", report(), night=NIGHT)
    assert issubclass(DuplicateProposal, NothingToPropose)
    assert [p.id for p in review.list_proposals(project=repo)] == [first.id]


def test_a_rejected_lesson_comes_back_only_with_new_evidence(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    first = stage(repo / SKILL, CANDIDATE, report(lesson_evidence="e1"), night=NIGHT)
    reject(first.id, reason="not now")
    with pytest.raises(DuplicateProposal, match="rejected and its evidence has not changed"):
        stage(repo / SKILL, CANDIDATE, report(lesson_evidence="e1"), night=NIGHT)
    again = stage(repo / SKILL, CANDIDATE, report(lesson_evidence="e2"), night=NIGHT)
    assert again.state == "pending" and again.id != first.id
    reject(again.id)
    by_hand = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)  # `propose`: the person means it
    assert by_hand.state == "pending"


def _legacy_twins(tmp_path: Path, monkeypatch):
    """Two proposals of one lesson, staged the way nights did before the check."""
    import importlib

    stage_module = importlib.import_module("sleep.proposals.stage")

    repo = make_repo(tmp_path / "app")
    with monkeypatch.context() as m:
        m.setattr(stage_module, "duplicate_of", lambda *a, **k: None)
        one = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
        two = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    return repo, one, two


def test_review_never_lists_duplicates(tmp_path: Path, monkeypatch, capsys) -> None:
    repo, one, two = _legacy_twins(tmp_path, monkeypatch)
    assert [p.id for p in review.list_proposals(project=repo)] == [one.id]
    assert main(["review", "--project", str(repo)]) == 0
    out = capsys.readouterr().out
    assert one.id in out and two.id not in out


def test_adopting_the_twin_of_an_adopted_proposal_changes_nothing_and_says_so(tmp_path: Path, monkeypatch,
                                                                             capsys) -> None:
    repo, one, two = _legacy_twins(tmp_path, monkeypatch)
    adopt(one.id)
    before = (repo / SKILL).read_bytes()
    with pytest.raises(NothingToAdopt, match=f"changes nothing.*adopted with proposal {one.id}"):
        adopt(two.id)
    assert main(["adopt", two.id]) == 2
    assert "changes nothing" in capsys.readouterr().err
    assert get(two.id).state == "stale" and (repo / SKILL).read_bytes() == before  # not recorded as adopted
    assert [p.id for p in review.list_proposals(project=repo)] == []  # the twin of an adopted lesson is not listed
