"""Retire and create (issue 33 §4): a skill whose own tasks score no worse without it is proposed for
retirement with the paired evidence (the statistics of ``skillopt compare``); a skill that helps is
kept; a new skill is staged only when it measurably beats no skill. The scripted backend tests
control flow only (no claim that any skill helps a real model): its rule answers well exactly when
the prompt holds "Use pnpm", with or without a skill around it."""

from __future__ import annotations

from pathlib import Path

from sleep_testutil import Homes
from test_cycle_multiskill import RULES, TESTS, git, make_repo, options, sessions_of, skill_text

from sleep.cycle.night import run_night
from sleep.proposals import adopt, get
from sleep.proposals.undo import undo

SKILL = ".claude/skills/run-tests/SKILL.md"
USELESS = skill_text("run-tests", "Running the test suite and the linter.")
HELPFUL = USELESS + "- Use pnpm, not npm in this repo.\n"


def project_with(homes: Homes, tmp_path: Path, body: str | None, skill: bool = True) -> Path:
    project = make_repo(tmp_path / "tiny", {SKILL: body} if body is not None else {"README.md": "# tiny\n"})
    sessions_of(homes, str(project), TESTS, 1, skill=skill)
    return project


def test_a_skill_that_does_not_help_is_proposed_for_retirement_and_undo_restores_it(
        homes: Homes, tmp_path: Path) -> None:
    project = project_with(homes, tmp_path, USELESS)
    raw = (project / SKILL).read_bytes()
    night = run_night(options(project, tmp_path, "sleep.use_corrections=false", "sleep.paired.min_instances=4"),
                      say=lambda _: None)
    part = night.skills[0]
    assert part["outcome"] == "staged", part["reason"]
    paired = part["paired"]
    assert paired["kind"] == "retire" and paired["verdict"] and paired["n_items"] == 6
    assert paired["ties"] == 6 and paired["ci_low"] == 0.0
    assert part["proposal"]["kind"] == "retire"
    assert (project / SKILL).read_bytes() == raw  # nothing deleted before review
    assert git(project, "diff", "--name-status", "HEAD", part["proposal"]["branch"]).split() == ["D", SKILL]
    p = get(part["proposal"]["id"])
    assert p.report.kind == "retire" and p.report.paired["n_items"] == 6 and len(p.report.paired["per_item"]) == 6
    assert "does not help" in night.reason
    assert part["usage"]["model_calls"] >= paired["n_items"]  # the no-skill arm was paid for and counted
    adopt(p.id)
    assert not (project / SKILL).exists()
    undo(p.id)
    assert (project / SKILL).read_bytes() == raw


def test_a_skill_that_helps_is_kept(homes: Homes, tmp_path: Path) -> None:
    project = project_with(homes, tmp_path, HELPFUL)
    night = run_night(options(project, tmp_path, "sleep.use_corrections=false", "sleep.paired.min_instances=4"),
                      say=lambda _: None)
    part = night.skills[0]
    assert part["outcome"] == "no_improvement", part["reason"]
    assert part["paired"]["verdict"] is False and part["paired"]["losses"] == 6
    assert "helps" in part["paired"]["why"]


def test_too_few_instances_measure_nothing_and_retire_nothing(homes: Homes, tmp_path: Path) -> None:
    project = project_with(homes, tmp_path, USELESS)
    night = run_night(options(project, tmp_path, "sleep.use_corrections=false"), say=lambda _: None)
    part = night.skills[0]
    assert part["outcome"] == "no_improvement" and "fewer than sleep.paired.min_instances=8" in part["paired"]["skipped"]


def test_a_new_skill_is_staged_only_when_it_measurably_beats_no_skill(homes: Homes, tmp_path: Path) -> None:
    project = project_with(homes, tmp_path, None, skill=False)
    night = run_night(options(project, tmp_path, "sleep.paired.min_instances=4"), say=lambda _: None)
    part = night.skills[0]
    assert part["managed"] and part["outcome"] == "staged", part["reason"]
    assert part["paired"]["kind"] == "create" and part["paired"]["verdict"] and part["paired"]["losses"] == 6  # B (no skill) lost all 6
    report = get(part["proposal"]["id"]).report
    assert report.kind == "create" and report.paired["mean_a"] == 1.0 and report.paired["mean_b"] == 0.0


def test_a_new_skill_not_shown_to_beat_no_skill_is_not_staged(homes: Homes, tmp_path: Path) -> None:
    """The correction helps the linter task only: 3 of 6 items better, 3 ties. The val gate sees a
    gain; at a 99 % level the paired interval reaches zero, so no new skill is staged."""
    project = project_with(homes, tmp_path, None, skill=False)
    rules = {"rules": [r if r.get("regex") != "Use pnpm|Use yarn" else {**r, "regex": "(?s)Use pnpm.*linter"}
                       for r in RULES["rules"]]}
    night = run_night(options(project, tmp_path, "sleep.paired.min_instances=4", "sleep.paired.level=0.99",
                              rules_data=rules), say=lambda _: None)
    part = night.skills[0]
    assert part["paired"]["kind"] == "create" and part["paired"]["losses"] == 3 and part["paired"]["ties"] == 3
    assert part["scores"]["candidate"] > part["scores"]["baseline"]  # the val gate alone would have staged it
    assert part["outcome"] == "no_improvement" and "not shown to help" in part["reason"], part["reason"]
    assert part["proposal"] is None


def test_paired_verdicts_need_enough_items() -> None:
    from sleep.cycle.paired import PairedSettings, create_verdict, retire_verdict

    flat = {"n_items": 5, "diff": 0.0, "ci_low": 0.0, "ci_high": 0.0, "level": 0.95, "wins": 0, "losses": 0, "ties": 5}
    assert retire_verdict(flat, PairedSettings()) == (False, retire_verdict(flat, PairedSettings())[1])
    assert "min_instances=8" in retire_verdict(flat, PairedSettings())[1]
    assert retire_verdict({**flat, "n_items": 8, "ties": 8}, PairedSettings())[0] is True
    worse = {**flat, "n_items": 8, "diff": -0.25, "ci_low": -0.5, "ci_high": -0.125}
    assert retire_verdict(worse, PairedSettings())[0] is False and create_verdict(worse, PairedSettings())[0] is True
    assert retire_verdict(worse, PairedSettings(margin=0.5))[0] is True
