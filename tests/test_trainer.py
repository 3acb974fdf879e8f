"""End-to-end training with the scripted backend on a toy task set.

The toy world: half the tasks pass when the skill says "Always say banana.",
the other half ("cherry") never pass, so reflection always has failures to
read. The scripted optimizer's reply is a pure function of its prompt:
first it proposes the good edit, then a harmful one, then a neutral one, then
nothing; the rejected-edits section of the prompt tells it how far it got.
"""

from __future__ import annotations

import json
from pathlib import Path


from skillopt_core.backends.scripted import Rule, ScriptedBackend
from skillopt_core.run.config import load_settings
from skillopt_core.run.api import eval_run, train_run

GOOD = {"op": "add", "content": "Always say banana.", "rationale": "banana tasks fail"}
HARMFUL = {"op": "replace", "target": "Always say banana.", "content": "Never answer.", "rationale": "shorter"}
NEUTRAL = {"op": "add", "content": "Be polite.", "rationale": "tone"}


def write_tasks(path: Path, n: int = 40) -> Path:
    with path.open("w") as fh:
        for i in range(n):
            word = "banana" if i % 2 == 0 else "cherry"
            fh.write(json.dumps({"id": f"t{i:02d}", "prompt": f"Question {i}: what is the magic word?",
                                 "judge": {"type": "contains", "value": word}}) + "\n")
    return path


def target_answer(request) -> str:
    skill = request.system or ""
    if "Never answer." in skill:
        return "I will not answer."
    return "banana" if "Always say banana." in skill else "apple"


def reflect_answer(request) -> str:
    prompt = request.prompt_text
    skill_part = prompt.split("## Examples")[0]
    rejected_part = prompt.split("rejected by validation")[-1] if "rejected by validation" in prompt else ""
    if "Always say banana." not in skill_part:
        edits = [GOOD]
    elif "Never answer." not in rejected_part:
        edits = [HARMFUL]
    elif "Be polite." not in rejected_part and "Be polite." not in skill_part:
        edits = [NEUTRAL]
    else:
        edits = []
    return json.dumps({"edits": edits})


def make_backend() -> ScriptedBackend:
    return ScriptedBackend(rules=[
        Rule(stage="reflect", response=reflect_answer),
        Rule(stage="slow_update", response=json.dumps({"guidance": "- Keep saying banana."})),
        Rule(stage="meta_skill", response=json.dumps({"notes": "- Replacing the banana rule hurt."})),
        Rule(stage="rollout", response=target_answer),
    ])


def settings_for(tmp_path: Path, *overrides: str):
    tmp_path.mkdir(parents=True, exist_ok=True)
    tasks = write_tasks(tmp_path / "tasks.jsonl")
    base = [
        "env.name=jsonl_tasks", f"env.data_path={tasks}", "env.split_ratio=[4,4,2]",
        "model.backend=scripted", "train.num_epochs=1", "train.batch_size=8", "train.steps_per_epoch=4",
        "train.workers=3", "optimizer.learning_rate=2", f"output.root={tmp_path / 'outputs'}",
        "output.run_id=run", "output.plot=true",
    ]
    return load_settings(None, base + list(overrides))


def backends(b):
    return {"target": b, "optimizer": b, "judge": b}


def comparable(history):
    """History without what legitimately differs between runs (wall time, and
    usage: a resumed run reuses cached rollouts instead of calling again)."""
    return [{k: v for k, v in h.items() if k not in ("timings", "usage")} for h in history]


async def test_training_accepts_good_edit_and_rejects_harmful_and_tie(tmp_path):
    summary = await train_run(settings_for(tmp_path), raw_backends=backends(make_backend()))
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
    summary = await train_run(settings_for(tmp_path), raw_backends=backends(make_backend()))
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


async def test_slow_update_writes_guidance_into_protected_block(tmp_path):
    summary = await train_run(settings_for(tmp_path), raw_backends=backends(make_backend()))
    comparison = json.loads(Path(summary.run_dir, "slow_update", "epoch_01", "comparison.json").read_text())
    assert comparison["action"] == "accept_ungated"
    assert len(comparison["groups"]["improved"]) > 0
    best = Path(summary.run_dir, "best_skill.md").read_text()
    assert "skillopt:protected" not in best  # ungated guidance does not replace the gated best
    state = json.loads(Path(summary.run_dir, "state.json").read_text())
    assert "Keep saying banana." in state["current_skill"]


async def test_identical_candidate_skips_gate_without_model_calls(tmp_path):
    backend = make_backend()
    backend.rules.insert(0, Rule(stage="reflect", response=json.dumps(
        {"edits": [{"op": "delete", "target": "text that is not in the skill"}]})))
    summary = await train_run(settings_for(tmp_path, "train.steps_per_epoch=1", "evaluation.eval_test=false",
                                           "optimizer.use_slow_update=false", "optimizer.use_meta_skill=false"),
                              raw_backends=backends(backend))
    history = json.loads(Path(summary.run_dir, "history.json").read_text())
    assert history[0]["action"] == "no_change"
    assert history[0]["outcomes"] == {"target_not_found": 1}
    assert history[0]["gate_evaluated"] == 0
    # Only the baseline val rollout and the train batch ran: no candidate evaluation.
    rollout_calls = [r for r in backend.history if r.stage == "rollout"]
    assert len(rollout_calls) == summary.usage["calls"] - 1  # the one reflect call


