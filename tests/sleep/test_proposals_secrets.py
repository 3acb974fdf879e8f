"""No planted secret reaches any git object or the index; no task intent reaches a commit message."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from proposal_testutil import (CANDIDATE, INTENT, RATIONALE, SECRET, SKILL, SKILL_TEXT, all_objects,
                               commit_messages, git, make_repo, report, write)
from sleep_testutil import Homes

from sleep.proposals import EditRecord, adopt, reject, stage
from sleep.proposals.locate import skills_repo_dir

NIGHT = date(2026, 12, 1)


def _leaky_report():
    return report(
        task_intents={"task-ws-reconnect": f"{INTENT} (my token is {SECRET})"},
        edits=[EditRecord("add", content=f"- Use {SECRET} for the API.", rationale=f"{RATIONALE}; key {SECRET}")],
        gate_reason=f"accepted; saw {SECRET}", notes=[f"note with {SECRET}"],
        models={"target": f"model-{SECRET}"}, cycle_id=f"c-{SECRET}")


def test_no_object_of_the_repository_holds_a_planted_secret(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    stage(repo / SKILL, CANDIDATE, _leaky_report(), night=NIGHT)
    objects = all_objects(repo)
    assert SECRET.encode() not in objects
    assert b"[REDACTED:github-token]" in objects  # the note kept the redacted report


def test_no_commit_message_holds_intent_or_rationale_text(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, _leaky_report(), night=NIGHT)
    messages = commit_messages(repo)
    for text in (INTENT, RATIONALE, "flaky websocket", "Use "):
        assert text not in messages
    assert INTENT in git(repo, "notes", "--ref=refs/notes/skillopt", "show", p.commit)


def test_after_adopt_and_reject_no_object_holds_the_secret(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    a = stage(repo / SKILL, CANDIDATE, _leaky_report(), night=NIGHT)
    b = stage(repo / SKILL, CANDIDATE + "- b\n", _leaky_report(), night=NIGHT)
    reject(b.id)
    adopt(a.id, commit=True)
    assert SECRET.encode() not in all_objects(repo)
    assert INTENT not in commit_messages(repo)


def test_the_index_stores_the_report_redacted(tmp_path: Path, homes: Homes) -> None:
    repo = make_repo(tmp_path / "app")
    stage(repo / SKILL, CANDIDATE, _leaky_report(), night=NIGHT)
    stored = b"".join(f.read_bytes() for f in homes.skillopt.glob("sleep.sqlite3*"))
    assert SECRET.encode() not in stored


def test_the_skills_repository_holds_no_planted_secret(homes: Homes) -> None:
    skill = write(homes.claude / "skills" / "tests" / "SKILL.md", SKILL_TEXT)
    stage(skill, CANDIDATE, _leaky_report(), night=NIGHT)
    assert SECRET.encode() not in all_objects(skills_repo_dir())
    assert INTENT not in commit_messages(skills_repo_dir())
