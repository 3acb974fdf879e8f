"""Which skill a night evolves, and the disposable checkout replays run in."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from sleep_testutil import Homes

from skillopt_core.replay import is_replay_path
from sleep.replay.checkout import replay_checkout
from sleep.cycle.skills import MANAGED_NAME, choose_skill
from sleep.sessions import Session


def session(host: str, sid: str, skills: dict[str, int] | None = None) -> Session:
    return Session(host, sid, project_dir="/p", skills=dict(skills or {}))


def write_skill(path: Path, name: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: d\n---\n\nbody\n")
    return path


def test_the_most_invoked_project_skill_is_chosen(tmp_path: Path) -> None:
    tests = write_skill(tmp_path / ".claude/skills/tests/SKILL.md", "tests")
    write_skill(tmp_path / ".claude/skills/docs/SKILL.md", "docs")
    sessions = [session("claude-code", "a", {"tests": 2}), session("claude-code", "b", {"tests": 1, "docs": 1})]
    choice = choose_skill(tmp_path, sessions)
    assert choice.path == tests and choice.sessions == 2 and not choice.managed


def test_a_home_skill_is_found_when_the_project_has_none(tmp_path: Path, homes: Homes) -> None:
    home_skill = write_skill(homes.claude / "skills" / "review" / "SKILL.md", "review")
    choice = choose_skill(tmp_path, [session("claude-code", "a", {"review": 1})])
    assert choice.path == home_skill


def test_codex_skills_resolve_under_agents(tmp_path: Path) -> None:
    path = write_skill(tmp_path / ".agents/skills/deploy/SKILL.md", "deploy")
    assert choose_skill(tmp_path, [session("codex", "a", {"deploy": 1})]).path == path


def test_without_an_invoked_skill_a_managed_skill_for_the_main_host_is_proposed(tmp_path: Path) -> None:
    sessions = [session("codex", "a"), session("codex", "b"), session("claude-code", "c", {"gone": 1})]
    choice = choose_skill(tmp_path, sessions)
    assert choice.managed and choice.name == MANAGED_NAME and choice.host == "codex"
    assert choice.path == tmp_path / ".agents/skills" / MANAGED_NAME / "SKILL.md"
    assert choice.seed_text().startswith(f"---\nname: {MANAGED_NAME}\n")


def test_copilot_projects_use_their_instructions_file(tmp_path: Path) -> None:
    instructions = tmp_path / ".github/copilot-instructions.md"
    instructions.parent.mkdir(parents=True)
    instructions.write_text("Use pnpm.\n")
    assert choose_skill(tmp_path, [session("copilot-vscode", "a")]).path == instructions


def test_skill_override_wins(tmp_path: Path) -> None:
    path = write_skill(tmp_path / "custom/SKILL.md", "custom")
    choice = choose_skill(tmp_path, [session("claude-code", "a", {"x": 1})], override=path)
    assert choice.path == path and choice.why == "chosen with --skill"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("print('committed')\n")
    git(repo, "add", "app.py")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    (repo / "app.py").write_text("print('dirty, uncommitted')\n")
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")
    return repo


def test_the_checkout_holds_head_and_leaves_the_project_untouched(repo: Path) -> None:
    before = (git(repo, "rev-parse", "HEAD"), (repo / ".git/index").read_bytes(), git(repo, "status", "--porcelain=v2"))
    with replay_checkout(repo) as work:
        assert is_replay_path(work)
        assert (work / "app.py").read_text() == "print('committed')\n"
        assert not (work / "staged.txt").exists()
        (work / "app.py").write_text("a replay changed this\n")
    assert not work.exists()
    after = (git(repo, "rev-parse", "HEAD"), (repo / ".git/index").read_bytes(), git(repo, "status", "--porcelain=v2"))
    assert after == before and (repo / "app.py").read_text() == "print('dirty, uncommitted')\n"


def test_a_folder_that_is_no_repository_is_copied_without_heavy_dirs(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    (project / "node_modules" / "x").mkdir(parents=True)
    (project / "src").mkdir()
    (project / "src" / "main.py").write_text("x = 1\n")
    with replay_checkout(project) as work:
        assert (work / "src" / "main.py").read_text() == "x = 1\n" and not (work / "node_modules").exists()
    assert not work.exists()


def test_git_variables_of_a_hook_do_not_redirect_the_clone(repo: Path, tmp_path: Path, monkeypatch) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    with replay_checkout(repo) as work:
        assert (work / "app.py").read_text() == "print('committed')\n"
