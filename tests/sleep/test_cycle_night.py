"""The night end to end with the scripted backend on the demo transcripts:
what it stages, what it refuses, what it records, and what it never touches."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cycle_testutil import SECRET, rules
from sleep_testutil import Homes

from sleep import paths
from sleep.cli import main
from sleep.cycle.demo import install_transcripts
from sleep.cycle.night import NightOptions, night_lock, run_night
from sleep.nightstore import nights
from sleep.index import Index
from sleep.lock import LockBusy

def options(project: Path, tmp_path: Path, *extra: str, harmful: bool = False, **kw) -> NightOptions:
    path = tmp_path / ("harmful.yaml" if harmful else "rules.yaml")
    path.write_text(yaml.safe_dump(rules(harmful)))
    return NightOptions(project=project, backend="scripted", overrides=[f"model.scripted={path}", *extra],
                        skill=project / ".claude/skills/ledger-dev/SKILL.md", **kw)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def checkout_state(repo: Path) -> tuple:
    files = sorted((p.relative_to(repo).as_posix(), p.read_bytes()) for p in repo.rglob("*")
                   if p.is_file() and ".git" not in p.relative_to(repo).parts)
    return (git(repo, "rev-parse", "HEAD"), git(repo, "symbolic-ref", "HEAD"), (repo / ".git/index").read_bytes(),
            git(repo, "status", "--porcelain=v2"), git(repo, "stash", "list"), files)


def branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--list", "skillopt/*", "--format=%(refname:short)").split()


def test_a_night_that_improves_the_skill_stages_one_branch_with_its_evidence(project: Path, tmp_path: Path) -> None:
    (project / "notes.txt").write_text("the person's own uncommitted work\n")
    before = checkout_state(project)
    night = run_night(options(project, tmp_path), say=lambda _: None)
    assert night.outcome == "staged", night.reason
    assert checkout_state(project) == before
    assert branches(project) == [night.proposal["branch"]]
    assert night.proposal["where"] == f"the project's repository {project.resolve()}"
    assert night.scores["candidate"] > night.scores["baseline"]
    assert any("Use pnpm" in rule for rule in night.corrections["kept"])
    diff = git(project, "diff", "HEAD", night.proposal["branch"])
    assert "+- Use pnpm, not npm in this repo." in diff and ".claude/skills/ledger-dev/SKILL.md" in diff
    run_dir = Path(night.run_dir)
    assert run_dir.is_relative_to(paths.data_dir()) and (run_dir / "evidence.jsonl").is_file()
    assert night.usage["model_calls"] > 0 and night.tasks["val"]
    with Index.open() as index:
        assert [n.id for n in nights(index, str(project))] == [night.id]


def test_a_harmful_correction_is_rejected_recorded_and_nothing_is_staged(project: Path, tmp_path: Path) -> None:
    # The skill's tasks pass with or without it here; this test is about the rejected correction only.
    night = run_night(options(project, tmp_path, "sleep.paired.retire=false", harmful=True), say=lambda _: None)
    assert night.outcome == "no_improvement" and night.proposal is None
    assert branches(project) == []
    assert any("Use pnpm" in rule for rule in night.corrections["rejected"])
    # Measured with and without the skill, every item ties: that does not show it does not help, so it is
    # not proposed for retirement either (sleep.paired.min_untied; tests/sleep/test_cycle_lifecycle.py).
    measured = run_night(options(project, tmp_path, "sleep.skip_idle=false", harmful=True), say=lambda _: None)
    assert measured.paired["kind"] == "retire" and measured.paired["verdict"] is False
    assert measured.paired["ties"] == measured.paired["n_items"] and "min_untied" in measured.paired["why"]
    assert measured.proposal is None and branches(project) == []


def test_too_few_tasks_stage_nothing_and_say_why(project: Path, tmp_path: Path) -> None:
    night = run_night(options(project, tmp_path, "sleep.min_tasks=10"), say=lambda _: None)
    assert night.outcome == "too_few_tasks" and "sleep.min_tasks=10" in night.reason
    assert night.usage == {} and night.run_dir is None and branches(project) == []


def test_an_idle_night_makes_no_model_call(project: Path, tmp_path: Path) -> None:
    first = run_night(options(project, tmp_path), say=lambda _: None)
    second = run_night(options(project, tmp_path), say=lambda _: None)
    assert first.outcome == "staged" and second.outcome == "idle"
    assert second.usage == {} and second.run_dir is None and first.id in second.reason
    assert second.wall_s < 10


def test_a_night_forced_with_skip_idle_false_leaves_the_next_plain_night_idle(project: Path, tmp_path: Path) -> None:
    """`sleep.skip_idle` says whether to skip, not what a part trains on: a night forced with it
    off is the last one the next night compares with (it once differed only by that key)."""
    forced = run_night(options(project, tmp_path, "sleep.skip_idle=false"), say=lambda _: None)
    plain = run_night(options(project, tmp_path), say=lambda _: None)
    assert forced.outcome == "staged" and plain.outcome == "idle" and forced.id in plain.reason
    assert plain.usage == {}


def test_a_night_after_one_that_found_its_lesson_already_proposed_is_idle(project: Path, tmp_path: Path) -> None:
    """A part that ended `already_proposed` trained to the end: the next night with nothing new is
    idle against it (it was compared with an older staged part, and replayed everything again, every
    night, while the proposal waited)."""
    first = run_night(options(project, tmp_path), say=lambda _: None)
    again = run_night(options(project, tmp_path, "budget.max_calls=301"), say=lambda _: None)
    third = run_night(options(project, tmp_path, "budget.max_calls=301"), say=lambda _: None)
    assert first.outcome == "staged" and again.outcome == "already_proposed"
    assert third.outcome == "idle" and again.id in third.reason and third.usage == {}


def test_a_second_night_of_the_project_is_refused_while_one_runs(project: Path, tmp_path: Path) -> None:
    held = night_lock(project.resolve()).acquire()
    try:
        with pytest.raises(LockBusy, match="night for"):
            run_night(options(project, tmp_path), say=lambda _: None)
        rules_file = tmp_path / "rules.yaml"
        assert main(["run", "--project", str(project), "--backend", "scripted",
                     "--set", f"model.scripted={rules_file}"]) == 3
    finally:
        held.release()


def test_the_cli_prints_the_night_record_as_json(project: Path, tmp_path: Path, capsys) -> None:
    opts = options(project, tmp_path)
    code = main(["run", "--project", str(project), "--backend", "scripted", "--skill", str(opts.skill),
                 "--set", opts.overrides[0], "--json", "--dry-run"])
    record = json.loads(capsys.readouterr().out)
    assert code == 0 and record["outcome"] == "would_stage" and branches(project) == []
    for key in ("id", "outcome", "tasks", "scores", "proposal", "usage", "wall_s"):
        assert key in record
    assert record["usage"]["model_calls"] > 0 and record["usage"]["tokens"] > 0
    assert main(["history", "--json", "--project", str(project)]) == 0
    assert json.loads(capsys.readouterr().out)[0]["id"] == record["id"]


KILL_DRIVER = """
import importlib, os, signal, sys
from pathlib import Path
import sleep.cycle.night as night
staging = importlib.import_module("sleep.proposals.stage")  # the module (the package exposes the function)
where = sys.argv[1]
if where == "branch":
    create = staging._create_branch
    def killed(*args, **kwargs):
        name = create(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
    staging._create_branch = killed
else:
    from sleep.cycle.writer import NightWriter
    enter = NightWriter.stage
    def killed(writer, name):
        enter(writer, name)
        if name == where:
            os.kill(os.getpid(), signal.SIGKILL)
    NightWriter.stage = killed
opts = night.NightOptions(project=Path(sys.argv[2]), backend="scripted", overrides=[sys.argv[3]],
                          skill=Path(sys.argv[2]) / ".claude/skills/ledger-dev/SKILL.md")
night.run_night(opts, say=lambda _: None)
"""


@pytest.mark.parametrize("where", ["harvest", "mine", "replay", "stage", "branch"])
def test_a_night_killed_at_any_stage_leaves_nothing_half_done_and_the_next_completes(
        project: Path, tmp_path: Path, where: str) -> None:
    opts = options(project, tmp_path)
    before = checkout_state(project)
    proc = subprocess.run([sys.executable, "-c", KILL_DRIVER, where, str(project), opts.overrides[0]],
                          capture_output=True, text=True, env=os.environ, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert checkout_state(project) == before
    night = run_night(opts, say=lambda _: None)
    assert night.outcome == "staged", night.reason
    assert branches(project) == [night.proposal["branch"]]
    with Index.open() as index:
        outcomes = [n.outcome for n in nights(index, str(project))]
    assert outcomes == ["staged", "interrupted"]


def test_a_project_outside_git_gets_its_proposal_in_the_skills_repository(homes: Homes, tmp_path: Path) -> None:
    folder = tmp_path / "plain-project"
    folder.mkdir()
    skill = folder / ".claude/skills/ledger-dev/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text((Path(__file__).parents[2] / "sleep/cycle/demo.py").read_text().split('STARTING_SKILL = """')[1]
                     .split('"""')[0])
    install_transcripts(homes.home, folder)
    night = run_night(options(folder, tmp_path), say=lambda _: None)
    assert night.outcome == "staged" and night.proposal["where"].startswith("SkillOpt's skills repository ")


