"""Package proposals (issue 33 §2): one branch carries SKILL.md and every other changed file of the
skill folder; show diffs each; adopt writes all of them (a script executable) and undo gives every
file back its exact bytes, a file the proposal added removed; the person's checkout is untouched by
staging; a folder file with uncommitted changes is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from proposal_testutil import NIGHT, SKILL, SKILL_TEXT, git, make_repo, report, snapshot, write

from sleep.proposals import adopt, get, show, stage
from sleep.proposals.errors import LiveFileChanged, ProposalError
from sleep.proposals.undo import undo

FOLDER = SKILL.rsplit("/", 1)[0]
REF_OLD = "# API\r\n\r\nOld page, CRLF and no final newline"
SCRIPT = b"#!/bin/sh\nset -e\npnpm install --frozen-lockfile\n"
NEW_SKILL = SKILL_TEXT + "- Run `scripts/install.sh` before the tests.\n"


def repo_with_package(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "app", {SKILL: SKILL_TEXT, f"{FOLDER}/references/api.md": REF_OLD,
                                        "README.md": "# app\n"})


def staged_package(repo: Path):
    return stage(repo / SKILL, NEW_SKILL, report(edits=[]), night=NIGHT,
                 files={"scripts/install.sh": SCRIPT, "references/api.md": b"# API\n\nNew page.\n"},
                 modes={"scripts/install.sh": "100755"})


def test_the_branch_carries_every_file_and_show_diffs_each(tmp_path: Path) -> None:
    repo = repo_with_package(tmp_path)
    before = snapshot(repo)
    p = staged_package(repo)
    assert snapshot(repo) == before
    assert sorted(git(repo, "diff", "--name-only", "HEAD", p.branch).split()) == sorted(
        [SKILL, f"{FOLDER}/references/api.md", f"{FOLDER}/scripts/install.sh"])
    assert git(repo, "ls-tree", p.branch, f"{FOLDER}/scripts/install.sh").startswith("100755 blob")
    r = get(p.id).report
    assert r.kind == "package" and r.package["scripts/install.sh"]["before_sha256"] is None
    diff = show(p.id).diff
    assert "+pnpm install --frozen-lockfile" in diff and "+New page." in diff and "+- Run `scripts/install.sh`" in diff


def test_adopt_and_undo_treat_the_package_as_one_unit(tmp_path: Path) -> None:
    repo = repo_with_package(tmp_path)
    files_before = snapshot(repo).files
    p = staged_package(repo)
    adopt(p.id)
    script = repo / FOLDER / "scripts/install.sh"
    assert script.read_bytes() == SCRIPT and os.access(script, os.X_OK)
    assert (repo / FOLDER / "references/api.md").read_bytes() == b"# API\n\nNew page.\n"
    assert (repo / SKILL).read_text() == NEW_SKILL
    undo(p.id)
    assert snapshot(repo).files == files_before and not script.exists()
    assert not (repo / FOLDER / "scripts").exists() or not any((repo / FOLDER / "scripts").iterdir())


def test_adopt_writes_nothing_when_a_folder_file_changed_since_staging(tmp_path: Path) -> None:
    repo = repo_with_package(tmp_path)
    p = staged_package(repo)
    write(repo / FOLDER / "references/api.md", "mine now\n")
    with pytest.raises(LiveFileChanged):
        adopt(p.id)
    assert (repo / SKILL).read_text() == SKILL_TEXT and not (repo / FOLDER / "scripts/install.sh").exists()


def test_uncommitted_folder_files_are_refused_at_staging(tmp_path: Path) -> None:
    repo = repo_with_package(tmp_path)
    write(repo / FOLDER / "references/api.md", "the person's unsaved work\n")
    with pytest.raises(ProposalError, match="uncommitted"):
        staged_package(repo)
    with pytest.raises(ProposalError, match="inside the skill folder"):
        stage(repo / SKILL, NEW_SKILL, report(), night=NIGHT, files={"../../evil.sh": b"x"})
