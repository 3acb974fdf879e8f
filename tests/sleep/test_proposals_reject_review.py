"""Reject deletes the branch and keeps the record; review lists pending and stale proposals."""

from __future__ import annotations

from pathlib import Path

import pytest
from proposal_testutil import NIGHT, staged, CANDIDATE, SKILL, SKILL_TEXT, git, make_repo, report, write

from sleep.proposals import ProposalDecided, adopt, get, list_proposals, reject, stage
from sleep.proposals.render import review_lines



def test_reject_deletes_the_branch_and_its_note(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    d = reject(p.id, reason="too long")
    assert d.branch_deleted
    assert git(repo, "branch", "--list", "skillopt/*") == ""
    assert git(repo, "notes", "--ref=refs/notes/skillopt", "list") == ""


def test_reject_keeps_the_record_report_and_reason(tmp_path: Path) -> None:
    _, p = staged(tmp_path)
    reject(p.id, reason="too long", by="tester")
    decided = get(p.id)
    assert (decided.state, decided.reason, decided.decided_by) == ("rejected", "too long", "tester")
    assert decided.report.task_deltas == p.report.task_deltas


def test_reject_leaves_the_live_file_alone(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    reject(p.id)
    assert (repo / SKILL).read_text() == SKILL_TEXT


def test_reject_keeps_a_branch_the_person_committed_on(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    linked = tmp_path / "review"
    git(repo, "worktree", "add", "-q", str(linked), p.branch)
    write(linked / "NOTES.md", "my notes\n")
    git(linked, "add", "NOTES.md")
    git(linked, "commit", "-q", "-m", "notes", person=True)
    d = reject(p.id)
    assert not d.branch_deleted
    assert git(repo, "rev-parse", p.branch) != p.commit
    assert any("git branch -D" in m for m in d.messages)


def test_reject_twice_is_refused(tmp_path: Path) -> None:
    _, p = staged(tmp_path)
    reject(p.id)
    with pytest.raises(ProposalDecided, match="already rejected"):
        reject(p.id)


def test_review_hides_adopted_and_rejected_unless_all(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    a, b, c = (stage(repo / SKILL, CANDIDATE + f"- v{i}\n", report(), night=NIGHT) for i in range(3))
    adopt(a.id)
    reject(b.id)
    assert [p.id for p in list_proposals()] == [c.id]
    assert {p.id: p.state for p in list_proposals(include_decided=True)} == {
        a.id: "adopted", b.id: "rejected", c.id: "stale"}


def test_pending_proposal_whose_live_file_changed_is_stale_with_the_reason(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    write(repo / SKILL, SKILL_TEXT + "- edited\n")
    [listed] = list_proposals()
    assert listed.state == "stale"
    assert "changed since the night" in (listed.stale_reason or "")


def test_pending_proposal_whose_branch_was_deleted_is_stale(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    git(repo, "branch", "-D", p.branch)
    [listed] = list_proposals()
    assert (listed.state, listed.stale_reason) == ("stale", f"the branch {p.branch} was deleted")


def test_a_file_edited_and_restored_is_pending_again(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    write(repo / SKILL, SKILL_TEXT + "- tmp\n")
    write(repo / SKILL, SKILL_TEXT)
    assert list_proposals()[0].state == "pending"


def test_review_line_shows_id_project_skill_branch_night_scores_edits_state(tmp_path: Path) -> None:
    _, p = staged(tmp_path)
    header, line = review_lines(list_proposals())
    assert header.split() == ["ID", "PROJECT", "SKILL", "BRANCH", "NIGHT", "VAL", "EDITS", "STATE"]
    assert line.split() == [p.id, "app", "tests", "skillopt/tests/2026-12-01", "2026-12-01", "0.50", "→", "0.75",
                            "1", "pending"]


def test_review_shows_the_stale_reason_under_the_line(tmp_path: Path) -> None:
    repo, _ = staged(tmp_path)
    write(repo / SKILL, "rewritten\n")
    lines = review_lines(list_proposals())
    assert lines[1].endswith("stale") and lines[2].strip().startswith("stale: the live file")


def test_review_filters_by_project(tmp_path: Path) -> None:
    one, two = make_repo(tmp_path / "one"), make_repo(tmp_path / "two")
    stage(one / SKILL, CANDIDATE, report(), night=NIGHT)
    p2 = stage(two / SKILL, CANDIDATE, report(), night=NIGHT)
    assert [p.id for p in list_proposals(project=two)] == [p2.id]


def test_a_proposal_is_found_by_id_prefix_or_branch(tmp_path: Path) -> None:
    _, p = staged(tmp_path)
    assert get(p.id[:5]).id == p.id
    assert get(p.branch).id == p.id
