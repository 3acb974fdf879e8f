"""Spend: the dollar cap (budget.max_usd), prices for backends that report no
cost, and the preflight estimate with its budget-floor warning (issue 34, item 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from skillopt_core import Task, events
from skillopt_core.backends import Completion, CompletionRequest, Usage
from skillopt_core.backends.base import BackendConfigError
from skillopt_core.backends.scripted import ScriptedBackend, load_script
from skillopt_core.cli.main import main
from skillopt_core.run.api import prepare_training
from skillopt_core.run.budget import Budget, BudgetExceeded, MeteredBackend, UsageLedger
from skillopt_core.run.config import ConfigError, load_settings

GOOD = {"op": "add", "content": "Always say banana."}
RULES = {"rules": [
    {"stage": "reflect", "response": json.dumps({"edits": [GOOD]})},
    {"stage": "rollout", "regex": "Always say banana", "response": "banana"},
    {"stage": "rollout", "response": "apple"},
]}
SEED = "---\nname: fruit\ndescription: Answers fruit questions.\n---\n\n# Fruit\n\n- Answer briefly.\n"


def tasks(n: int = 30) -> list[Task]:
    return [Task(id=f"c{i}", prompt=f"Question {i}: which fruit?", judge={"type": "contains", "value": "banana"})
            for i in range(n)]


def settings(tmp_path: Path, cost: float | None, *extra: str):
    rules = dict(RULES, **({"cost_per_call": cost} if cost is not None else {}))
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(rules))
    return load_settings(None, [
        "model.backend=scripted", f"model.scripted={path}", "train.num_epochs=1", "train.steps_per_epoch=3",
        "train.batch_size=4", "train.workers=2", "env.split_ratio=[3,3,4]", f"output.root={tmp_path / 'out'}",
        "output.run_id=r", "output.plot=false", *extra])


class Unpriced:
    """A backend that reports tokens but no cost, for a model named in the price table."""

    name = "api"

    def __init__(self, model: str) -> None:
        self.model = model

    def describe(self) -> str:
        return "test backend"

    async def complete(self, request: CompletionRequest) -> Completion:
        return Completion(text="ok", usage=Usage(1_000_000, 100_000, None), model=self.model)


async def test_a_dollar_cap_stops_a_scripted_run_at_the_cap(tmp_path):
    seen: list = []
    run = prepare_training(settings(tmp_path, 0.01, "budget.max_usd=0.25"), tasks=tasks(), seed_skill=SEED,
                           subscribers=[seen.append])
    summary = await run.run()
    assert summary.status == "budget_exhausted"
    assert "budget exhausted: $0.2" in summary.error and "budget.max_usd" in summary.error
    # The cap is checked before each call against what is spent: it stops at $0.25,
    # over it by at most the calls already in flight (train.workers = 2).
    assert 0.25 - 1e-9 <= summary.usage["cost_usd"] <= 0.25 + 2 * 0.01 + 1e-9
    assert summary.usage["calls"] == round(summary.usage["cost_usd"] / 0.01)
    written = json.loads(Path(run.run_dir, "summary.json").read_text())
    assert written["status"] == "budget_exhausted" and written["usage"]["cost_usd"] == summary.usage["cost_usd"]
    assert any(isinstance(e, events.RunStopped) and "budget.max_usd" in e.message for e in seen)


async def test_without_a_dollar_cap_the_same_run_completes(tmp_path):
    summary = await prepare_training(settings(tmp_path, 0.01), tasks=tasks(), seed_skill=SEED).run()
    assert summary.status == "completed" and summary.usage["cost_usd"] > 0.25


async def test_a_backend_reporting_no_cost_is_priced_from_the_table_by_its_model():
    ledger = UsageLedger()
    metered = MeteredBackend(Unpriced("gpt-4o"), "target", ledger, Budget(max_usd=3.0))
    await metered.complete(CompletionRequest.single("hi", stage="rollout"))
    assert ledger.totals()["cost_usd"] == pytest.approx(2.50 + 1.00)  # 1M in × $2.50 + 100k out × $10/M
    with pytest.raises(BudgetExceeded, match=r"\$3\.5000/\$3\.0000 spent.*budget\.max_usd"):
        await metered.complete(CompletionRequest.single("hi", stage="rollout"))


async def test_an_unlisted_model_adds_no_guessed_cost():
    ledger = UsageLedger()
    await MeteredBackend(Unpriced("my-local-llm"), "target", ledger, Budget()).complete(
        CompletionRequest.single("hi", stage="rollout"))
    assert ledger.totals()["cost_usd"] == 0.0


def test_max_usd_must_be_positive(tmp_path):
    with pytest.raises(ConfigError, match="max_usd"):
        settings(tmp_path, None, "budget.max_usd=0")


def test_scripted_cost_per_call_is_checked():
    with pytest.raises(BackendConfigError, match="cost_per_call must be a number"):
        load_script({"rules": [], "cost_per_call": "cheap"})
    assert ScriptedBackend(cost_per_call=0.5).cost_per_call == 0.5


def test_the_preflight_estimate_counts_calls_from_the_settings_and_data_sizes(tmp_path):
    run = prepare_training(settings(tmp_path, 0.01), tasks=tasks(), seed_skill=SEED)
    est = run.estimate
    split = json.loads(Path(run.run_dir, "dataset.json").read_text())["splits"]
    train, val, test = len(split["train"]), len(split["val"]), len(split["test"])
    batch = min(4, train)
    # Per step: the batch, ceil(batch / minibatch 8) reflect calls, merge + rank, the screen, the val gate.
    one_step = batch + 1 + 2 + min(20, batch) + val
    assert est["one_step"]["calls"] == one_step
    assert est["calls"] == val + 3 * one_step + 2 * test
    assert est["usd"] == pytest.approx(est["calls"] * 0.01)
    assert est["warnings"] == [] and est["unpriced_roles"] == []


def test_the_estimate_is_printed_in_the_console_and_in_the_json(tmp_path, capsys):
    s = settings(tmp_path, 0.01, "budget.max_usd=0.05")
    s.env = s.env.model_copy(update={"name": "jsonl_tasks", "data_path": str(_write(tmp_path))})
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(s.to_dict()))
    code = main(["train", "--config", str(config), "--json"])
    captured = capsys.readouterr()
    assert code == 3  # budget_exhausted
    result = json.loads(captured.out)
    assert result["preflight"]["calls"] > 0 and result["preflight"]["usd"] > 0.05
    console = captured.err
    assert "preflight estimate: ≈" in console and "model calls" in console
    # The floor warning: $0.05 cannot pay for the val baseline and one full step.
    assert "budget.max_usd leaves $0.0500" in console and "before its first gate" in console
    assert console.index("preflight estimate") < console.index("budget exhausted")
    assert json.loads(Path(result["run_dir"], "preflight.json").read_text())["calls"] == result["preflight"]["calls"]


def test_a_dollar_cap_warns_when_a_role_has_no_price(tmp_path):
    s = settings(tmp_path, None, "budget.max_usd=1")
    run = prepare_training(s, tasks=tasks(), seed_skill=SEED,
                           backends={"target": Unpriced("my-local-llm")})
    est = run.estimate
    assert est["unpriced_roles"] == ["target"]
    assert any("cannot see the calls of target" in w for w in est["warnings"])


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps({"id": t.id, "prompt": t.prompt, "judge": t.judge}) + "\n" for t in tasks()))
    return path


def test_a_backend_that_reports_its_own_cost_is_unpriced_but_seen_by_the_cap(tmp_path):
    class ClaudeCli(Unpriced):
        name = "claude-code"  # reports total_cost_usd per call; its model is often unnamed

    run = prepare_training(settings(tmp_path, None, "budget.max_usd=1"), tasks=tasks(), seed_skill=SEED,
                           backends={"target": ClaudeCli("")})
    assert run.estimate["unpriced_roles"] == ["target"]
    assert not any("cannot see" in w for w in run.estimate["warnings"])
