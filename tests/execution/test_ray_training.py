"""A training run with ``execution.executor=ray`` on a local Ray instance
(2 CPUs) gives the same history, rollouts and best skill as the local
executor for the same seeds: SpreadsheetBench's sample, whose checks execute
each reply's solution.py, with the scripted target rebuilt in the Ray workers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "envs"))

import pytest  # noqa: E402

from bench_run import SUM_SOLUTION as SUM_D, train_offline  # noqa: E402

pytestmark = pytest.mark.ray

RULES = [
    {"stage": "rollout", "match": "sum of columns B and C", "response": SUM_D},
    {"stage": "rollout", "match": "Check your final answer", "response": "```python\nraise SystemExit(3)\n```"},
    {"stage": "rollout", "response": SUM_D.replace("4).value", "3).value")},
]


def without_timings(history: list[dict]) -> list[dict]:
    out = []
    for record in history:
        record = {k: v for k, v in record.items() if k != "timings"}
        for stages in record.get("usage", {}).values():
            for bucket in stages.values():
                bucket.pop("latency_s", None)
        out.append(record)
    return out


def run(tmp_path: Path, capsys, executor: str) -> Path:
    _, run_dir = train_offline("spreadsheetbench/local", tmp_path / executor, capsys, RULES,
                               f"execution.executor={executor}", "execution.max_retries=1",
                               "evaluation.eval_test=false", "optimizer.use_slow_update=false")
    return run_dir


def test_ray_executor_gives_the_same_history_as_local(ray_instance, tmp_path, capsys) -> None:
    local, ray = run(tmp_path, capsys, "local"), run(tmp_path, capsys, "ray")
    read = lambda d, name: json.loads((d / name).read_text(encoding="utf-8"))  # noqa: E731
    assert without_timings(read(ray, "history.json")) == without_timings(read(local, "history.json"))
    for step in ("step_0001", "step_0002"):
        assert read(ray, f"steps/{step}/rollouts.json") == read(local, f"steps/{step}/rollouts.json")
    assert (ray / "best_skill.md").read_text() == (local / "best_skill.md").read_text()
    same = ("status", "steps_done", "initial_val", "best_val", "accepted", "rejected", "failed_items")
    assert {k: read(ray, "summary.json")[k] for k in same} == {k: read(local, "summary.json")[k] for k in same}
    assert any(r["soft"] > 0 for r in read(ray, "steps/step_0001/rollouts.json"))  # checks ran, some passed
