"""Skills outside a repository live in SkillOpt's own skills repository; show, adopt, reject work the same."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

from proposal_testutil import CANDIDATE, SKILL, SKILL_TEXT, git, write
from sleep_testutil import Homes

from sleep.proposals import adopt, reject, show, stage
from sleep.proposals.locate import skills_repo_dir

NIGHT = date(2026, 12, 1)


def _user_skill(homes: Homes) -> Path:
    return write(homes.claude / "skills" / "tests" / "SKILL.md", SKILL_TEXT)


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(Path(d, f).relative_to(folder)): Path(d, f).read_bytes()
            for d, _, files in os.walk(folder) for f in files}


def test_user_skill_is_staged_in_the_skills_repository_of_the_data_dir(homes: Homes) -> None:
    p = stage(_user_skill(homes), CANDIDATE, night=NIGHT)
    assert (p.store, p.project, p.repo) == ("skills-repo", None, str(skills_repo_dir()))
    assert skills_repo_dir().parent == homes.skillopt
    assert git(skills_repo_dir(), "rev-parse", p.branch) == p.commit


def test_user_skill_has_one_path_below_home_in_the_skills_repository(homes: Homes) -> None:
    p = stage(_user_skill(homes), CANDIDATE, night=NIGHT)
    assert p.tree_path == "home/.claude/skills/tests/SKILL.md"
    assert git(skills_repo_dir(), "diff", "--name-only", p.parent, p.commit) == p.tree_path


def test_the_live_text_is_recorded_on_main_as_the_proposals_parent(homes: Homes) -> None:
    p = stage(_user_skill(homes), CANDIDATE, night=NIGHT)
    assert git(skills_repo_dir(), "rev-parse", "main") == p.parent
    assert git(skills_repo_dir(), "show", f"main:{p.tree_path}") + "\n" == SKILL_TEXT


def test_an_unchanged_live_file_is_not_recorded_twice(homes: Homes) -> None:
    skill = _user_skill(homes)
    first = stage(skill, CANDIDATE, night=NIGHT)
    second = stage(skill, CANDIDATE + "- more\n", night=NIGHT)
    assert second.parent == first.parent


def test_show_gives_the_diff_of_a_user_skill(homes: Homes) -> None:
    p = stage(_user_skill(homes), CANDIDATE, night=NIGHT)
    assert "+- Run `ruff check .` before the tests." in show(p.id).diff


def test_adopt_writes_the_user_skill_and_records_it_on_main(homes: Homes) -> None:
    skill = _user_skill(homes)
    p = stage(skill, CANDIDATE, night=NIGHT)
    d = adopt(p.id)
    assert skill.read_text() == CANDIDATE
    assert git(skills_repo_dir(), "rev-parse", "main") == d.commit
    assert git(skills_repo_dir(), "show", f"main:{p.tree_path}") + "\n" == CANDIDATE


def test_reject_deletes_the_branch_in_the_skills_repository(homes: Homes) -> None:
    p = stage(_user_skill(homes), CANDIDATE, night=NIGHT)
    reject(p.id)
    assert git(skills_repo_dir(), "branch", "--list", "skillopt/*") == ""


def test_skill_in_a_repository_without_commits_goes_to_the_skills_repository_and_says_so(tmp_path: Path) -> None:
    repo = tmp_path / "fresh"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    write(repo / SKILL, SKILL_TEXT)
    before = _tree(repo / ".git")
    p = stage(repo / SKILL, CANDIDATE, night=NIGHT)
    assert (p.store, p.project) == ("skills-repo", str(repo.resolve()))
    assert any("no commits yet" in n for n in p.report.notes)
    assert _tree(repo / ".git") == before


def test_skill_outside_home_gets_a_root_path(tmp_path: Path) -> None:
    loose = write(tmp_path / "loose" / "guide.md", SKILL_TEXT)
    p = stage(loose, CANDIDATE, night=NIGHT)
    assert p.tree_path == "root/" + str(loose.resolve()).lstrip("/")
