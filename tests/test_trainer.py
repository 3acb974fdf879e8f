"""End-to-end training with the scripted backend on the toy world (tests/toy_world.py)."""

from __future__ import annotations

import json
from pathlib import Path

from toy_world import GOOD, Rule, backends, comparable, make_backend, reflect_answer, settings_for  # noqa: F401

from skillopt_core.run.api import evaluate, train


async def test_training_accepts_good_edit_and_rejects_harmful_and_tie(tmp_path):
    summary = await train(settings_for(tmp_path), backends=backends(make_backend()))
    history = json.loads(Path(summary.run_dir, "history.json").read_text())
    assert [h["action"] for h in history] == ["accept", "reject", "reject", "no_change"]
    assert history[0]["val_candidate"] > history[0]["val_current"]
    assert history[1]["val_candidate"] < history[1]["val_current"]
    assert "tie" in history[2]["gate_reason"]
    best = Path(summary.run_dir, "best_skill.md").read_text()
    assert "Always say banana." in best and "Never answer." not in best and "Be polite." not in best
    assert summary.status == "completed"
    assert summary.best_test > summary.initial_test


async def test_run_directory_matches_the_layout(tmp_path):
    two_epochs = settings_for(tmp_path, "train.num_epochs=2", "train.steps_per_epoch=2")
    summary = await train(two_epochs, backends=backends(make_backend()))
    run = Path(summary.run_dir)
    assert run == tmp_path / "outputs" / "jsonl_tasks" / "run"
    for name in ("rollouts.json", "patches.json", "selected.json", "candidate.md", "gate.json"):
        assert (run / "steps" / "step_0001" / name).is_file(), name
    for step in range(0, 5):
        assert (run / "skills" / f"step_{step:04d}.md").is_file()
    for name in ("best_skill.md", "history.json", "events.jsonl", "history.png", "summary.json", "config.yaml", "state.json"):
        assert (run / name).is_file(), name
    assert (run / "slow_update" / "epoch_01" / "comparison.json").is_file()
    assert (run / "meta_skill" / "epoch_01" / "notes.md").read_text().strip() == "- Replacing the banana rule hurt."
    record = json.loads((run / "history.json").read_text())[0]
    for key in ("step", "train_score", "val_current", "val_candidate", "action", "n_patches", "n_selected",
                "budget", "usage", "timings", "gate_evaluated", "outcomes"):
        assert key in record, key
    assert record["usage"]["target"]["rollout"]["calls"] > 0
    gate = json.loads((run / "steps" / "step_0001" / "gate.json").read_text())
    assert gate["accept"] is True and set(gate["deltas"]) <= {f"t{i:02d}" for i in range(40)}
    selected = json.loads((run / "steps" / "step_0001" / "selected.json").read_text())
    assert selected["edits"][0]["status"] == "applied"
    kinds = [json.loads(line)["event"] for line in (run / "events.jsonl").read_text().splitlines()]
    assert kinds[0] == "run_started" and kinds[-1] == "run_end" and "gate_decided" in kinds


async def test_ungated_slow_update_writes_guidance_into_protected_block(tmp_path):
    settings = settings_for(tmp_path, "train.num_epochs=2", "train.steps_per_epoch=2", "optimizer.slow_update_gate=false")
    summary = await train(settings, backends=backends(make_backend()))
    comparison = json.loads(Path(summary.run_dir, "slow_update", "epoch_01", "comparison.json").read_text())
    assert comparison["action"] == "accept_ungated"
    assert len(comparison["groups"]["improved"]) > 0
    best = Path(summary.run_dir, "best_skill.md").read_text()
    assert "skillopt:protected" not in best  # guidance that scores no higher does not become the best
    state = json.loads(Path(summary.run_dir, "state.json").read_text())
    assert "Keep saying banana." in state["current_skill"]
    # After the last epoch an ungated slow update would change nothing anyone uses: it does not run.
    assert not Path(summary.run_dir, "slow_update", "epoch_02").exists()


async def test_identical_candidate_skips_gate_without_model_calls(tmp_path):
    backend = make_backend()
    backend.rules.insert(0, Rule(stage="reflect", response=json.dumps(
        {"edits": [{"op": "delete", "target": "text that is not in the skill"}]})))
    summary = await train(settings_for(tmp_path, "train.steps_per_epoch=1", "evaluation.eval_test=false",
                                           "optimizer.use_slow_update=false", "optimizer.use_meta_skill=false"),
                              backends=backends(backend))
    history = json.loads(Path(summary.run_dir, "history.json").read_text())
    assert history[0]["action"] == "no_change"
    assert history[0]["outcomes"] == {"target_not_found": 1}
    assert history[0]["gate_evaluated"] == 0
    # Only the baseline val rollout and the train batch ran: no candidate evaluation.
    rollout_calls = [r for r in backend.history if r.stage == "rollout"]
    assert len(rollout_calls) == summary.usage["calls"] - 1  # the one reflect call


async def test_gate_stops_early_once_the_decision_is_certain(tmp_path):
    summary = await train(settings_for(tmp_path, "train.workers=1"), backends=backends(make_backend()))
    history = json.loads(Path(summary.run_dir, "history.json").read_text())
    harmful = history[1]
    assert harmful["action"] == "reject" and harmful["gate_early_stopped"]
    assert harmful["gate_evaluated"] < harmful["gate_items"]


