"""Racing: the screen and the val gate stop once their answer is predicted
(skillopt_core/run/racing.py), the rule alone and through the trainer on the
toy world (scripted backend: control flow only, never evidence of a gain)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from toy_world import backends, settings_for
from test_screen_gate import world

from skillopt_core.evaluation.gate import GateSettings, decide
from skillopt_core.run.api import train
from skillopt_core.run.config import ConfigError
from skillopt_core.run.racing import RaceSettings, predicted_range, race, raced_decision

RACE = RaceSettings(z=1.64, min_items=10)


def test_a_clearly_worse_candidate_fails_before_the_end():
    deltas = [-1.0, 0.0, -1.0, 0.0, -1.0, 0.0, 0.0, -1.0, 0.0, -1.0]
    call = race(RACE, deltas, remaining=30, bar=0.0)
    assert call is not None and call.verdict == "fail" and call.high <= 0.0
    assert "raced after 10 of 40 items" in call.describe()


def test_a_clearly_better_candidate_passes_before_the_end():
    call = race(RACE, [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0], remaining=28, bar=0.0)
    assert call is not None and call.verdict == "pass" and call.low > 0.0


def test_a_close_race_goes_on_and_nothing_stops_before_min_items():
    assert race(RACE, [1.0, -1.0, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0, 0.0, 0.0], remaining=30, bar=0.0) is None
    assert race(RACE, [-1.0] * 9, remaining=31, bar=0.0) is None  # 9 < min_items


def test_ties_so_far_do_not_claim_certainty():
    # Ten ties: the variance is the prior's, not 0, so the remaining 30 items may still decide.
    assert race(RACE, [0.0] * 10, remaining=30, bar=0.0) is None


def test_with_nothing_left_the_race_is_the_exact_answer():
    assert race(RACE, [1.0, 0.0, -1.0], remaining=0, bar=0.0).verdict == "fail"
    assert race(RACE, [1.0, 0.0, 1.0], remaining=0, bar=0.0).verdict == "pass"


def test_the_predicted_range_stays_within_what_any_completion_can_reach():
    rng = random.Random(3)
    for _ in range(200):
        n, m = rng.randint(1, 30), rng.randint(0, 30)
        deltas = [rng.choice((-1.0, 0.0, 0.0, 1.0)) for _ in range(n)]
        low, high = predicted_range(deltas, m, 1.64)
        assert sum(deltas) - m - 1e-9 <= low <= high <= sum(deltas) + m + 1e-9


def test_a_wider_bound_stops_later():
    deltas = [-1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, -1.0]
    assert race(RaceSettings(1.0), deltas, 28, 0.0) is not None
    assert race(RaceSettings(3.0), deltas, 28, 0.0) is None


def test_the_raced_decision_reports_the_evaluated_items():
    current = {f"v{i}": 1.0 for i in range(40)}
    partial = {f"v{i}": 0.0 if i % 2 else 1.0 for i in range(12)}
    call = race(RACE, [partial[k] - current[k] for k in partial], 28, 0.0)
    decision = raced_decision(GateSettings(), current, partial, call)
    assert not decision.accept and decision.early_stopped and decision.n_evaluated == 12 and decision.n_items == 40
    assert decision.current_mean == 1.0 and decision.candidate_mean == 0.5 and decision.reason.startswith("raced")


def test_on_simulated_paired_outcomes_racing_rarely_flips_a_decision_and_saves_most_items():
    """Candidates differing from the current skill on a fifth of 40 items (the simulator's
    wording noise), most of them worse: the race agrees with the full evaluation on nearly
    every decision and evaluates far fewer items."""
    rng = random.Random(7)
    flips = evaluated = 0
    trials = 400
    for _ in range(trials):
        shift = rng.choice((-0.15, -0.1, -0.05, 0.0, 0.05))
        deltas = [(1.0 if rng.random() < 0.5 + shift / 0.4 else -1.0) if rng.random() < 0.2 else 0.0
                  for _ in range(40)]
        full = sum(deltas) > 0
        for n in range(1, 41):
            call = race(RACE, deltas[:n], 40 - n, 0.0)
            if call is not None:
                flips += (call.verdict == "pass") != full
                evaluated += n
                break
    assert flips <= 0.1 * trials
    assert evaluated <= 0.75 * 40 * trials


def test_racing_is_on_at_the_gate_by_default_off_by_setting_and_bad_values_are_clear_errors(tmp_path):
    ev_ = settings_for(tmp_path).evaluation
    assert (ev_.race_z, ev_.race_scope, ev_.race_accept_z) == (2.5, "gate", None)
    assert settings_for(tmp_path, "evaluation.race_z=null").evaluation.race_z is None
    with pytest.raises(ConfigError, match="race_z"):
        settings_for(tmp_path, "evaluation.race_z=0")
    with pytest.raises(ValueError, match="positive"):
        RaceSettings(z=float("nan"))


def _answer(i: int, skill: str) -> str:
    # "BAD." spoils most answers; without it every banana question passes.
    if "BAD." in skill:
        return "apple" if i % 5 else "banana"
    return "banana"


async def test_the_val_gate_races_a_clearly_worse_candidate_to_a_reject(tmp_path):
    records = {}
    for name, extra in (("exact", ("evaluation.race_z=null",)),
                        ("raced", ("evaluation.race_z=1.64", "evaluation.race_min_items=3"))):
        settings = settings_for(tmp_path / name, "train.steps_per_epoch=1", "evaluation.val_limit=16",
                                "evaluation.screen_items=0", "optimizer.use_slow_update=false",
                                "optimizer.use_meta_skill=false", "evaluation.eval_test=false",
                                "env.split_ratio=[2,6,2]", *extra)
        summary = await train(settings, backends=backends(world(["BAD."], _answer)))
        records[name] = json.loads(Path(summary.run_dir, "history.json").read_text())[0]
    assert records["exact"]["action"] == records["raced"]["action"] == "reject"
    assert records["raced"]["gate_evaluated"] < records["exact"]["gate_evaluated"]
    assert records["raced"]["gate_reason"].startswith("raced after")


async def test_the_screen_races_too(tmp_path):
    records = {}
    for name, extra in (("exact", ("evaluation.race_z=null",)),
                        ("raced", ("evaluation.race_z=1.0", "evaluation.race_min_items=3", "evaluation.race_scope=both"))):
        settings = settings_for(tmp_path / name, "train.steps_per_epoch=1", "train.batch_size=16",
                                "evaluation.screen_items=16", "optimizer.use_slow_update=false",
                                "optimizer.use_meta_skill=false", "evaluation.eval_test=false", *extra)
        summary = await train(settings, backends=backends(world(["BAD."], _answer)))
        records[name] = json.loads(Path(summary.run_dir, "history.json").read_text())[0]
    assert records["exact"]["screen"]["passed"] is records["raced"]["screen"]["passed"] is False
    assert records["raced"]["screen"]["evaluated"] < records["exact"]["screen"]["evaluated"]
    assert "raced after" in records["raced"]["gate_reason"]


def test_an_exact_decision_is_what_the_race_reaches_with_nothing_left():
    current = {"a": 1.0, "b": 0.0}
    full = {"a": 1.0, "b": 1.0}
    assert decide(GateSettings(), current, full).accept
    assert race(RACE, [0.0, 1.0], 0, 0.0).verdict == "pass"


def test_a_wrong_remeasure_scope_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="remeasure_scope"):
        settings_for(tmp_path, "evaluation.remeasure_scope=some")


def test_a_state_written_before_val_rounds_existed_still_loads():
    from skillopt_core.run.state import TrainState

    old = {k: v for k, v in TrainState(0, 0, "s", "s", "s", "s", None).to_dict().items() if k != "val_rounds"}
    assert TrainState.from_dict(old).val_rounds == {}


def test_an_accept_z_above_the_reject_z_passes_later_and_inf_passes_only_when_certain():
    deltas = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0]
    assert race(RaceSettings(1.64), deltas, 28, 0.0).verdict == "pass"
    assert race(RaceSettings(1.64, accept_z=6.0), deltas, 28, 0.0) is None
    assert race(RaceSettings(1.64, accept_z=float("inf")), deltas, 28, 0.0) is None
    assert race(RaceSettings(1.64, accept_z=float("inf")), [1.0] * 12, 8, 0.0).verdict == "pass"  # 12 - 8 > 0: certain
    worse = [-1.0, 0.0, -1.0, 0.0, -1.0, 0.0, 0.0, -1.0, 0.0, -1.0]
    assert race(RaceSettings(1.64, accept_z=float("inf")), worse, 30, 0.0).verdict == "fail"  # rejects still race
    with pytest.raises(ValueError, match="accept z"):
        RaceSettings(1.64, accept_z=0.0)


async def test_the_race_scope_keeps_racing_to_the_screen_or_the_gate(tmp_path):
    """A clearly worse candidate: raced in the screen only with scope screen, at the gate only with scope gate."""
    records = {}
    for scope in ("screen", "gate"):
        settings = settings_for(tmp_path / scope, "train.steps_per_epoch=1", "train.batch_size=16",
                                "evaluation.screen_items=16", "evaluation.val_limit=16", "optimizer.use_slow_update=false",
                                "optimizer.use_meta_skill=false", "evaluation.eval_test=false", "env.split_ratio=[2,6,2]",
                                "evaluation.race_z=1.0", "evaluation.race_min_items=3", f"evaluation.race_scope={scope}")
        summary = await train(settings, backends=backends(world(["BAD."], _answer)))
        records[scope] = json.loads(Path(summary.run_dir, "history.json").read_text())[0]
    assert records["screen"]["screen"]["passed"] is records["gate"]["screen"]["passed"] is False
    assert "raced after" in records["screen"]["gate_reason"]
    assert "raced" not in records["gate"]["gate_reason"]  # the screen stopped when certain, not predicted
    assert records["gate"]["screen"]["evaluated"] > records["screen"]["screen"]["evaluated"]
    with pytest.raises(ConfigError, match="race_scope"):
        settings_for(tmp_path, "evaluation.race_scope=val")


async def test_with_race_scope_screen_the_val_gate_decides_only_when_certain(tmp_path):
    records = {}
    for scope in ("screen", "gate"):
        settings = settings_for(tmp_path / scope, "train.steps_per_epoch=1", "evaluation.val_limit=16",
                                "evaluation.screen_items=0", "optimizer.use_slow_update=false",
                                "optimizer.use_meta_skill=false", "evaluation.eval_test=false",
                                "env.split_ratio=[2,6,2]", "evaluation.race_z=1.64", "evaluation.race_min_items=3",
                                f"evaluation.race_scope={scope}")
        summary = await train(settings, backends=backends(world(["BAD."], _answer)))
        records[scope] = json.loads(Path(summary.run_dir, "history.json").read_text())[0]
    assert records["gate"]["gate_reason"].startswith("raced after")
    assert not records["screen"]["gate_reason"].startswith("raced")
    assert records["screen"]["gate_evaluated"] > records["gate"]["gate_evaluated"]
