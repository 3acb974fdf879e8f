"""Staging builds a branch from git objects and leaves the person's checkout byte-identical."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from proposal_testutil import (CANDIDATE, SKILL, SKILL_TEXT, git, make_repo, report, sha256, snapshot,
                               write)

from sleep.index import Index
from sleep.proposals import stage
from sleep.proposals.gitobjects import AUTHOR_EMAIL, AUTHOR_NAME, NOTES_REF

NIGHT = date(2026, 12, 1)


def _clean(repo: Path) -> Path:
    return repo


def _dirty(repo: Path) -> Path:
    write(repo / SKILL, SKILL_TEXT + "- (local note, not committed)\n")
    write(repo / "README.md", "# app, edited\n")
    write(repo / "scratch.txt", "untracked\n")
    return repo


def _staged(repo: Path) -> Path:
    write(repo / "README.md", "# app, staged\n")
    write(repo / "new.txt", "new and staged\n")
    git(repo, "add", "README.md", "new.txt")
    write(repo / "README.md", "# app, staged then edited\n")
    return repo


def _detached(repo: Path) -> Path:
    write(repo / "more.txt", "more\n")
    git(repo, "add", "more.txt")
    git(repo, "commit", "-q", "-m", "second", person=True)
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    return repo


def _stashed(repo: Path) -> Path:
    write(repo / "README.md", "# app, stashed\n")
    git(repo, "stash", "push", "-q", "-m", "wip", person=True)
    write(repo / "README.md", "# app, dirty again\n")
    return repo


def _linked_worktree(repo: Path) -> Path:
    linked = repo.parent / "linked"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    write(linked / "README.md", "# app, dirty in the linked worktree\n")
    return linked


SCENARIOS = {"clean": _clean, "dirty": _dirty, "staged": _staged, "detached": _detached,
             "stash": _stashed, "linked-worktree": _linked_worktree}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_staging_leaves_head_index_status_stash_files_branch_and_config_identical(tmp_path: Path, scenario: str) -> None:
    work = SCENARIOS[scenario](make_repo(tmp_path / "app"))
    main_before = snapshot(tmp_path / "app")
    before = snapshot(work)
    p = stage(work / SKILL, CANDIDATE, report(), night=NIGHT)
    assert snapshot(work) == before
    assert snapshot(tmp_path / "app") == main_before
    assert git(work, "rev-parse", f"refs/heads/{p.branch}") == p.commit


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_commit_parent_is_head_and_only_the_skill_file_differs(tmp_path: Path, scenario: str) -> None:
    work = SCENARIOS[scenario](make_repo(tmp_path / "app"))
    head = git(work, "rev-parse", "HEAD")
    p = stage(work / SKILL, CANDIDATE, report(), night=NIGHT)
    assert git(work, "rev-parse", f"{p.commit}^@") == head
    assert git(work, "diff", "--name-only", head, p.commit) == SKILL
    assert git(work, "show", f"{p.commit}:{SKILL}") + "\n" == CANDIDATE


def test_branch_is_named_for_the_skill_and_the_night(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    assert p.branch == "skillopt/tests/2026-12-01"
    assert git(repo, "log", "--oneline", p.branch).count("\n") == 1  # the proposal and its parent


def test_commit_is_by_skillopt_sleep_though_no_git_identity_is_configured(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    assert git(repo, "config", "user.email", check=False) == ""
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    who = git(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>", p.commit)
    assert who == f"{AUTHOR_NAME} <{AUTHOR_EMAIL}>|{AUTHOR_NAME} <{AUTHOR_EMAIL}>"


def test_commit_subject_names_skill_scores_and_edit_count(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    assert git(repo, "log", "-1", "--format=%s", p.commit) == "skillopt: tests 0.50 → 0.75 (1 edit)"


def test_commit_body_has_gate_policy_deltas_items_models_and_usage(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    body = git(repo, "log", "-1", "--format=%b", p.commit)
    for expected in ("Gate: accept (policy mean)", "Val items: 4", "task-ws-reconnect  +1.00",
                     "Models: optimizer gpt-test, target gpt-test", "12 calls", f"SkillOpt-Proposal: {p.id}"):
        assert expected in body


def test_dirty_skill_records_the_working_tree_text_and_says_so(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    local = SKILL_TEXT + "- (local note, not committed)\n"
    write(repo / SKILL, local)
    p = stage(repo / SKILL, local + "- Run ruff.\n", report(), night=NIGHT)
    assert p.trained_from_sha256 == sha256(local)
    assert p.report.uncommitted_changes is True
    assert any("uncommitted changes" in n for n in p.report.notes)


def test_trained_from_text_given_by_the_cycle_is_what_is_recorded(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report(), trained_from_text=SKILL_TEXT, night=NIGHT)
    assert p.trained_from_sha256 == sha256(SKILL_TEXT)
    assert p.report.uncommitted_changes is False


def test_a_live_file_changed_during_the_night_is_stale_from_the_start(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    write(repo / SKILL, SKILL_TEXT + "- edited at 3am\n")
    p = stage(repo / SKILL, CANDIDATE, report(), trained_from_text=SKILL_TEXT, night=NIGHT)
    assert any("changed while the night ran" in n for n in p.report.notes)


def test_new_skill_file_is_added_on_the_branch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    new = ".agents/skills/deploy/SKILL.md"
    p = stage(repo / new, "---\nname: deploy\ndescription: d\n---\nDeploy with make.\n", report(), night=NIGHT)
    assert p.trained_from_sha256 is None
    assert git(repo, "diff", "--name-status", "HEAD", p.commit) == f"A\t{new}"
    assert not (repo / new).exists()


def test_report_is_stored_as_a_git_note_and_in_the_index(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    note = git(repo, "notes", f"--ref={NOTES_REF}", "show", p.commit)
    assert f'"proposal_id": "{p.id}"' in note and '"task-ws-reconnect": 1.0' in note
    with Index.open() as idx:
        stored = idx.conn.execute("SELECT branch, commit_sha FROM proposals WHERE id = ?", (p.id,)).fetchone()
    assert stored == (p.branch, p.commit)


def test_staging_works_while_another_git_process_holds_the_index_lock(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    lock = write(repo / ".git" / "index.lock", "held by another git\n")
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    assert lock.read_text() == "held by another git\n"
    assert git(repo, "rev-parse", p.branch) == p.commit


def test_commit_signing_configured_by_the_person_does_not_block_staging(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    git(repo, "config", "commit.gpgSign", "true")
    git(repo, "config", "gpg.program", "false")  # any signing attempt would fail
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    assert git(repo, "cat-file", "-p", p.commit).count("gpgsig") == 0


def test_executable_bit_of_the_skill_file_is_kept_on_the_branch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app", {"bin/skill.md": SKILL_TEXT})
    git(repo, "update-index", "--chmod=+x", "bin/skill.md")
    git(repo, "commit", "-q", "-m", "exec", person=True)
    p = stage(repo / "bin/skill.md", CANDIDATE, report(), night=NIGHT)
    assert git(repo, "ls-tree", p.commit, "bin/skill.md").split()[0] == "100755"


def test_staging_keeps_every_branch_it_did_not_make(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    kept = stage(repo / SKILL, CANDIDATE, report(), night=date(2026, 12, 1))
    git(repo, "branch", "skillopt/mine/by-hand")
    stage(repo / SKILL, CANDIDATE + "- more\n", report(), night=date(2026, 12, 2))
    branches = set(git(repo, "branch", "--list", "skillopt/*").replace("*", "").split())
    assert {kept.branch, "skillopt/mine/by-hand"} <= branches and len(branches) == 3
