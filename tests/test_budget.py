"""Usage ledger and the hard per-run budget enforced by MeteredBackend."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from skillopt_core.backends import BackendError, Completion, CompletionRequest, Usage
from skillopt_core.backends.scripted import Rule, ScriptedBackend
from skillopt_core.run.budget import Budget, BudgetExceeded, MeteredBackend, UsageLedger


def slow_backend(usage: Usage = Usage(10, 5, 0.01), fail: bool = False) -> ScriptedBackend:
    """Answers "ok" (or fails: "down") after a real await, so concurrent calls overlap inside the wrapper."""
    rule = Rule(error=BackendError("down")) if fail else Rule(response="ok")
    return ScriptedBackend(rules=[rule], delay=0.01, usage=usage)


def req(stage: str = "rollout", role: str = "") -> CompletionRequest:
    return CompletionRequest.single("prompt", stage=stage, role=role)


def completion(inp: int, out: int, cost: float | None = None, latency: float = 0.0) -> Completion:
    return Completion(text="x", usage=Usage(inp, out, cost), latency_s=latency)


async def test_calls_cap_is_exact_under_concurrency():
    inner = slow_backend()
    metered = MeteredBackend(inner, "target", UsageLedger(), Budget(max_calls=4))
    results = await asyncio.gather(*(metered.complete(req()) for _ in range(10)), return_exceptions=True)
    succeeded = [r for r in results if isinstance(r, Completion)]
    refused = [r for r in results if isinstance(r, BudgetExceeded)]
    assert (len(succeeded), len(refused), len(inner.history)) == (4, 6, 4)


def test_calls_cap_is_exact_across_threads():
    inner = slow_backend()
    metered = MeteredBackend(inner, "target", UsageLedger(), Budget(max_calls=5))

    def call(_: int) -> str:
        try:
            return asyncio.run(metered.complete(req())).text
        except BudgetExceeded:
            return "refused"

    with ThreadPoolExecutor(max_workers=10) as pool:
        outcomes = list(pool.map(call, range(10)))
    assert (outcomes.count("ok"), outcomes.count("refused")) == (5, 5)


async def test_budget_message_names_calls_used_and_limit():
    metered = MeteredBackend(slow_backend(), "target", UsageLedger(), Budget(max_calls=2))
    await metered.complete(req())
    await metered.complete(req())
    with pytest.raises(BudgetExceeded, match=r"budget exhausted: 2/2 model calls"):
        await metered.complete(req())


async def test_token_cap_refuses_the_call_after_the_limit_is_reached():
    inner = slow_backend(usage=Usage(30, 10))
    metered = MeteredBackend(inner, "target", UsageLedger(), Budget(max_tokens=100))
    for _ in range(3):  # 40, 80, 120 tokens: the third call may finish over the limit
        await metered.complete(req())
    with pytest.raises(BudgetExceeded, match=r"budget exhausted: 120/100 tokens"):
        await metered.complete(req())
    assert len(inner.history) == 3


async def test_exhausted_budget_refuses_every_later_call_without_calling():
    inner = slow_backend()
    ledger = UsageLedger()
    metered = MeteredBackend(inner, "target", ledger, Budget(max_calls=1))
    await metered.complete(req())
    for _ in range(3):
        with pytest.raises(BudgetExceeded, match="budget exhausted: 1/1 model calls"):
            await metered.complete(req())
    assert len(inner.history) == 1


async def test_budget_is_shared_across_roles_through_the_ledger():
    ledger, budget = UsageLedger(), Budget(max_calls=2)
    target = MeteredBackend(slow_backend(), "target", ledger, budget)
    optimizer = MeteredBackend(slow_backend(), "optimizer", ledger, budget)
    await target.complete(req())
    await optimizer.complete(req("reflect"))
    with pytest.raises(BudgetExceeded):
        await target.complete(req())


async def test_failed_call_gives_its_slot_back_and_records_nothing():
    ledger = UsageLedger()
    failing = MeteredBackend(slow_backend(fail=True), "target", ledger, Budget(max_calls=1))
    with pytest.raises(BackendError):
        await failing.complete(req())
    assert ledger.in_flight == 0
    assert ledger.totals()["calls"] == 0
    working = MeteredBackend(slow_backend(), "target", ledger, Budget(max_calls=1))
    assert (await working.complete(req())).text == "ok"


async def test_metered_backend_records_under_role_and_stage():
    ledger = UsageLedger()
    metered = MeteredBackend(slow_backend(), "optimizer", ledger, Budget())
    await metered.complete(req("reflect"))
    await metered.complete(req("reflect"))
    await metered.complete(req("aggregate"))
    usage = ledger.by_role_stage()
    assert usage["optimizer"]["reflect"]["calls"] == 2
    assert usage["optimizer"]["reflect"]["input_tokens"] == 20
    assert usage["optimizer"]["reflect"]["latency_s"] == pytest.approx(0.02)  # two calls of 0.01 s
    assert usage["optimizer"]["aggregate"]["calls"] == 1


async def test_metered_backend_fills_empty_role_and_keeps_a_set_one():
    inner = ScriptedBackend(rules=[Rule(response="ok")])
    metered = MeteredBackend(inner, "judge", UsageLedger(), Budget())
    await metered.complete(req(role=""))
    await metered.complete(req(role="custom"))
    assert [r.role for r in inner.history] == ["judge", "custom"]


def test_metered_backend_has_inner_name_model_and_description():
    inner = ScriptedBackend(model="scripted")
    metered = MeteredBackend(inner, "target", UsageLedger(), Budget())
    assert (metered.name, metered.model, metered.describe()) == (
        inner.name,
        inner.model,
        inner.describe(),
    )


def test_ledger_totals_sum_all_roles_and_stages():
    ledger = UsageLedger()
    ledger.record("target", "rollout", completion(10, 2, 0.5))
    ledger.record("optimizer", "reflect", completion(7, 3, None))
    assert ledger.totals() == {"calls": 2, "input_tokens": 17, "output_tokens": 5, "cost_usd": 0.5}


def test_ledger_by_role_stage_shape():
    ledger = UsageLedger()
    ledger.record("target", "rollout", completion(10, 2, 0.25, latency=1.5))
    assert ledger.by_role_stage() == {
        "target": {
            "rollout": {
                "calls": 1,
                "input_tokens": 10,
                "output_tokens": 2,
                "cost_usd": 0.25,
                "latency_s": 1.5,
            }
        }
    }


def test_snapshot_round_trips_through_json():
    ledger = UsageLedger()
    ledger.record("target", "rollout", completion(10, 2, 0.25, latency=1.5))
    ledger.record("judge", "score", completion(4, 1))
    restored = UsageLedger.from_snapshot(json.loads(json.dumps(ledger.snapshot())))
    assert restored.by_role_stage() == ledger.by_role_stage()
    assert restored.totals() == ledger.totals()


async def test_restored_ledger_keeps_the_remaining_budget():
    ledger = UsageLedger()
    ledger.record("target", "rollout", completion(1, 1))
    ledger.record("target", "rollout", completion(1, 1))
    restored = UsageLedger.from_snapshot(ledger.snapshot())
    metered = MeteredBackend(slow_backend(), "target", restored, Budget(max_calls=3))
    await metered.complete(req())
    with pytest.raises(BudgetExceeded, match="3/3"):
        await metered.complete(req())


def test_from_snapshot_rejects_unknown_bucket_key():
    bad = {"version": 1, "usage": {"target": {"rollout": {"calls": 1, "tokens": 3}}}}
    with pytest.raises(ValueError, match=r"usage\.target\.rollout.*tokens"):
        UsageLedger.from_snapshot(bad)


def test_diff_reports_only_usage_since_the_snapshot():
    ledger = UsageLedger()
    ledger.record("target", "rollout", completion(10, 2))
    ledger.record("optimizer", "reflect", completion(5, 5))
    earlier = ledger.snapshot()
    ledger.record("target", "rollout", completion(3, 1, 0.1))
    ledger.record("judge", "score", completion(2, 2))
    assert ledger.diff(earlier) == {
        "target": {
            "rollout": {
                "calls": 1,
                "input_tokens": 3,
                "output_tokens": 1,
                "cost_usd": 0.1,
                "latency_s": 0.0,
            }
        },
        "judge": {
            "score": {
                "calls": 1,
                "input_tokens": 2,
                "output_tokens": 2,
                "cost_usd": 0.0,
                "latency_s": 0.0,
            }
        },
    }


def test_empty_stage_is_recorded_as_unlabelled():
    ledger = UsageLedger()
    ledger.record("target", "", completion(1, 1))
    assert list(ledger.by_role_stage()["target"]) == ["unlabelled"]


def test_negative_budget_is_rejected():
    with pytest.raises(ValueError, match="max_calls"):
        Budget(max_calls=-1)
