"""``show`` diffs against the text the night trained from and shows the person's pending
edits apart; ``undo`` restores the text a skill had before an adoption (issue 23 §3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from proposal_testutil import CANDIDATE, NIGHT, SKILL, SKILL_TEXT, git, make_repo, report, staged

from sleep.cli import main
from sleep.proposals import LiveFileChanged, ProposalDecided, adopt, get, show, stage
from sleep.proposals.undo import undo

MINE = "- My own uncommitted note.\n"


def staged_on_top_of_uncommitted_edits(tmp_path: Path):
    """The person edited the skill without committing; the night trained from that text."""
    repo = make_repo(tmp_path / "app")
    (repo / SKILL).write_text(SKILL_TEXT + MINE)
    return repo, stage(repo / SKILL, SKILL_TEXT + MINE + "- Run the linter.\n", report(), night=NIGHT)


def test_show_diffs_against_the_trained_from_text_not_head(tmp_path: Path) -> None:
    _, p = staged_on_top_of_uncommitted_edits(tmp_path)
    view = show(p.id)
    assert "+- Run the linter." in view.diff
    assert not any(line.startswith("+- My own") for line in view.diff.splitlines())
    assert "+- My own uncommitted note." in view.pending and "Run the linter" not in view.pending


def test_show_has_no_pending_section_when_the_skill_was_committed(tmp_path: Path, capsys) -> None:
    _, p = staged(tmp_path)
    assert main(["show", p.id, "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert "Your own edits" not in out and "+- Run `ruff check .` before the tests." in out


def test_show_prints_the_pending_edits_apart(tmp_path: Path, capsys) -> None:
    _, p = staged_on_top_of_uncommitted_edits(tmp_path)
    assert main(["show", p.id, "--color", "never"]) == 0
    out = capsys.readouterr().out
    proposal, pending = out.split("Your own edits", 1)
    assert "+- Run the linter." in proposal and "+- My own uncommitted note." not in proposal
    assert "+- My own uncommitted note." in pending
    assert main(["show", p.id, "--json"]) == 0
    assert "+- My own uncommitted note." in json.loads(capsys.readouterr().out)["pending_diff"]


def test_undo_restores_the_text_from_before_the_adoption(tmp_path: Path, capsys) -> None:
    repo, p = staged(tmp_path)
    adopt(p.id)
    assert (repo / SKILL).read_text() == CANDIDATE
    assert main(["undo", p.id]) == 0
    assert (repo / SKILL).read_text() == SKILL_TEXT and get(p.id).state == "undone"
    assert "text from before the adoption" in capsys.readouterr().out


def test_undo_keeps_the_persons_uncommitted_edits_from_before(tmp_path: Path) -> None:
    repo, p = staged_on_top_of_uncommitted_edits(tmp_path)
    adopt(p.id)
    undo(p.id)
    assert (repo / SKILL).read_text() == SKILL_TEXT + MINE


def test_undo_refuses_when_the_file_changed_since_the_adoption(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    adopt(p.id)
    (repo / SKILL).write_text(CANDIDATE + "- edited after adopting\n")
    with pytest.raises(LiveFileChanged, match="changed since proposal"):
        undo(p.id)
    assert (repo / SKILL).read_text().endswith("- edited after adopting\n") and get(p.id).state == "adopted"


def test_undo_of_a_pending_proposal_is_refused(tmp_path: Path, capsys) -> None:
    _, p = staged(tmp_path)
    with pytest.raises(ProposalDecided, match="only an adopted proposal"):
        undo(p.id)
    assert main(["undo", p.id]) == 2


def test_undo_after_a_commit_says_the_commit_stays(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    d = adopt(p.id, commit=True)
    u = undo(p.id)
    assert (repo / SKILL).read_text() == SKILL_TEXT
    assert any(d.commit[:12] in m and "git revert" in m for m in u.messages)
    assert git(repo, "rev-parse", "HEAD") == d.commit


def test_undo_again_after_a_kill_between_write_and_record_records_it(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    adopt(p.id)
    (repo / SKILL).write_text(SKILL_TEXT)  # as a killed undo left it
    u = undo(p.id)
    assert get(p.id).state == "undone" and "already had the text" in u.messages[0]