async def test_gate_stops_early_once_the_decision_is_certain(tmp_path):
    summary = await train_run(settings_for(tmp_path, "train.workers=1"), raw_backends=backends(make_backend()))
    history = json.loads(Path(summary.run_dir, "history.json").read_text())
    harmful = history[1]
    assert harmful["action"] == "reject" and harmful["gate_early_stopped"]
    assert harmful["gate_evaluated"] < harmful["gate_items"]


async def test_unchanged_skill_is_never_evaluated_twice(tmp_path):
    backend = make_backend()
    settings = settings_for(tmp_path, "evaluation.eval_test=false")
    first = await eval_run(settings, split="val", raw_backends=backends(backend))
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
    full = await train_run(settings_for(tmp_path / "a"), raw_backends=backends(make_backend()))
    stopped = await train_run(settings_for(tmp_path / "b", "budget.max_calls=45"), raw_backends=backends(make_backend()))
    assert stopped.status == "budget_exhausted"
    run_b = Path(stopped.run_dir)
    assert json.loads((run_b / "state.json").read_text())["global_step"] == stopped.steps_done < 4
    assert (run_b / "best_skill.md").is_file()
    resumed = await train_run(settings_for(tmp_path / "b", "budget.max_calls=100000"), resume=run_b,
                              raw_backends=backends(make_backend()))
    assert resumed.status == "completed"
    assert comparable(json.loads((run_b / "history.json").read_text())) == comparable(
        json.loads(Path(full.run_dir, "history.json").read_text()))
    assert resumed.best_val == full.best_val and resumed.best_test == full.best_test


async def test_eval_run_writes_summary(tmp_path):
    summary = await eval_run(settings_for(tmp_path), split="test", raw_backends=backends(make_backend()))
    run = Path(summary["run_dir"])
    assert run.name.startswith("eval-")
    assert (run / "results.json").is_file() and (run / "summary.json").is_file()
    assert summary["hard"] == 0.0  # the seed skill never says banana


async def test_skipped_task_records_are_reported(tmp_path):
    settings = settings_for(tmp_path, "train.steps_per_epoch=1", "evaluation.eval_test=false")
    with open(tmp_path / "tasks.jsonl", "a") as fh:
        fh.write("{not json\n")
    seen = []
    await train_run(settings, raw_backends=backends(make_backend()), subscribers=[seen.append])
    notes = [e for e in seen if e.kind == "notice"]
    assert notes and "1 task records skipped" in notes[0].text


async def test_gated_slow_update_is_rejected_when_it_does_not_help(tmp_path):
    settings = settings_for(tmp_path, "optimizer.slow_update_gate=true", "evaluation.eval_test=false")
    summary = await train_run(settings, raw_backends=backends(make_backend()))
    comparison = json.loads(Path(summary.run_dir, "slow_update", "epoch_01", "comparison.json").read_text())
    assert comparison["action"] == "reject" and comparison["gate"]["accept"] is False
    state = json.loads(Path(summary.run_dir, "state.json").read_text())
    assert "Keep saying banana." not in state["current_skill"]


SIGKILL_DRIVER = """
import asyncio, importlib.util, os, signal, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("toy", {module!r})
toy = importlib.util.module_from_spec(spec); spec.loader.exec_module(toy)
from skillopt_core.run.api import train_run
backend = toy.make_backend()
reflects = []
def kill_on_third(request):
    reflects.append(1)
    if len(reflects) == 3:
        os.kill(os.getpid(), signal.SIGKILL)  # the process dies mid-step, no cleanup
    return toy.reflect_answer(request)
backend.rules[0] = toy.Rule(stage="reflect", response=kill_on_third)
asyncio.run(train_run(toy.settings_for(Path({tmp!r})), raw_backends=toy.backends(backend)))
"""


async def test_sigkill_mid_step_then_resume_matches_uninterrupted(tmp_path):
    import signal
    import subprocess
    import sys

    full = await train_run(settings_for(tmp_path / "a"), raw_backends=backends(make_backend()))
    script = SIGKILL_DRIVER.format(module=__file__, tmp=str(tmp_path / "b"))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    run_b = tmp_path / "b" / "outputs" / "jsonl_tasks" / "run"
    assert json.loads((run_b / "state.json").read_text())["global_step"] == 2
    await train_run(settings_for(tmp_path / "b"), resume=run_b, raw_backends=backends(make_backend()))
    assert comparable(json.loads((run_b / "history.json").read_text())) == comparable(
        json.loads(Path(full.run_dir, "history.json").read_text()))


async def test_history_scores_are_full_val_means_except_early_rejects(tmp_path):
    summary = await train_run(settings_for(tmp_path, "train.workers=1"), raw_backends=backends(make_backend()))
    history = json.loads(Path(summary.run_dir, "history.json").read_text())
    accepted = history[0]
    assert accepted["val_candidate"] == accepted["val_after"] == summary.best_val
    assert history[1]["val_current"] == accepted["val_after"]
