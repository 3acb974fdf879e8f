"""Several candidates per step with successive halving, the patience stop and
the val subsample, through the trainer on the toy world (scripted backend:
control flow only, never evidence that training improves a skill)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from toy_world import backends, events_of, question_number, settings_for

from skillopt_core.backends.scripted import Rule, ScriptedBackend
from skillopt_core.run.api import train
from skillopt_core.run.config import ConfigError


def world(batches: list[list[str]], answer) -> ScriptedBackend:
    """Reflection proposes the first batch of edits none of which is in the skill or
    rejected yet (all of it in one reply); ``answer(i, skill)`` answers question i."""
    def reflect(request):
        skill = request.prompt_text.split("## Examples")[0]
        rejected = request.prompt_text.split("rejected by validation")[-1] if "rejected by validation" in request.prompt_text else ""
        for edits in batches:
            if not any(e in skill or e in rejected for e in edits):
                return json.dumps({"edits": [{"op": "add", "content": e} for e in edits]})
        return json.dumps({"edits": []})

    def rollout(request):
        return answer(question_number(request), request.system or "")

    return ScriptedBackend(rules=[Rule(stage="reflect", response=reflect), Rule(stage="rollout", response=rollout)])


def good_alone(i: int, skill: str) -> str:
    """"BAD." spoils every answer; "GOOD." answers every banana question; else a quarter pass."""
    if "BAD." in skill:
        return "apple"
    if "GOOD." in skill:
        return "banana"
    return "banana" if i % 4 == 0 else "apple"


def loop(tmp_path: Path, *extra: str):
    return settings_for(tmp_path, "evaluation.screen_items=6", "evaluation.remeasure=false",
                        "optimizer.use_slow_update=false", "optimizer.use_meta_skill=false",
                        "optimizer.rank_with_model=false", "evaluation.eval_test=false",
                        "train.steps_per_epoch=1", *extra)


async def test_one_candidate_per_step_keeps_the_combined_edits_and_the_gate_rejects_them(tmp_path):
    summary = await train(loop(tmp_path), backends=backends(world([["BAD.", "GOOD."]], good_alone)))
    record = json.loads(Path(summary.run_dir, "history.json").read_text())[0]
    assert record["action"] == "reject" and "halving" not in record  # written only when the step halved
    assert not Path(summary.run_dir, "steps", "step_0001", "halving.json").exists()


async def test_successive_halving_picks_the_candidate_that_does_best_on_the_train_items(tmp_path):
    summary = await train(loop(tmp_path, "train.candidates_per_step=3"),
                          backends=backends(world([["BAD.", "GOOD."]], good_alone)))
    record = json.loads(Path(summary.run_dir, "history.json").read_text())[0]
    halving = json.loads(Path(summary.run_dir, "steps", "step_0001", "halving.json").read_text())
    # candidates: both edits together, then each alone
    assert [[e["content"] for e in c] for c in halving["candidates"]] == [["BAD.", "GOOD."], ["BAD."], ["GOOD."]]
    assert [r["items"] for r in halving["rungs"]] == [3, 6]       # twice as many items each rung; the last is the screen's
    assert len(halving["rungs"][0]["kept"]) == 2 and halving["rungs"][1]["kept"] == [3]
    assert halving["winner"] == 3 and record["halving"] == halving
    assert record["action"] == "accept" and [e["content"] for e in record["selected_edits"]] == ["GOOD."]
    assert "GOOD." in Path(summary.run_dir, "steps", "step_0001", "candidate.md").read_text()
    assert "BAD." not in Path(summary.run_dir, "best_skill.md").read_text()
    labels = [e.get("label", "") for e in events_of(summary.run_dir) if e["event"] == "rollout_started"]
    assert sum(label.startswith("halving:") for label in labels) == 3 + 2


async def test_a_single_distinct_candidate_skips_the_halving(tmp_path):
    summary = await train(loop(tmp_path, "train.candidates_per_step=4"), backends=backends(world([["GOOD."]], good_alone)))
    record = json.loads(Path(summary.run_dir, "history.json").read_text())[0]
    assert record["halving"]["winner"] == 1 and record["halving"]["rungs"] == [] and record["action"] == "accept"


async def test_patience_stops_after_that_many_gates_in_a_row_that_kept_the_current_skill(tmp_path):
    bad = [["B1."], ["B2."], ["B3."], ["B4."]]
    answer = lambda i, s: "apple" if any(b[0] in s for b in bad) else "banana"  # noqa: E731
    summary = await train(loop(tmp_path, "train.steps_per_epoch=4", "train.patience=2", "train.patience_counts=all"),
                          backends=backends(world(bad, answer)))
    history = json.loads(Path(summary.run_dir, "history.json").read_text())
    assert [h["action"] for h in history] == ["reject", "reject"]
    assert summary.status == "completed" and summary.steps_done == 2 and summary.total_steps == 4
    notes = [e["text"] for e in events_of(summary.run_dir) if e["event"] == "notice"]
    assert any("patience: 2 step gates in a row did not accept" in n for n in notes)
    again = await train(loop(tmp_path / "again", "train.steps_per_epoch=4"), backends=backends(world(bad, answer)))
    assert again.steps_done == 4  # without patience the same run goes on to the end


async def test_the_val_subsample_gates_on_that_many_val_items(tmp_path):
    summary = await train(loop(tmp_path, "evaluation.val_limit=3"), backends=backends(world([["GOOD."]], good_alone)))
    record = json.loads(Path(summary.run_dir, "history.json").read_text())[0]
    assert record["gate_items"] == 3 and record["gate_evaluated"] <= 3
    full = await train(loop(tmp_path / "full"), backends=backends(world([["GOOD."]], good_alone)))
    assert json.loads(Path(full.run_dir, "history.json").read_text())[0]["gate_items"] > 3


@pytest.mark.parametrize("setting,message", [
    ("train.candidate_per_step=3", "unknown key 'train.candidate_per_step'"),
    ("train.candidates_per_step=0", "candidates_per_step"),
    ("train.patience=0", "patience"),
    ("train.patience_counts=close", "patience_counts"),
    ("optimizer.judge_check=regex", "judge_check"),
])
def test_wrong_settings_are_clear_errors(tmp_path, setting, message):
    with pytest.raises(ConfigError, match=message):
        loop(tmp_path, setting)


async def test_the_preflight_estimate_counts_the_halving_rollouts(tmp_path):
    from skillopt_core.run.estimate import halving_rollouts

    assert halving_rollouts(1, 6) == 0 and halving_rollouts(2, 6) == 12 and halving_rollouts(4, 20) == 4 * 10 + 2 * 10
    summary = await train(loop(tmp_path, "train.candidates_per_step=3"),
                          backends=backends(world([["BAD.", "GOOD."]], good_alone)))
    done = [e for e in events_of(summary.run_dir) if e["event"] == "rollout_done" and e.get("label", "").startswith("halving:")]
    assert sum(e["n_items"] - e["cached"] for e in done) == halving_rollouts(3, 6) == 15


def test_patience_on_clear_rejects_counts_screen_and_early_rejects_and_a_close_reject_ends_the_streak():
    from types import SimpleNamespace

    from skillopt_core.run.trainer import Trainer

    screened = {"action": "reject", "screen": {"passed": False}, "gate_early_stopped": False}
    raced = {"action": "reject", "screen": {"passed": True}, "gate_early_stopped": True}
    close = {"action": "reject", "screen": {"passed": True}, "gate_early_stopped": False}
    same = {"action": "no_change", "screen": None, "gate_early_stopped": False}
    state = SimpleNamespace(history=[{"action": "accept"}, screened, close, raced, same, screened])
    assert Trainer._non_accepting_streak(state) == 5
    assert Trainer._non_accepting_streak(state, clear_only=True) == 3
    assert Trainer._non_accepting_streak(SimpleNamespace(history=[close]), clear_only=True) == 0
