"""bench/embedded_evidence.py: the shared rollout cache between its runs and its summary over seeds
(the runs themselves need the real model: tests/envs/test_unitqa.py has the short real-model test)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import embedded_evidence as study  # noqa: E402
from bench.embedded_pool import POOL  # noqa: E402


def rows(path: Path, keys: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"key": k, "response": k}) + "\n" for k in keys), encoding="utf-8")


def keys(path: Path) -> list[str]:
    return [json.loads(line)["key"] for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_run_starts_with_the_shared_cache_and_gives_back_only_new_rows(tmp_path):
    shared = tmp_path / "shared.jsonl"
    rows(shared, ["c:1", "s:1"])
    run = tmp_path / "unitqa" / "seed1"
    study.seed_cache(run, shared)
    assert keys(run / "rollout_cache.jsonl") == ["c:1", "s:1"]
    rows(run / "rollout_cache.jsonl", ["c:1", "s:1", "c:2", "s:2"])  # the run added two
    study.collect_cache(run, shared)
    study.collect_cache(run, shared)  # twice: nothing doubles
    assert keys(shared) == ["c:1", "s:1", "c:2", "s:2"]


def test_a_run_directory_that_has_its_own_cache_keeps_it(tmp_path):
    shared, run = tmp_path / "shared.jsonl", tmp_path / "run"
    rows(shared, ["c:1"])
    rows(run / "rollout_cache.jsonl", ["c:9"])
    study.seed_cache(run, shared)
    assert keys(run / "rollout_cache.jsonl") == ["c:9"]


def test_the_summary_is_the_mean_over_seeds_with_a_t_interval():
    made = [{"seed": s, "lift": lift, "accepted": int(lift > 0), "labels": labels}
            for s, (lift, labels) in enumerate([(0.2, ["helpful"]), (0.4, ["helpful", "neutral"]), (0.0, [])])]
    summary = study.report(made)
    assert summary["mean_lift"] == pytest.approx(0.2)
    low, high = summary["ci95"]
    assert low < 0.2 < high and high - 0.2 == pytest.approx(0.2 - low)
    assert summary["runs_accepting"] == 2
    assert summary["best_skills_with"] == {"helpful": 2, "neutral": 1, "harmful": 0}


def test_pool_labels_reads_the_lines_a_skill_holds():
    skill = f"# skill\n{POOL[0].text}\n{POOL[-1].text}\n"
    assert study.pool_labels(skill) == [POOL[0].label, POOL[-1].label]


def test_gate_decisions_are_read_per_pool_label_from_the_run_directory(tmp_path):
    events = [{"event": "gate_decided", "step": 1, "action": "reject"}, {"event": "gate_decided", "step": 2, "action": "accept"},
              {"event": "step_started", "step": 3}]
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    harmful = next(line for line in POOL if line.label == "harmful")
    helpful = next(line for line in POOL if line.label == "helpful")
    for step, text in ((1, harmful.text), (2, helpful.text)):
        folder = tmp_path / "steps" / f"step_{step:04d}"
        folder.mkdir(parents=True)
        (folder / "selected.json").write_text(json.dumps({"edits": [{"op": "add", "content": text}]}), encoding="utf-8")
    assert study.decisions(tmp_path) == [("harmful", "reject"), ("helpful", "accept")]


def test_invalid_optimizer_replies_are_counted_from_the_runs_events(tmp_path):
    events = [{"event": "patches_generated", "step": 1, "n_invalid_replies": 1},
              {"event": "patches_generated", "step": 2, "n_invalid_replies": 0}, {"event": "gate_decided", "step": 2}]
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    assert study.invalid_replies(tmp_path) == (1, 2)
