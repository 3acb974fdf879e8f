"""A retire proposal (issue 33 §4): its branch deletes the skill file; nothing is deleted before the
person adopts it; adopting deletes the live file; undo gives it back byte for byte (CRLF, no final
newline and all); the paired evidence travels in the report."""

from __future__ import annotations

from pathlib import Path

from proposal_testutil import NIGHT, SKILL, git, make_repo, report, snapshot

from sleep.cli import main
from sleep.proposals import adopt, get, show, stage
from sleep.proposals.undo import undo

ODD = "---\r\nname: tests\r\ndescription: How to run tests.\r\n---\r\n\r\n# Tests\r\n- Run `pytest -q`.\t "
PAIRED = {"n_items": 10, "diff": 0.0, "ci_low": 0.0, "ci_high": 0.0, "wins": 0, "losses": 0, "ties": 10,
          "summary": "without it - with the skill: +0.000 (95% CI +0.000 .. +0.000) over 10 items"}


def retire(repo: Path):
    return stage(repo / SKILL, None, report(kind="retire", paired=PAIRED, edits=[]), night=NIGHT)


def test_the_branch_deletes_the_skill_and_the_checkout_is_untouched(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app", {SKILL: ODD, "README.md": "# app\n"})
    before = snapshot(repo)
    p = retire(repo)
    assert snapshot(repo) == before  # nothing deleted without review
    assert git(repo, "diff", "--name-status", "HEAD", p.branch) == f"D\t{SKILL}"
    assert get(p.id).report.kind == "retire" and get(p.id).report.paired["ties"] == 10
    assert "-# Tests" in show(p.id).diff


def test_adopt_deletes_and_undo_restores_the_exact_bytes(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app", {SKILL: ODD, "README.md": "# app\n"})
    raw = (repo / SKILL).read_bytes()
    p = retire(repo)
    assert main(["show", p.id, "--color", "never"]) == 0
    decision = adopt(p.id)
    assert decision.wrote_file and not (repo / SKILL).exists()
    undo(p.id)
    assert (repo / SKILL).read_bytes() == raw
    assert get(p.id).state == "undone"


def test_adopt_with_commit_records_the_deletion(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app", {SKILL: ODD, "README.md": "# app\n"})
    p = retire(repo)
    adopt(p.id, commit=True)
    assert not (repo / SKILL).exists()
    assert SKILL not in git(repo, "ls-files")
    assert git(repo, "status", "--porcelain") == ""


def test_retiring_a_file_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    import pytest
    from sleep.proposals.errors import NothingToPropose

    repo = make_repo(tmp_path / "app", {"README.md": "# app\n"})
    with pytest.raises(NothingToPropose, match="no file"):
        stage(repo / SKILL, None, report(kind="retire"), night=NIGHT)