def test_planted_secrets_reach_no_prompt_commit_note_run_file_or_record(project: Path, homes: Homes,
                                                                         tmp_path: Path) -> None:
    slug = "".join(c if c.isalnum() else "-" for c in str(project))
    session = homes.claude / "projects" / slug / "f0000000-0000-4000-8000-000000000001.jsonl"
    line = {"type": "user", "sessionId": "f0000000-0000-4000-8000-000000000001", "cwd": str(project),
            "timestamp": "2026-11-27T09:00:00.000Z", "uuid": "u1", "parentUuid": None, "entrypoint": "cli",
            "message": {"role": "user", "content": f"run the tests and tell me what fails, my token is {SECRET}"}}
    session.write_text(json.dumps(line) + "\n")
    night = run_night(options(project, tmp_path), say=lambda _: None)
    assert night.outcome == "staged"
    objects = subprocess.run(["git", "-C", str(project), "cat-file", "--batch-all-objects", "--batch"],
                             capture_output=True, check=True).stdout
    assert SECRET.encode() not in objects
    for folder in (paths.data_dir(), project):
        for path in folder.rglob("*"):
            if path.is_file():
                assert SECRET.encode() not in path.read_bytes(), path
    outbound = Path(night.run_dir, "evidence.jsonl").read_text()
    assert "run the tests" in outbound and SECRET not in outbound