async def test_unchanged_skill_is_never_evaluated_twice(tmp_path):
    backend = make_backend()
    settings = settings_for(tmp_path, "evaluation.eval_test=false")
    first = await evaluate(settings, split="val", backends=backends(backend))
    calls_after_first = len(backend.history)
    from skillopt_core.evaluation.rollout import RolloutCache, run_rollouts
    from skillopt_core.envs import create_env
    from skillopt_core.skill.document import Skill

    env = create_env("jsonl_tasks", {"data_path": str(tmp_path / "tasks.jsonl"), "limit": None, "options": {}})
    cache = RolloutCache(tmp_path / "cache.jsonl")
    skill = Skill.parse(env.seed_skill)
    tasks = env.load_tasks()[:5]
    await run_rollouts(env, backend, skill, tasks, cache=cache)
    again = await run_rollouts(env, backend, skill, tasks, cache=RolloutCache(tmp_path / "cache.jsonl"))
    assert all(r.cached for r in again)
    assert len(backend.history) == calls_after_first + 5
    assert first["n_items"] > 0


async def test_budget_stop_is_clean_and_resume_matches_uninterrupted(tmp_path):
    full = await train(settings_for(tmp_path / "a"), backends=backends(make_backend()))
    stopped = await train(settings_for(tmp_path / "b", "budget.max_calls=45"), backends=backends(make_backend()))
    assert stopped.status == "budget_exhausted"
    run_b = Path(stopped.run_dir)
    assert json.loads((run_b / "state.json").read_text())["global_step"] == stopped.steps_done < 4
    assert (run_b / "best_skill.md").is_file()
    resumed = await train(settings_for(tmp_path / "b", "budget.max_calls=100000"), resume=run_b,
                              backends=backends(make_backend()))
    assert resumed.status == "completed"
    assert comparable(json.loads((run_b / "history.json").read_text())) == comparable(
        json.loads(Path(full.run_dir, "history.json").read_text()))
    assert resumed.best_val == full.best_val and resumed.best_test == full.best_test


async def test_eval_run_writes_summary(tmp_path):
    summary = await evaluate(settings_for(tmp_path), split="test", backends=backends(make_backend()))
    run = Path(summary["run_dir"])
    assert run.name.startswith("eval-")
    assert (run / "results.json").is_file() and (run / "summary.json").is_file()
    assert summary["hard"] == 0.0  # the seed skill never says banana


async def test_skipped_task_records_are_reported(tmp_path):
    settings = settings_for(tmp_path, "train.steps_per_epoch=1", "evaluation.eval_test=false")
    with open(tmp_path / "tasks.jsonl", "a") as fh:
        fh.write("{not json\n")
    seen = []
    await train(settings, backends=backends(make_backend()), subscribers=[seen.append])
    notes = [e for e in seen if e.kind == "notice"]
    assert notes and "1 task records skipped" in notes[0].text


async def test_gated_slow_update_is_rejected_when_it_does_not_help(tmp_path):
    settings = settings_for(tmp_path, "optimizer.slow_update_gate=true", "evaluation.eval_test=false")
    summary = await train(settings, backends=backends(make_backend()))
    comparison = json.loads(Path(summary.run_dir, "slow_update", "epoch_01", "comparison.json").read_text())
    assert comparison["action"] == "reject" and comparison["gate"]["accept"] is False
    state = json.loads(Path(summary.run_dir, "state.json").read_text())
    assert "Keep saying banana." not in state["current_skill"]


SIGKILL_DRIVER = """
import asyncio, importlib.util, os, signal, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("toy", {module!r})
toy = importlib.util.module_from_spec(spec); spec.loader.exec_module(toy)
from skillopt_core.run.api import train
backend = toy.make_backend()
reflects = []
def kill_on_third(request):
    reflects.append(1)
    if len(reflects) == 3:
        os.kill(os.getpid(), signal.SIGKILL)  # the process dies mid-step, no cleanup
    return toy.reflect_answer(request)
backend.rules[0] = toy.Rule(stage="reflect", response=kill_on_third)
asyncio.run(train(toy.settings_for(Path({tmp!r})), backends=toy.backends(backend)))
"""


async def test_sigkill_mid_step_then_resume_matches_uninterrupted(tmp_path):
    import signal
    import subprocess
    import sys

    full = await train(settings_for(tmp_path / "a"), backends=backends(make_backend()))
    script = SIGKILL_DRIVER.format(module=str(Path(__file__).with_name("toy_world.py")), tmp=str(tmp_path / "b"))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    run_b = tmp_path / "b" / "outputs" / "jsonl_tasks" / "run"
    assert json.loads((run_b / "state.json").read_text())["global_step"] == 2
    await train(settings_for(tmp_path / "b"), resume=run_b, backends=backends(make_backend()))
    assert comparable(json.loads((run_b / "history.json").read_text())) == comparable(
        json.loads(Path(full.run_dir, "history.json").read_text()))


async def test_history_scores_are_full_val_means_except_early_rejects(tmp_path):
    summary = await train(settings_for(tmp_path, "train.workers=1"), backends=backends(make_backend()))
    history = json.loads(Path(summary.run_dir, "history.json").read_text())
    accepted = history[0]
    assert accepted["val_candidate"] == accepted["val_after"] == summary.best_val
    assert history[1]["val_current"] == accepted["val_after"]
