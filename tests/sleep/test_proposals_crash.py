"""kill -9 at each step of staging, adoption and rejection, then the next command of any kind:
the person sees either nothing of the operation or all of it.

Every operation runs as a real `skillopt-sleep` process that SIGKILLs itself right after the
named git command returns (or after a named non-git step); the next command is another real
process. Compared before and after: HEAD, the index file's bytes, `git status`, the stash,
every file of the work tree, every ref (branches, notes), and the index's records.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from proposal_testutil import (CANDIDATE, NIGHT, SKILL, SKILL_TEXT, cli, git, make_repo, refs, report, snapshot,
                               write)

from sleep.index import Index
from sleep.proposals import get, stage
from sleep.proposals.gitobjects import NOTES_REF

KILLED = -signal.SIGKILL


def _person_repo(tmp_path: Path) -> Path:
    """A repository with the person's own state around: a stash, an untracked file, an edit."""
    repo = make_repo(tmp_path / "app")
    write(repo / "README.md", "# app, stashed work\n")
    git(repo, "stash", "push", "-q", "-m", "wip", person=True)
    write(repo / "README.md", "# app, edited and not staged\n")
    write(repo / "scratch.txt", "untracked\n")
    return repo


def _records() -> tuple[list, list]:
    with Index.open() as index:
        proposals = index.conn.execute("SELECT id, state FROM proposals ORDER BY id").fetchall()
        operations = index.conn.execute("SELECT kind, proposal_id FROM operations").fetchall()
    return proposals, operations


def _next(command: list[str], repo: Path) -> str:
    rules = repo.parent / "rules.yaml"  # a scripted night needs a rules file (else it exits 2)
    rules.write_text("rules: []\n")
    args = [a.replace("{repo}", str(repo)).replace("{rules}", str(rules)) for a in command]
    out = cli(*args)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    return out.stderr


NEXT_COMMANDS = {
    "review": ["review"],
    "status": ["status"],
    "history": ["history"],
    "run": ["run", "--project", "{repo}", "--backend", "scripted", "--set", "model.scripted={rules}"],
}


@pytest.mark.parametrize("next_command", sorted(NEXT_COMMANDS))
@pytest.mark.parametrize("step", ["update-ref", "notes add"])
def test_a_staging_killed_after_a_git_step_is_undone_by_the_next_command(tmp_path: Path, step: str,
                                                                        next_command: str) -> None:
    repo = _person_repo(tmp_path)
    before, before_refs = snapshot(repo), refs(repo)
    candidate = write(tmp_path / "candidate.md", CANDIDATE)
    out = cli("propose", "--skill", str(repo / SKILL), "--candidate", str(candidate), kill_after_git=step)
    assert out.returncode == KILLED, out.stderr
    assert refs(repo) != before_refs  # the kill left something behind ...
    said = _next(NEXT_COMMANDS[next_command], repo)
    assert refs(repo) == before_refs and snapshot(repo) == before  # ... and the next command took it back
    assert _records() == ([], []) and "undid the interrupted staging" in said


def test_a_staging_killed_after_its_index_row_is_complete(tmp_path: Path) -> None:
    repo = _person_repo(tmp_path)
    before = snapshot(repo)
    candidate = write(tmp_path / "candidate.md", CANDIDATE)
    out = cli("propose", "--skill", str(repo / SKILL), "--candidate", str(candidate), kill_at="index row")
    assert out.returncode == KILLED, out.stderr
    said = _next(["review"], repo)
    (pid, state), = _records()[0]
    p = get(pid)
    assert state == "pending" and p.state == "pending" and "undid" not in said
    assert git(repo, "rev-parse", p.branch) == p.commit
    assert pid in git(repo, "notes", f"--ref={NOTES_REF}", "show", p.commit)
    assert snapshot(repo) == before and _records()[1] == []


@pytest.mark.parametrize("how", [("git add", None, ["--commit"]), (None, "write file", ["--commit"]),
                                 (None, "write file", [])], ids=["after git add", "after the write (--commit)",
                                                                 "after the write"])
