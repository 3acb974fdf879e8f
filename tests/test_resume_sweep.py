"""Stop-and-resume at every call of a 2-epoch run gives the uninterrupted run's
history, best skill and scores (budget stops at every call index, including
inside the epoch boundaries and the final test evaluation)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from toy_world import backends, comparable, make_backend, settings_for

from skillopt_core.run.api import train

SWEEP = ("train.num_epochs=2", "train.steps_per_epoch=2", "train.batch_size=4", "train.workers=2",
         "evaluation.val_limit=6", "evaluation.test_limit=4", "output.plot=false")


def outcome(run_dir: Path) -> dict:
    summary = json.loads((run_dir / "summary.json").read_text())
    state = json.loads((run_dir / "state.json").read_text())
    return {
        "history": comparable(json.loads((run_dir / "history.json").read_text())),
        "best_skill": (run_dir / "best_skill.md").read_text(),
        "current_skill": state["current_skill"], "meta_notes": state["meta_notes"], "rejected": state["rejected"],
        "scores": {k: summary[k] for k in ("status", "steps_done", "initial_val", "best_val", "initial_test",
                                            "best_test", "best_source", "accepted", "rejected")},
        "slow_update": {p.parent.name: {k: v for k, v in json.loads(p.read_text()).items() if k != "gate"} | {
            "gate": {k: v for k, v in json.loads(p.read_text()).get("gate", {}).items()}}
            for p in sorted((run_dir / "slow_update").glob("*/comparison.json"))},
        "events": [e["event"] for e in map(json.loads, (run_dir / "events.jsonl").read_text().splitlines())
                   if e["event"] in ("epoch_end", "best_changed")][-4:],
    }


# Gated: the slow update is validated. Ungated: it changes the current skill
# before the meta notes are written, the case that once applied it twice.
@pytest.mark.parametrize("gate", ["true", "false"])
async def test_resume_after_a_stop_at_every_call_matches_the_uninterrupted_run(tmp_path, gate):
    sweep = (*SWEEP, f"optimizer.slow_update_gate={gate}")
    full = await train(settings_for(tmp_path / "full", *sweep), backends=backends(make_backend()))
    expected = outcome(Path(full.run_dir))
    total_calls = full.usage["calls"]
    assert total_calls > 30 and expected["scores"]["status"] == "completed"
    for limit in range(1, total_calls):
        where = tmp_path / f"b{limit}"
        stopped = await train(settings_for(where, *sweep, f"budget.max_calls={limit}"), backends=backends(make_backend()))
        assert stopped.status == "budget_exhausted", limit
        await train(settings_for(where, *sweep), resume=stopped.run_dir, backends=backends(make_backend()))
        assert outcome(Path(stopped.run_dir)) == expected, f"stopped after call {limit}"
