"""The best skill is only ever replaced by a skill with a higher, fully
evaluated val score, whatever made it current (issue: best_skill.md got
worse after an ungated slow update followed by a gated accept)."""

from __future__ import annotations

import json
from pathlib import Path

from toy_world import backends, question_number, settings_for

from skillopt_core.backends.scripted import Rule, ScriptedBackend
from skillopt_core.run.api import train

GOOD = {"op": "add", "content": "Always say banana."}
PARTIAL = {"op": "add", "content": "PARTIAL FIX: answer some questions."}


def world(guidance: str) -> ScriptedBackend:
    """Step 1 learns the banana rule (val ~0.5); the slow update writes
    ``guidance``; later steps propose PARTIAL, which helps a skill hurt by HARM
    (val 0 → ~0.25) but is worse than the banana rule alone."""

    def target(request) -> str:
        skill, i = request.system or "", question_number(request)
        if "HARM" in skill:
            return "banana" if "PARTIAL FIX" in skill and i % 4 == 0 else "nothing"
        if "GREAT" in skill:
            return "banana" if i % 2 == 0 else "cherry"
        return "banana" if "Always say banana." in skill else "apple"

    def reflect(request) -> str:
        skill_part = request.prompt_text.split("## Examples")[0]
        if "Always say banana." not in skill_part:
            return json.dumps({"edits": [GOOD]})
        if "PARTIAL FIX" not in skill_part:
            return json.dumps({"edits": [PARTIAL]})
        return json.dumps({"edits": []})

    return ScriptedBackend(rules=[
        Rule(stage="reflect", response=reflect),
        Rule(stage="slow_update", response=json.dumps({"guidance": guidance})),
        Rule(stage="meta_skill", response=json.dumps({"notes": "- notes"})),
        Rule(stage="rollout", response=target),
    ])


def two_epochs(tmp_path: Path, *extra: str):
    return settings_for(tmp_path, "train.num_epochs=2", "train.steps_per_epoch=1", "evaluation.eval_test=false", *extra)


async def test_gated_accept_below_the_best_does_not_replace_it(tmp_path):
    summary = await train(two_epochs(tmp_path, "optimizer.slow_update_gate=false"), backends=backends(world("- HARM: refuse.")))
    history = json.loads(Path(summary.run_dir, "history.json").read_text())
    assert [h["action"] for h in history] == ["accept", "accept"]
    # Step 2's candidate beat the (harmed) current skill, but not the best one.
    assert history[1]["val_candidate"] > history[1]["val_current"]
    assert history[1]["val_candidate"] < history[0]["val_after"]
    best = Path(summary.run_dir, "best_skill.md").read_text()
    assert "Always say banana." in best and "HARM" not in best and "PARTIAL FIX" not in best
    assert summary.best_val == history[0]["val_after"]
    assert summary.best_source == history[1]["best_source"] == "step 1"


async def test_ungated_slow_update_becomes_best_only_once_scored_higher(tmp_path):
    summary = await train(two_epochs(tmp_path, "optimizer.slow_update_gate=false"), backends=backends(world("- GREAT: answer well.")))
    assert summary.best_source == "slow update after epoch 1"
    assert "GREAT" in Path(summary.run_dir, "best_skill.md").read_text()
    assert summary.best_val == 1.0 and "full val 1.000 > previous best" in summary.best_reason


async def test_slow_update_is_gated_by_default_and_a_harmful_one_is_rejected(tmp_path):
    summary = await train(two_epochs(tmp_path), backends=backends(world("- HARM: refuse.")))
    comparison = json.loads(Path(summary.run_dir, "slow_update", "epoch_01", "comparison.json").read_text())
    assert comparison["action"] == "reject" and comparison["gate"]["accept"] is False
    state = json.loads(Path(summary.run_dir, "state.json").read_text())
    assert "HARM" not in state["current_skill"] and "HARM" not in Path(summary.run_dir, "best_skill.md").read_text()


async def test_gated_slow_update_after_the_last_epoch_can_still_become_best(tmp_path):
    settings = settings_for(tmp_path, "train.num_epochs=1", "train.steps_per_epoch=1", "evaluation.eval_test=false")
    summary = await train(settings, backends=backends(world("- GREAT: answer well.")))
    assert summary.best_source == "slow update after epoch 1" and summary.best_val == 1.0


async def test_every_history_record_names_the_best_skill_and_why(tmp_path):
    summary = await train(two_epochs(tmp_path, "optimizer.slow_update_gate=false"), backends=backends(world("- HARM: refuse.")))
    history = json.loads(Path(summary.run_dir, "history.json").read_text())
    assert all(h["best_source"] and h["best_reason"] for h in history)
    events = [json.loads(line) for line in Path(summary.run_dir, "events.jsonl").read_text().splitlines()]
    assert [e["source"] for e in events if e["event"] == "best_changed"] == ["step 1"]