def test_an_adoption_killed_before_its_commit_is_undone_by_the_next_command(tmp_path: Path, how) -> None:
    git_step, other_step, flags = how
    repo = _person_repo(tmp_path)
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    before, before_refs = snapshot(repo), refs(repo)
    out = cli("adopt", p.id, *flags, kill_after_git=git_step, kill_at=other_step)
    assert out.returncode == KILLED, out.stderr
    assert (repo / SKILL).read_text() == CANDIDATE  # the kill came after the write ...
    said = _next(["history"], repo)
    assert snapshot(repo) == before and refs(repo) == before_refs  # ... and it was undone, index bytes too
    assert get(p.id).state == "pending" and _records()[1] == [] and "undid the interrupted adoption" in said


def test_an_adoption_killed_after_its_commit_is_finished_by_the_next_command(tmp_path: Path) -> None:
    repo = _person_repo(tmp_path)
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    head = git(repo, "rev-parse", "HEAD")
    out = cli("adopt", p.id, "--commit", kill_after_git="git commit")
    assert out.returncode == KILLED, out.stderr
    said = _next(["review"], repo)
    done = get(p.id)
    assert done.state == "adopted" and done.adopted_commit == git(repo, "rev-parse", "HEAD")
    assert git(repo, "rev-parse", "HEAD~1") == head and (repo / SKILL).read_text() == CANDIDATE
    assert git(repo, "diff", "--cached", "--name-only") == "" and git(repo, "stash", "list")
    assert _records()[1] == [] and "finished the interrupted adoption" in said


def test_an_adoption_killed_while_deleting_its_branch_is_finished_by_the_next_command(tmp_path: Path) -> None:
    repo = _person_repo(tmp_path)
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    out = cli("adopt", p.id, "--delete-branch", kill_after_git="delete branch")
    assert out.returncode == KILLED, out.stderr
    _next(["status"], repo)
    done = get(p.id)
    assert done.state == "adopted" and done.branch_deleted and (repo / SKILL).read_text() == CANDIDATE
    assert git(repo, "branch", "--list", p.branch) == "" and git(repo, "notes", f"--ref={NOTES_REF}", "list") == ""
    assert _records()[1] == []


@pytest.mark.parametrize("step", ["delete branch", "notes remove"])
def test_a_rejection_killed_mid_way_is_finished_by_the_next_command(tmp_path: Path, step: str) -> None:
    repo = _person_repo(tmp_path)
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    before = snapshot(repo)
    out = cli("reject", p.id, "--reason", "too long", kill_after_git=step)
    assert out.returncode == KILLED, out.stderr
    said = _next(["review", "--all"], repo)
    done = get(p.id)
    assert done.state == "rejected" and done.reason == "too long" and done.branch_deleted
    assert git(repo, "branch", "--list", p.branch) == "" and git(repo, "notes", f"--ref={NOTES_REF}", "list") == ""
    assert snapshot(repo) == before and (repo / SKILL).read_text() == SKILL_TEXT and _records()[1] == []
    assert "finished the interrupted rejection" in said


def test_a_skills_repository_adoption_killed_after_its_record_is_finished(tmp_path: Path, homes) -> None:
    live = write(homes.home / ".claude" / "skills" / "tests" / "SKILL.md", SKILL_TEXT)
    p = stage(live, CANDIDATE, report(), night=NIGHT)
    out = cli("adopt", p.id, kill_after_git="skills main")
    assert out.returncode == KILLED, out.stderr
    said = _next(["review"], tmp_path)
    assert get(p.id).state == "adopted" and live.read_text() == CANDIDATE
    assert git(homes.skillopt / "skills.git", "show", f"main:{p.tree_path}") + "\n" == CANDIDATE
    assert "finished the interrupted adoption" in said


def test_a_skills_repository_staging_killed_after_its_branch_is_undone(tmp_path: Path, homes) -> None:
    live = write(homes.home / ".claude" / "skills" / "tests" / "SKILL.md", SKILL_TEXT)
    candidate = write(tmp_path / "candidate.md", CANDIDATE)
    out = cli("propose", "--skill", str(live), "--candidate", str(candidate), kill_after_git="update-ref")
    assert out.returncode == KILLED, out.stderr
    said = _next(["status"], tmp_path)
    skills = homes.skillopt / "skills.git"
    assert git(skills, "for-each-ref", "refs/heads/skillopt/") == "" and _records() == ([], [])
    assert "undid the interrupted staging" in said
