"""bench/overhead.py: the time decomposition, and a tiny run of the benchmark."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import overhead  # noqa: E402


def test_breakdown_cuts_wall_time_by_calls_in_flight():
    calls = [(0.0, 1.0, "target/rollout"), (0.0, 1.0, "target/rollout"), (1.5, 2.0, "optimizer/rank")]
    result = overhead.breakdown(calls, 0.0, 2.5, workers=2)
    assert result["seconds_by_calls_in_flight"] == {"0": 1.0, "1": 0.5, "2": 1.0}
    # excess = wall - calls x latency / workers = 2.5 - 2.5 / 2
    assert result["excess_s_by_stage"] == {"engine (no call in flight)": 1.0, "optimizer/rank": 0.25}


def test_more_calls_than_workers_count_as_negative_excess():
    calls = [(0.0, 1.0, "optimizer/reflect")] * 4
    assert overhead.breakdown(calls, 0.0, 1.0, workers=2)["excess_s_by_stage"] == {"optimizer/reflect": -1.0}


def test_a_tiny_run_reports_its_ratio_as_json(tmp_path, capsys):
    code = overhead.main(["--json", "--latency", "0.01", "--set", "train.num_epochs=1",
                          "--set", "train.steps_per_epoch=1", "--set", "train.batch_size=8"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    # Every call made is in the run's ledger, except those an early stop cancelled in flight (how many
    # depends on timing; the ledger leaves them out, skillopt_core/run/budget.py).
    assert result["status"] == "completed" and result["ledger_calls"] > 0
    assert result["calls"] == result["ledger_calls"] + result["cancelled_calls"]
    assert result["ratio"] == pytest.approx(result["wall_s"] / (result["calls"] * 0.01 / result["workers"]))
    assert sum(result["seconds_by_calls_in_flight"].values()) == pytest.approx(result["wall_s"], rel=1e-6)
    assert sum(result["excess_s_by_stage"].values()) == pytest.approx(
        result["wall_s"] - result["calls"] * result["mean_call_s"] / result["workers"], abs=1e-6)
