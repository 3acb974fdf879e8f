"""Retire and create (issue 33 §4): a skill whose own tasks score no worse without it is proposed for
retirement with the paired evidence (the statistics of ``skillopt compare``); a skill that helps is
kept; a new skill is staged only when it measurably beats no skill. The scripted backend tests
control flow only (no claim that any skill helps a real model): its rule answers well exactly when
the prompt holds "Use pnpm", with or without a skill around it."""

from __future__ import annotations

from pathlib import Path

from sleep_testutil import Homes
from test_cycle_multiskill import GOOD, RULES, TESTS, git, make_repo, options, sessions_of, skill_text

from sleep.cycle.night import run_night
from sleep.proposals import adopt, get
from sleep.proposals.undo import undo

SKILL = ".claude/skills/run-tests/SKILL.md"
USELESS = skill_text("run-tests", "Running the test suite and the linter.")
HELPFUL = USELESS + "- Use pnpm, not npm in this repo.\n"
HARMFUL = USELESS + "- Always run npm, never pnpm.\n"
# Answers well unless the skill misleads: every item scores better without HARMFUL.
HARMED_RULES = {"rules": [*[r for r in RULES["rules"] if r["stage"] != "rollout"],
                          {"stage": "rollout", "regex": "Always run npm", "response": "ran npm test."},
                          {"stage": "rollout", "response": GOOD}]}


def project_with(homes: Homes, tmp_path: Path, body: str | None, skill: bool = True) -> Path:
    project = make_repo(tmp_path / "tiny", {SKILL: body} if body is not None else {"README.md": "# tiny\n"})
    sessions_of(homes, str(project), TESTS, 1, skill=skill)
    return project


def test_a_skill_that_does_not_help_is_proposed_for_retirement_and_undo_restores_it(
        homes: Homes, tmp_path: Path) -> None:
    project = project_with(homes, tmp_path, HARMFUL)
    raw = (project / SKILL).read_bytes()
    night = run_night(options(project, tmp_path, "sleep.use_corrections=false", "sleep.paired.min_instances=4",
                              rules_data=HARMED_RULES), say=lambda _: None)
    part = night.skills[0]
    assert part["outcome"] == "staged", part["reason"]
    paired = part["paired"]
    assert paired["kind"] == "retire" and paired["verdict"] and paired["n_items"] == 6
    assert paired["wins"] == 6 and paired["ci_low"] > 0.0  # every item better without it
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
    lines: list[str] = []
    night = run_night(options(project, tmp_path, "sleep.use_corrections=false", "sleep.paired.min_instances=4"),
                      say=lines.append)
    # the measurement (minutes on a local model) says it starts, then its result
    start = next(i for i, line in enumerate(lines) if line.startswith("[Paired] run-tests: measuring 6 items"))
    assert lines[start + 1:] and any(line.startswith("[Paired] run-tests: without it") for line in lines[start + 1:])
    part = night.skills[0]
    assert part["outcome"] == "no_improvement", part["reason"]
    assert part["paired"]["verdict"] is False and part["paired"]["losses"] == 6
    assert "helps" in part["paired"]["why"]


def test_a_skill_whose_tasks_all_tie_without_it_is_not_retired(homes: Homes, tmp_path: Path) -> None:
    """All six items fail with and without the skill (interval [0, 0]): nothing shows it does not help."""
    project = project_with(homes, tmp_path, USELESS)
    night = run_night(options(project, tmp_path, "sleep.use_corrections=false", "sleep.paired.min_instances=4"),
                      say=lambda _: None)
    part = night.skills[0]
    assert part["paired"]["ties"] == 6 and part["paired"]["ci_low"] == part["paired"]["ci_high"] == 0.0
    assert part["paired"]["verdict"] is False and "sleep.paired.min_untied=3" in part["paired"]["why"]
    assert part["outcome"] == "no_improvement" and part["proposal"] is None, part["reason"]


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
    no_worse = {**flat, "n_items": 8, "diff": 0.375, "ci_low": 0.125, "ci_high": 0.625, "wins": 3, "ties": 5}
    assert retire_verdict(no_worse, PairedSettings())[0] is True
    worse = {**flat, "n_items": 8, "diff": -0.25, "ci_low": -0.5, "ci_high": -0.125, "losses": 4, "ties": 4}
    assert retire_verdict(worse, PairedSettings())[0] is False and create_verdict(worse, PairedSettings())[0] is True
    assert retire_verdict(worse, PairedSettings(margin=0.5))[0] is True


def test_all_ties_do_not_retire_a_skill_untied_pairs_do() -> None:
    """Eight ties (interval [0, 0]) cannot tell the skill from no skill: no retirement. With
    ``min_untied`` items scoring differently (none worse without the skill) it is retired."""
    from sleep.cycle.paired import PairedSettings, retire_verdict

    ties = {"n_items": 8, "diff": 0.0, "ci_low": 0.0, "ci_high": 0.0, "level": 0.95, "wins": 0, "losses": 0, "ties": 8}
    verdict, why = retire_verdict(ties, PairedSettings())
    assert verdict is False and "min_untied=3" in why and "8 of 8 paired items tie" in why
    two = {**ties, "diff": 0.25, "ci_high": 0.5, "wins": 2, "ties": 6}
    assert retire_verdict(two, PairedSettings())[0] is False
    three = {**ties, "diff": 0.375, "ci_high": 0.625, "wins": 3, "ties": 5}
    assert retire_verdict(three, PairedSettings())[0] is True
    assert retire_verdict(two, PairedSettings(min_untied=2))[0] is True
    assert retire_verdict(ties, PairedSettings(min_untied=0))[0] is True  # the old, eager rule, when configured
