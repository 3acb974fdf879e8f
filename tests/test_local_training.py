"""A real training run and a real eval on the embedded local model
(SmolLM2-135M-Instruct via llama.cpp). Small on purpose: this checks that the
whole loop works with a real model, not that a 135M model improves a skill.

The runs are the `skillopt` CLI in a child process, as a person runs it, so a
native crash fails this test (its exit status is a signal) instead of killing
the pytest session."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.local_model, pytest.mark.timeout(900)]


def _skillopt(*args: str) -> dict:
    """Run ``skillopt ARGS --json`` in a child; its JSON summary, or a failure that says why."""
    done = subprocess.run([sys.executable, "-m", "skillopt_core.cli.main", *args, "--json"], cwd=REPO,
                          env={**os.environ, "SKILLOPT_NO_DOTENV": "1"}, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=840)
    if done.returncode < 0:
        pytest.fail(f"skillopt {args[0]} died with {signal.Signals(-done.returncode).name}:\n{done.stderr[-3000:]}")
    assert done.returncode == 0, f"skillopt {args[0]} exited {done.returncode}:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout)


def test_local_train_and_eval_write_a_valid_run_directory(tmp_path):
    common = ["--config", str(REPO / "configs" / "searchqa" / "local.yaml"), "--set", f"output.root={tmp_path}",
              "--set", "env.limit=12", "--set", "evaluation.test_limit=2", "--set", "evaluation.val_limit=2",
              "--set", "model.target_max_tokens=24", "--set", "model.optimizer_max_tokens=160"]
    summary = _skillopt("train", *common, "--set", "train.steps_per_epoch=1", "--set", "train.batch_size=2",
                        "--set", "output.run_id=local")
    assert summary["status"] == "completed" and summary["steps_done"] == 1
    run = Path(summary["run_dir"])
    history = json.loads((run / "history.json").read_text())
    assert len(history) == 1 and history[0]["usage"]["target"]["rollout"]["calls"] >= 1
    assert history[0]["usage"]["optimizer"]["reflect"]["calls"] >= 1 or history[0]["train_score"] == 1.0
    for name in ("best_skill.md", "events.jsonl", "history.png", "summary.json", "skills/step_0001.md"):
        assert (run / name).is_file(), name

    result = _skillopt("eval", *common, "--skill", str(run / "best_skill.md"), "--set", "output.run_id=ev")
    assert result["n_items"] == 2 and 0.0 <= result["soft"] <= 1.0
    assert (Path(result["run_dir"]) / "results.json").is_file()
