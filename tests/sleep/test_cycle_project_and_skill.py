"""The night finds the right project and skill (issue 23 §1): the repository root of
a subfolder, a refusal for a folder holding several projects, a project skill chosen
by its description, and ``--skill`` limited to skill files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from cycle_testutil import rules
from sleep_testutil import Homes

from sleep.cli import main
from sleep.cycle.demo import install_transcripts, make_project
from sleep.cycle.night import NightError, NightOptions, run_night
from sleep.project import SeveralProjects, resolve_project
from sleep.cycle.skills import MANAGED_NAME, SkillPathError, check_skill_path, choose_skill
from sleep.index import Index
from sleep.sessions import Session


def git_init(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def write_skill(path: Path, name: str, description: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n\nbody\n", encoding="utf-8")
    return path


# ----- the project ----------------------------------------------------------------------

def test_a_subfolder_of_a_repository_is_the_repository(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "ledgerline-api")
    (repo / "app").mkdir()
    choice = resolve_project(repo / "app", [])
    assert choice.path == repo.resolve() and "git repository" in choice.why


def test_outside_a_repository_the_folder_the_sessions_ran_in_is_the_project(tmp_path: Path) -> None:
    (tmp_path / "notes" / "drafts").mkdir(parents=True)
    choice = resolve_project(tmp_path / "notes" / "drafts", [str(tmp_path / "notes"), str(tmp_path / "notes")])
    assert choice.path == tmp_path / "notes" and "2 sessions" in choice.why


def test_a_folder_holding_several_projects_is_refused_with_their_names(tmp_path: Path) -> None:
    code = tmp_path / "code"
    for name in ("ledgerline-api", "webshop"):
        git_init(code / name)
    (code / "scratch").mkdir()
    dirs = [str(code / "ledgerline-api"), str(code / "ledgerline-api" / "app"), str(code / "webshop"),
            str(code / "scratch")]
    with pytest.raises(SeveralProjects) as err:
        resolve_project(code, dirs)
    text = str(err.value)
    assert "3 projects" in text and "ledgerline-api (2 sessions)" in text
    assert "webshop (1 session)" in text and "scratch (1 session)" in text and "--project" in text


def test_a_folder_with_one_project_below_it_is_that_project(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "code" / "webshop")
    assert resolve_project(tmp_path / "code", [str(repo / "src")]).path == repo.resolve()


@pytest.fixture
def project(homes: Homes, tmp_path: Path) -> Path:
    folder = make_project(tmp_path / "code" / "tiny-ledger")
    install_transcripts(homes.home, folder)
    return folder


def options(project: Path, tmp_path: Path, *extra: str, **kw) -> NightOptions:
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(rules()))
    return NightOptions(project=project, backend="scripted", overrides=[f"model.scripted={path}", *extra], **kw)


def test_a_night_run_in_a_subfolder_is_the_night_of_its_repository(project: Path, tmp_path: Path) -> None:
    said: list[str] = []
    night = run_night(options(project / "src", tmp_path, "sleep.min_tasks=50"), say=said.append)
    assert night.project == str(project.resolve())
    assert night.outcome == "too_few_tasks", night.reason
    assert not night.reason.startswith("0 ")
    assert any("the root of the git repository" in line for line in said)


def test_a_night_in_a_folder_of_several_projects_is_refused_before_anything_is_recorded(
        project: Path, tmp_path: Path, capsys) -> None:
    with Index.open() as index:
        index.put_session(Session("claude-code", "other-1", project_dir=str(tmp_path / "code" / "webshop")))
    with pytest.raises(NightError, match=r"2 projects with sessions: tiny-ledger \(\d+ sessions\), webshop"):
        run_night(options(tmp_path / "code", tmp_path), say=lambda _: None)
    assert main(["run", "--project", str(tmp_path / "code"), "--backend", "scripted",
                 "--set", f"model.scripted={tmp_path / 'rules.yaml'}"]) == 2
    assert "tiny-ledger" in capsys.readouterr().err
    assert main(["history", "--json"]) == 0 and capsys.readouterr().out.strip() == "[]"


# ----- the skill ------------------------------------------------------------------------

TASKS = ["run the tests and tell me what fails", "add a changelog entry for the fix",
         "write the commit message for these changes", "run the tests again after the fix"]


def test_an_uninvoked_project_skill_whose_description_fits_is_chosen_and_says_why(tmp_path: Path) -> None:
    dev = write_skill(tmp_path / ".claude/skills/ledger-dev/SKILL.md", "ledger-dev",
                      "How to work on tiny-ledger. Use it for tests, commits and changelog entries.")
    write_skill(tmp_path / ".claude/skills/brand/SKILL.md", "brand", "Colours and logo usage for slides.")
    choice = choose_skill(tmp_path, [Session("claude-code", "a", project_dir=str(tmp_path))], tasks=TASKS)
    assert choice.path == dev and not choice.managed
    assert "4 of 4 recurring tasks" in choice.why and "changelog" in choice.why and "test" in choice.why
    assert "brand fits 0" in choice.why and "--skill" in choice.why
    assert choice.why.startswith("no session invoked it, but its description fits"), choice.why  # said once


def test_when_no_project_skill_fits_the_managed_skill_names_them(tmp_path: Path) -> None:
    write_skill(tmp_path / ".claude/skills/brand/SKILL.md", "brand", "Colours and logo usage for slides.")
    choice = choose_skill(tmp_path, [Session("claude-code", "a", project_dir=str(tmp_path))], tasks=TASKS)
    assert choice.managed and choice.name == MANAGED_NAME
    assert "brand fits 0" in choice.why and "--skill PATH" in choice.why


def test_a_skill_in_a_project_skill_folder_is_accepted(tmp_path: Path) -> None:
    path = write_skill(tmp_path / ".claude/skills/dev/SKILL.md", "dev", "d")
    assert check_skill_path(path, tmp_path) == path


def test_a_user_skill_is_accepted(tmp_path: Path, homes: Homes) -> None:
    path = write_skill(homes.claude / "skills" / "review" / "SKILL.md", "review", "d")
    assert check_skill_path(path, tmp_path / "project") == path


@pytest.mark.parametrize("flag", [False, True])
def test_a_file_that_is_no_markdown_is_refused_even_when_confirmed(tmp_path: Path, flag: bool) -> None:
    with pytest.raises(SkillPathError, match="not a skill file"):
        check_skill_path(Path("/etc/passwd"), tmp_path, new_skill=flag)


def test_a_link_in_a_skill_folder_to_a_file_elsewhere_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "notes.md"
    outside.parent.mkdir()
    outside.write_text("# private notes\n")
    link = tmp_path / ".claude/skills/dev/SKILL.md"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    with pytest.raises(SkillPathError, match="not in a skill folder"):
        check_skill_path(link, tmp_path)


def test_a_mistyped_path_is_refused_naming_the_project_skills(tmp_path: Path) -> None:
    write_skill(tmp_path / ".claude/skills/ledger-dev/SKILL.md", "ledger-dev", "d")
    with pytest.raises(SkillPathError) as err:
        check_skill_path(tmp_path / ".claude/skills/ledgr-dev/SKILL.md", tmp_path)
    assert "no such file" in str(err.value) and ".claude/skills/ledger-dev/SKILL.md" in str(err.value)
    assert "--new-skill" in str(err.value)
    new = tmp_path / ".claude/skills/release/SKILL.md"
    assert check_skill_path(new, tmp_path, new_skill=True) == new


def test_a_markdown_file_outside_skill_folders_needs_confirmation(tmp_path: Path) -> None:
    notes = tmp_path / "README.md"
    notes.write_text("# readme\n")
    with pytest.raises(SkillPathError, match="--new-skill"):
        check_skill_path(notes, tmp_path)
    assert check_skill_path(notes, tmp_path, new_skill=True) == notes


def test_a_skill_that_is_not_utf8_is_refused_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / ".claude/skills/dev/SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"---\nname: dev\n---\ncaf\xe9\n")
    with pytest.raises(SkillPathError, match=r"SKILL\.md: not UTF-8"):
        check_skill_path(path, tmp_path)


def test_the_night_refuses_etc_passwd_as_a_skill(project: Path, tmp_path: Path, capsys) -> None:
    options(project, tmp_path)  # writes the rules file
    assert main(["run", "--project", str(project), "--skill", "/etc/passwd", "--backend", "scripted",
                 "--set", f"model.scripted={tmp_path / 'rules.yaml'}"]) == 2
    assert "not a skill file" in capsys.readouterr().err
    assert main(["history", "--json"]) == 0 and capsys.readouterr().out.strip() == "[]"
