"""Which replay mode a night runs, and the text judges a read-only replay uses instead."""

from __future__ import annotations

import asyncio


from skillopt_core.tasks.judges import build_judge
from skillopt_core.tasks.task import Task
from sleep.replay import modes
from sleep.replay.modes import ReplayMode, as_text_judge, choose_mode


def passes(spec, answer: str) -> bool:
    return asyncio.run(build_judge(spec).score(Task("t", "p"), answer)).passed


def test_outcome_rules_become_the_text_rules_they_stand_for() -> None:
    spec = as_text_judge([{"type": "ran", "command": "pnpm"}, {"type": "not_ran", "command": "npm"},
                          {"type": "not_touched", "path": "*.lock"}, {"type": "check", "command": "pytest -q"}])
    assert [r["type"] for r in spec] == ["contains", "regex"]
    assert passes(spec, "ran pnpm install") and not passes(spec, "ran npm install")


def test_a_forbidden_command_inside_the_required_one_is_left_to_contains() -> None:
    spec = as_text_judge([{"type": "ran", "command": "uv run pytest"}, {"type": "not_ran", "command": "pytest"}])
    assert spec == [{"type": "contains", "value": "uv run pytest"}]
    assert passes(spec, "I used uv run pytest instead of bare pytest.")


def test_read_only_is_chosen_without_a_sandbox_and_says_why(monkeypatch) -> None:
    monkeypatch.setattr(modes, "sandbox_available", lambda: (False, "bubblewrap (bwrap) is not installed"))
    mode = choose_mode("auto", True)
    assert mode.mode == "read_only" and "not installed" in mode.why
    assert choose_mode("actions", True).mode == "read_only"
    monkeypatch.setattr(modes, "sandbox_available", lambda: (True, "bubblewrap (/usr/bin/bwrap)"))
    assert choose_mode("auto", True) == ReplayMode("actions", "sandbox available: bubblewrap (/usr/bin/bwrap)",
                                                   "bubblewrap")
    assert choose_mode("read_only", True).mode == "read_only"
    assert choose_mode("auto", False).mode == "read_only"
