"""Two indexes (two SKILLOPT_HOMEs, or an index moved aside) staging in one repository:
neither deletes the other's branches, and no branch name ever comes to mean another proposal.

Real git repositories; the CLI runs as real processes with their own SKILLOPT_HOME.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from proposal_testutil import CANDIDATE, NIGHT, SKILL, SKILL_TEXT, cli, git, make_repo, report, write

from sleep.index import Index
from sleep.proposals import BranchMissing, adopt, get, reject, stage

ONE = SKILL_TEXT + "- one: from the first index\n"
TWO = SKILL_TEXT + "- two: from the second index\n"


def _propose(repo: Path, home: Path, candidate: Path) -> dict:
    out = cli("propose", "--skill", str(repo / SKILL), "--candidate", str(candidate), "--night", NIGHT.isoformat(),
              "--json", home=home)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_second_index_keeps_the_first_index_branch_and_takes_another_name(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    first = _propose(repo, tmp_path / "A", write(tmp_path / "c1.md", ONE))
    second = _propose(repo, tmp_path / "B", write(tmp_path / "c2.md", TWO))
    assert second["branch"] != first["branch"]
    assert git(repo, "rev-parse", first["branch"]) == first["commit"]
    assert git(repo, "rev-parse", second["branch"]) == second["commit"]
    shown = cli("show", first["id"], "--json", home=tmp_path / "A")
    assert shown.returncode == 0 and "+- one: from the first index" in json.loads(shown.stdout)["diff"]
    listed = cli("review", "--json", "--project", str(repo), home=tmp_path / "A")
    assert json.loads(listed.stdout)[0]["state"] == "pending"
    assert cli("adopt", first["id"], home=tmp_path / "A").returncode == 0
    assert (repo / SKILL).read_text() == ONE


def test_the_commit_names_the_index_that_staged_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    with Index.open() as index:
        identity = index.identity
    assert len(identity) == 16
    trailers = git(repo, "log", "-1", "--format=%(trailers:only,unfold)", p.commit).splitlines()
    assert trailers == [f"SkillOpt-Proposal: {p.id}", f"SkillOpt-Index: {identity}"]


def test_every_command_of_another_index_leaves_a_foreign_branch_alone(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    foreign = _propose(repo, tmp_path / "A", write(tmp_path / "c1.md", ONE))
    b = tmp_path / "B"
    for args in (["review"], ["review", "--all"], ["status"], ["history"]):
        assert cli(*args, home=b).returncode == 0
    _propose(repo, b, write(tmp_path / "c2.md", TWO))
    assert git(repo, "rev-parse", foreign["branch"]) == foreign["commit"]


def test_a_rejected_proposal_name_is_not_given_to_the_next_proposal(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    first = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    reject(first.id)
    second = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    assert second.branch != first.branch


def test_a_branch_named_in_another_index_note_is_not_reused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    first = _propose(repo, tmp_path / "A", write(tmp_path / "c1.md", ONE))
    git(repo, "branch", "-D", first["branch"])  # the person deleted it; A's record and note remain
    second = _propose(repo, tmp_path / "B", write(tmp_path / "c2.md", TWO))
    assert second["branch"] != first["branch"]


def test_a_branch_deleted_and_made_again_elsewhere_is_not_adopted(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    git(repo, "branch", "-D", p.branch)
    write(repo / SKILL, TWO)
    git(repo, "commit", "-qam", "someone else's skill", person=True)
    git(repo, "branch", p.branch)  # the same name, now at an unrelated commit
    git(repo, "checkout", "-q", "HEAD~1", "--", SKILL)
    git(repo, "reset", "-q")
    assert get(p.id).state == "stale" and "made again" in (get(p.id).stale_reason or "")
    with pytest.raises(BranchMissing):
        adopt(p.id)
    assert (repo / SKILL).read_text() == SKILL_TEXT
