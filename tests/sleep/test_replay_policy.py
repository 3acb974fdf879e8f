"""What an acting replay may run: the sessions' programs and what the task's judge requires."""

from __future__ import annotations

from types import SimpleNamespace

from sleep.mine.select import PoolItem
from sleep.replay.instances import task_items
from sleep.replay.policy import MAX_COMMANDS, READ_ONLY_BASICS, allowed_commands

CORRECTED = [{"type": "ran", "command": "pnpm"}, {"type": "not_ran", "command": "npm"}]


def test_a_correction_the_gate_asks_about_can_be_run() -> None:
    # The person ran `npm install`, then said "use pnpm": the sessions name only npm.
    allowed = allowed_commands(["npm install"], CORRECTED)
    assert "pnpm" in allowed and "npm" in allowed


def test_check_commands_of_the_judge_are_allowed_whole() -> None:
    allowed = allowed_commands([], [{"type": "check", "command": "uv run pytest -q"}])
    assert "uv run pytest -q" in allowed and "uv" not in allowed


def test_a_judge_cannot_open_what_the_policy_never_allows() -> None:
    judge = [{"type": "ran", "commands": ["sudo apt-get install", "git", "ssh host", "git commit", "-rf"]}]
    allowed = allowed_commands([], judge)
    assert "git commit" in allowed
    assert not {"git", "sudo apt-get install", "ssh host", "-rf"} & set(allowed)


def test_the_cap_never_drops_the_judges_commands() -> None:
    signatures = [f"tool{n} run" for n in range(2 * MAX_COMMANDS)]
    allowed = allowed_commands(signatures, {"type": "ran", "command": "pnpm"})
    assert len(allowed) == MAX_COMMANDS and allowed[len(READ_ONLY_BASICS)] == "pnpm"


def test_a_tasks_items_may_run_what_its_judge_requires() -> None:
    record = SimpleNamespace(id="t1", intent="install", support=2, prompt="install the deps", context="",
                             judge=CORRECTED)
    members = [PoolItem("/p", "claude-code", "s1", 0, "2026-11-21T09:00:00Z", "install the deps",
                        shell=["npm install"], files=[])]
    allowed = task_items(record, members, 4, ())[0].metadata["allowed_commands"]
    assert {"npm", "pnpm"} <= set(allowed)
