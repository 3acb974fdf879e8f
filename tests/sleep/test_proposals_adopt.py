"""Adopt: the candidate becomes the live file only if the live file is what the night trained from."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from proposal_testutil import NIGHT, staged, CANDIDATE, SKILL, SKILL_TEXT, git, make_repo, report, write

from sleep.proposals import (BranchMissing, GitFailed, IndexBusy, LiveFileChanged, ProposalDecided, adopt, get,
                             stage)



def test_adopt_writes_the_candidate_when_the_live_file_matches(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    d = adopt(p.id, by="tester")
    assert (repo / SKILL).read_text() == CANDIDATE
    assert d.wrote_file and d.commit is None


def test_adopt_records_who_and_when_and_keeps_the_branch_when_asked(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    adopt(p.id, by="tester", delete_branch=False)
    decided = get(p.id)
    assert (decided.state, decided.decided_by) == ("adopted", "tester")
    assert decided.decided_at and decided.decided_at.endswith("Z")
    assert git(repo, "rev-parse", p.branch) == p.commit


def test_adopt_deletes_the_branch_and_leaves_nothing_in_git_log_all(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    before = git(repo, "log", "--all", "--format=%s")
    assert "Notes added" in before
    d = adopt(p.id)
    assert d.branch_deleted and git(repo, "branch", "--list", "skillopt/*") == ""
    after = git(repo, "log", "--all", "--format=%s")
    assert "Notes" not in after and p.commit not in git(repo, "log", "--all", "--format=%H")
    assert git(repo, "for-each-ref", "refs/notes") == ""


def test_the_cli_keeps_the_branch_with_keep_branch(tmp_path: Path, capsys) -> None:
    from sleep.cli import main

    repo, p = staged(tmp_path)
    assert main(["adopt", p.id, "--keep-branch"]) == 0
    assert git(repo, "rev-parse", p.branch) == p.commit and "deleted the branch" not in capsys.readouterr().out


def test_adopt_without_commit_leaves_head_and_index_alone(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    head, index = git(repo, "rev-parse", "HEAD"), (repo / ".git" / "index").read_bytes()
    adopt(p.id)
    assert git(repo, "rev-parse", "HEAD") == head
    assert (repo / ".git" / "index").read_bytes() == index


def test_adopt_is_refused_when_the_live_file_changed_and_nothing_is_written(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    edited = SKILL_TEXT + "- my own edit this morning\n"
    write(repo / SKILL, edited)
    with pytest.raises(LiveFileChanged, match=r"changed \(\+1 -0 lines.*skillopt-sleep show"):
        adopt(p.id)
    assert (repo / SKILL).read_text() == edited
    assert get(p.id).state == "stale"


def test_adopt_is_refused_when_the_live_file_was_deleted(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    (repo / SKILL).unlink()
    with pytest.raises(LiveFileChanged, match="was deleted"):
        adopt(p.id)
    assert not (repo / SKILL).exists()


def test_adopt_commit_commits_only_the_skill_file_on_the_current_branch(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    write(repo / "README.md", "# unstaged work stays unstaged\n")
    head = git(repo, "rev-parse", "HEAD")
    d = adopt(p.id, commit=True)
    assert git(repo, "rev-parse", "HEAD") == d.commit
    assert git(repo, "rev-parse", "HEAD~1") == head
    assert git(repo, "diff", "--name-only", head, "HEAD") == SKILL
    assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert git(repo, "status", "--porcelain") == "M README.md"


def test_adopt_commit_is_refused_with_other_staged_changes_and_writes_nothing(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    write(repo / "README.md", "# staged by the person\n")
    git(repo, "add", "README.md")
    index = (repo / ".git" / "index").read_bytes()
    with pytest.raises(IndexBusy, match="README.md"):
        adopt(p.id, commit=True)
    assert (repo / SKILL).read_text() == SKILL_TEXT
    assert (repo / ".git" / "index").read_bytes() == index
    assert get(p.id).state == "pending"


def test_adopt_commit_is_refused_while_the_index_is_locked(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    write(repo / ".git" / "index.lock", "")
    with pytest.raises(IndexBusy, match="index.lock"):
        adopt(p.id, commit=True)
    assert (repo / SKILL).read_text() == SKILL_TEXT


def test_adopt_commit_restores_the_live_file_when_the_commit_fails(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    hook = write(repo / ".git" / "hooks" / "pre-commit", "#!/bin/sh\necho 'hook says no' >&2\nexit 1\n")
    os.chmod(hook, 0o755)
    with pytest.raises(GitFailed, match="hook says no"):
        adopt(p.id, commit=True)
    assert (repo / SKILL).read_text() == SKILL_TEXT
    assert git(repo, "status", "--porcelain") == ""
    assert get(p.id).state == "pending"


def test_adopt_delete_branch_removes_the_branch_and_its_note(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    d = adopt(p.id, delete_branch=True)
    assert d.branch_deleted
    assert git(repo, "branch", "--list", p.branch) == ""
    assert git(repo, "notes", "--ref=refs/notes/skillopt", "list") == ""


def test_adopt_on_a_deleted_branch_is_a_clear_error_and_writes_nothing(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    git(repo, "branch", "-D", p.branch)
    with pytest.raises(BranchMissing, match="no longer exists.*reject"):
        adopt(p.id)
    assert (repo / SKILL).read_text() == SKILL_TEXT


def test_adopt_twice_is_refused(tmp_path: Path) -> None:
    _, p = staged(tmp_path)
    adopt(p.id)
    with pytest.raises(ProposalDecided, match="already adopted"):
        adopt(p.id)


def test_adopt_after_a_hand_merge_records_the_adoption_without_writing(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    write(repo / SKILL, CANDIDATE)
    d = adopt(p.id)
    assert not d.wrote_file
    assert get(p.id).state == "adopted"


def test_adopt_takes_the_file_from_the_branch_tip_when_the_person_amended_the_branch(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    linked = tmp_path / "review"
    git(repo, "worktree", "add", "-q", str(linked), p.branch)
    write(linked / SKILL, CANDIDATE + "- reviewer's addition\n")
    git(linked, "commit", "-q", "-am", "tweak", person=True)
    d = adopt(p.id)
    assert (repo / SKILL).read_text() == CANDIDATE + "- reviewer's addition\n"
    assert any("moved since staging" in m for m in d.messages)


def test_adopt_keeps_the_live_file_permissions(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    os.chmod(repo / SKILL, 0o600)
    adopt(p.id)
    assert (repo / SKILL).stat().st_mode & 0o777 == 0o600


def test_adopt_a_new_skill_creates_the_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    new = repo / ".agents/skills/deploy/SKILL.md"
    p = stage(new, "Deploy with make.\n", report(), night=NIGHT)
    adopt(p.id)
    assert new.read_text() == "Deploy with make.\n"
