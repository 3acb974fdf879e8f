"""Reflection sees what a failed rollout did (bounded, redacted) and the failure in words,
never the judge's patterns, globs or check command."""

from __future__ import annotations

import asyncio

from skillopt_core.backends.trajectory import CheckRun, CommandRun, FileChange, Trajectory
from skillopt_core.evaluation.rollout import RolloutResult
from skillopt_core.optim.reflect import build_reflect_request
from skillopt_core.skill.document import Skill
from skillopt_core.tasks.judges import build_judge
from skillopt_core.tasks.judges.outcome import scoring_trajectory
from skillopt_core.tasks.task import Task

JUDGE = [{"type": "not_ran", "commands": ["npm", "yarnpkg-legacy"]},
         {"type": "not_touched", "paths": ["*.lockfile-glob"]},
         {"type": "check", "command": "pytest -q -k secret_selector"}]
TASK = Task(id="deps", prompt="install the dependencies", judge=JUDGE)


def failed_rollout() -> tuple[Task, RolloutResult]:
    trajectory = Trajectory((
        CommandRun("npm install", 0, "added 3 packages; token=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"),
        FileChange("package-lock.json", "modified"),
        CheckRun("pytest -q -k secret_selector", 1, "1 failed"),
    ))
    with scoring_trajectory(trajectory):
        score = asyncio.run(build_judge(JUDGE).score(TASK, "Installed."))
    return TASK, RolloutResult("deps", 0, "Installed.", score, trajectory=trajectory)


def test_reflection_sees_the_actions_and_the_failure_in_words() -> None:
    prompt = build_reflect_request(Skill.parse("# Deps\n"), [failed_rollout()], show_reference=False).prompt_text
    assert "What the model did" in prompt and "ran `npm install` (exit 0)" in prompt
    assert "package-lock.json (modified)" in prompt
    assert "the person corrected that before" in prompt
    assert "verification command failed" in prompt


def test_reflection_never_quotes_the_judge() -> None:
    prompt = build_reflect_request(Skill.parse("# Deps\n"), [failed_rollout()], show_reference=False).prompt_text
    for internal in ("yarnpkg-legacy", "*.lockfile-glob", "secret_selector", "not_ran", "not_touched"):
        assert internal not in prompt
    assert "added 3 packages" not in prompt  # tool output stays out
