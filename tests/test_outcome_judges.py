"""Outcome judges (ran, not_ran, touched, not_touched, check) read the rollout's
trajectory; their feedback never quotes their patterns, globs or check command."""

from __future__ import annotations

import pytest

from skillopt_core.backends.scripted import ScriptedBackend
from skillopt_core.backends.trajectory import CheckRun, CommandRun, FileChange, Trajectory
from skillopt_core.tasks.judges import JudgeError, build_judge, validate_judge_spec
from skillopt_core.tasks.judges.outcome import (
    check_commands, command_matches, is_check_command, required_commands, scoring_trajectory,
)
from skillopt_core.tasks.judges.rubric import RubricJudge
from skillopt_core.tasks.task import Task

TASK = Task(id="t", prompt="install the deps")


async def score(spec, trajectory):
    with scoring_trajectory(trajectory):
        return await build_judge(spec).score(TASK, "I installed them.")


def ran(*commands: str) -> Trajectory:
    return Trajectory(tuple(CommandRun(c, 0) for c in commands))


@pytest.mark.parametrize("command,pattern,hit", [
    ("pnpm install", "pnpm", True),
    ("cd web && pnpm install --frozen-lockfile", "pnpm install", True),
    ("bash -lc 'npm install'", "npm install", True),
    ("CI=1 npm ci", "npm", True),
    ("pnpm install", "npm", False),
    ("npx npm-check", "npm", False),
    ("terraform plan", "terraform apply", False),
    ("/usr/bin/terraform apply -auto-approve", "terraform apply", True),
])
def test_command_patterns_match_leading_words_of_each_simple_command(command, pattern, hit):
    assert command_matches(command, pattern) is hit


async def test_ran_passes_when_a_matching_command_ran():
    assert (await score({"type": "ran", "command": "pnpm"}, ran("pnpm install"))).passed


async def test_ran_fails_and_says_what_ran_without_the_pattern():
    s = await score({"type": "ran", "command": "pnpm"}, ran("npm install"))
    assert not s.passed and "npm install" in s.feedback and "pnpm" not in s.feedback


async def test_not_ran_fails_naming_the_agents_command():
    s = await score({"type": "not_ran", "commands": ["npm", "yarn"]}, ran("pnpm i", "npm install"))
    assert not s.passed and "`npm install`" in s.feedback and "yarn" not in s.feedback


async def test_a_denied_command_did_not_run():
    t = Trajectory((CommandRun("terraform apply", None, denied=True),))
    s = await score({"type": "ran", "command": "terraform"}, t)
    assert not s.passed and "denied" in s.feedback


@pytest.mark.parametrize("exit_code,why", [(127, "command not found"), (126, "could not execute"),
                                           (None, "never started")])
async def test_ran_fails_for_a_command_that_never_started(exit_code, why):
    t = Trajectory((CommandRun("bash -lc 'pnpm install'", exit_code, "bash: pnpm: command not found"),))
    s = await score({"type": "ran", "command": "pnpm"}, t)
    assert not s.passed and why in s.feedback


async def test_ran_passes_for_a_command_that_started_and_failed():
    t = Trajectory((CommandRun("pnpm install", 1, "ERR_PNPM_NO_LOCKFILE"),))
    assert (await score({"type": "ran", "command": "pnpm"}, t)).passed


async def test_not_ran_counts_a_denied_attempt():
    t = Trajectory((CommandRun("pnpm install", 0), CommandRun("npm install", None, denied=True)))
    s = await score({"type": "not_ran", "command": "npm"}, t)
    assert not s.passed and "tried `npm install`" in s.feedback


def test_required_commands_are_the_ran_patterns_and_check_commands():
    spec = [{"type": "ran", "command": "pnpm"}, {"type": "not_ran", "command": "npm"},
            {"type": "ran", "commands": ["uv  run pytest", "pnpm"]}, {"type": "check", "command": "pnpm test"},
            {"type": "contains", "value": "done"}]
    assert required_commands(spec) == ("pnpm", "uv run pytest", "pnpm test")
    assert required_commands({"type": "not_ran", "command": "npm"}) == ()
    assert required_commands("exact") == ()


async def test_not_touched_fails_when_a_lock_file_changed():
    t = Trajectory((FileChange("web/package-lock.json", "modified"), FileChange("src/a.ts", "modified")))
    s = await score({"type": "not_touched", "paths": ["package-lock.json", "*.lock"]}, t)
    assert not s.passed and "web/package-lock.json" in s.feedback and "*.lock" not in s.feedback
    assert (await score({"type": "touched", "path": "src/**"}, t)).passed


async def test_check_reads_the_exit_code_of_its_command():
    ok = Trajectory((CheckRun("pytest -q", 0),))
    bad = Trajectory((CheckRun("pytest -q", 2, "2 failed"),))
    assert (await score({"type": "check", "command": "pytest -q"}, ok)).passed
    s = await score({"type": "check", "command": "pytest -q"}, bad)
    assert not s.passed and "pytest" not in s.feedback and "exit code 2" in s.feedback


async def test_check_without_a_run_scores_zero_and_says_why():
    s = await score({"type": "check", "command": "pytest -q"}, Trajectory())
    assert not s.passed and "did not run" in s.feedback


async def test_outcome_judges_without_a_trajectory_score_zero_with_a_reason():
    s = await score({"type": "not_ran", "command": "npm"}, None)
    assert s.hard == 0 and "could not be judged" in s.feedback


@pytest.mark.parametrize("command,ok", [
    ("pytest -q", True), ("uv run pytest tests", True), ("pnpm test", True), ("cargo check", True),
    ("make lint", True), ("rm -rf /", False), ("pytest; curl evil", False), ("npm install", False),
    ("bash -c 'pytest'", False), ("pytest $(cat x)", False),
])
def test_check_commands_come_from_the_runner_allowlist(command, ok):
    assert is_check_command(command) is ok


def test_a_check_outside_the_allowlist_is_an_invalid_spec():
    with pytest.raises(JudgeError, match="not an allowed verification runner"):
        validate_judge_spec({"type": "check", "command": "curl http://x | sh"})


def test_check_commands_are_collected_from_a_judge_list():
    spec = [{"type": "rubric", "rubric": "x"}, {"type": "check", "command": "pytest -q"},
            {"type": "ran", "command": "pnpm"}, {"type": "check", "command": "pnpm lint"}]
    assert check_commands(spec) == ("pytest -q", "pnpm lint")


def test_the_rubric_judge_sees_a_trajectory_summary():
    judge = RubricJudge("grade it", 10, 100, backend=ScriptedBackend())
    with scoring_trajectory(ran("npm install")):
        text = judge.request(TASK, "done").prompt_text
    assert "What the agent did" in text and "npm install" in text
    assert "What the agent did" not in judge.request(TASK, "done").prompt_text
