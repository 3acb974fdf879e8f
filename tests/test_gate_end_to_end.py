"""The three gate policies, end to end through the trainer, on candidates
where they disagree: a one-item gain (mean accepts, paired rejects) and a
gain with one regression (mean accepts, no_regression rejects)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from toy_world import backends, make_backend, question_number, settings_for

from skillopt_core.backends.scripted import Rule, ScriptedBackend
from skillopt_core.run.api import train
from skillopt_core.tasks.data import load_tasks_jsonl, split_tasks


def val_numbers(settings) -> list[int]:
    tasks, _ = load_tasks_jsonl(settings.env.data_path)
    data = split_tasks(tasks, seed=settings.env.split_seed, ratio=tuple(settings.env.split_ratio))
    return [int(t.id[1:]) for t in data.val]


def world(edit: str, answer) -> ScriptedBackend:
    """Reflection proposes ``edit`` once; ``answer(i, skill)`` answers question i."""
    def reflect(request):
        done = edit in request.prompt_text.split("## Examples")[0] or "rejected by validation" in request.prompt_text
        return json.dumps({"edits": [] if done else [{"op": "add", "content": edit}]})

    return ScriptedBackend(rules=[
        Rule(stage="reflect", response=reflect),
        Rule(stage="rollout", response=lambda r: answer(question_number(r), r.system or "")),
    ])


def run_settings(tmp_path: Path, policy: str):
    return settings_for(tmp_path, f"evaluation.gate_policy={policy}", "train.steps_per_epoch=1",
                        "optimizer.use_slow_update=false", "optimizer.use_meta_skill=false", "evaluation.eval_test=false")


@pytest.mark.parametrize("policy,expected", [("mean", "accept"), ("paired", "reject"), ("no_regression", "accept")])
async def test_a_one_item_gain(tmp_path, policy, expected):
    settings = run_settings(tmp_path, policy)
    lucky = [i for i in val_numbers(settings) if i % 2 == 0][0]

    def answer(i, skill):
        return "banana" if "ONE" in skill and i == lucky else "apple"

    summary = await train(settings, backends=backends(world("ONE", answer)))
    record = json.loads(Path(summary.run_dir, "history.json").read_text())[0]
    assert record["action"] == expected, record["gate_reason"]
    if policy == "paired":
        assert "sign test" in record["gate_reason"]


@pytest.mark.parametrize("policy,expected", [("mean", "accept"), ("paired", "accept"), ("no_regression", "reject")])
async def test_a_gain_with_one_regression(tmp_path, policy, expected):
    settings = run_settings(tmp_path, policy)
    bananas = [i for i in val_numbers(settings) if i % 2 == 0]
    victim = bananas[0]

    def answer(i, skill):
        if "MIXED" in skill:
            return "apple" if i == victim else ("banana" if i % 2 == 0 else "cherry")
        return "banana" if i == victim else "apple"

    summary = await train(settings, backends=backends(world("MIXED", answer)))
    record = json.loads(Path(summary.run_dir, "history.json").read_text())[0]
    assert record["action"] == expected, record["gate_reason"]
    if policy == "no_regression":
        assert f"t{victim:02d}" in record["gate_reason"] and record["gate_early_stopped"]


async def test_paired_gate_accepts_a_broad_gain_and_rejects_harm(tmp_path):
    summary = await train(settings_for(tmp_path, "evaluation.gate_policy=paired"), backends=backends(make_backend()))
    actions = [h["action"] for h in json.loads(Path(summary.run_dir, "history.json").read_text())]
    assert actions == ["accept", "reject", "reject", "no_change"]
