"""Multi-epoch runs: what crosses epoch boundaries, and no work after the last one."""

from __future__ import annotations

import json
from pathlib import Path

from toy_world import backends, events_of, make_backend, question_number, settings_for

from skillopt_core.backends.scripted import Rule
from skillopt_core.run.api import train


def reflect_prompts(backend, step_from: int = 0):
    return [r.prompt_text for r in backend.history if r.stage == "reflect"][step_from:]


async def test_rejected_edits_are_remembered_across_epochs(tmp_path):
    backend = make_backend()
    settings = settings_for(tmp_path, "train.num_epochs=2", "train.steps_per_epoch=2", "evaluation.eval_test=false")
    summary = await train(settings, backends=backends(backend))
    history = json.loads(Path(summary.run_dir, "history.json").read_text())
    assert [h["action"] for h in history[:2]] == ["accept", "reject"]  # the harmful edit, in epoch 1
    epoch2 = [r.prompt_text for r in backend.history if r.stage == "reflect"][2:]
    assert epoch2 and all("Never answer." in p.split("rejected by validation")[1] for p in epoch2)


async def test_edits_that_failed_to_apply_are_shown_with_why(tmp_path):
    backend = make_backend()
    usual = backend.rules[0].response
    first = json.dumps({"edits": [{"op": "delete", "target": "a sentence the skill does not have"}]})
    seen = []

    def reflect(request):
        seen.append(request)
        return first if len(seen) == 1 else usual(request)

    backend.rules[0] = Rule(stage="reflect", response=reflect)
    summary = await train(settings_for(tmp_path, "train.steps_per_epoch=2", "evaluation.eval_test=false"),
                          backends=backends(backend))
    second = [r.prompt_text for r in backend.history if r.stage == "reflect"][1]
    section = second.split("could not be applied")[1]
    assert "a sentence the skill does not have" in section and "not found" in section
    assert json.loads(Path(summary.run_dir, "state.json").read_text())["unapplied"][0]["status"] == "target_not_found"


async def test_no_meta_notes_and_no_val_rollouts_after_the_last_epoch(tmp_path):
    backend = make_backend()
    settings = settings_for(tmp_path, "train.num_epochs=2", "train.steps_per_epoch=2", "optimizer.slow_update_gate=false")
    summary = await train(settings, backends=backends(backend))
    assert [r.stage for r in backend.history].count("meta_skill") == 1
    assert (Path(summary.run_dir) / "meta_skill" / "epoch_01" / "notes.md").exists()
    assert not (Path(summary.run_dir) / "meta_skill" / "epoch_02").exists()
    events = events_of(summary.run_dir)
    last_epoch_end = max(i for i, e in enumerate(events) if e["event"] == "epoch_end")
    after = [e for e in events[last_epoch_end:] if e["event"] == "rollout_started"]
    assert after and all(e["phase"] == "test" for e in after)
    slow_after_last = [e for e in events if e["event"] == "rollout_started" and e["phase"] == "slow_update"]
    assert len(slow_after_last) == 2  # epoch 1 only: start and end skill


async def test_epoch_boundaries_are_counted_once_each(tmp_path):
    settings = settings_for(tmp_path, "train.num_epochs=3", "train.steps_per_epoch=1", "evaluation.eval_test=false")
    summary = await train(settings, backends=backends(make_backend()))
    ends = [e["epoch"] for e in events_of(summary.run_dir) if e["event"] == "epoch_end"]
    assert ends == [1, 2, 3]
    assert json.loads(Path(summary.run_dir, "state.json").read_text())["epochs_done"] == 3


def rollouts_take_time(request) -> float:
    """Rollouts that take time, so several are in flight at once (the backend counts the peak)."""
    return 0.01 * (1 + question_number(request) % 3) if request.stage == "rollout" else 0.0


async def test_the_early_stopping_gate_keeps_workers_calls_in_flight(tmp_path):
    backend = make_backend()
    backend.delay = rollouts_take_time
    seen = []
    summary = await train(settings_for(tmp_path, "train.workers=3", "train.steps_per_epoch=2", "evaluation.eval_test=false"),
                          backends=backends(backend), subscribers=[seen.append])
    history = json.loads(Path(summary.run_dir, "history.json").read_text())
    assert history[1]["action"] == "reject" and history[1]["gate_early_stopped"]
    assert history[1]["gate_evaluated"] < history[1]["gate_items"]
    assert backend.peak_in_flight == 3 and backend.in_flight == 0
