"""One failing call scores one item 0; systemic failures stop the run cleanly,
resumably, with the calls in flight cancelled."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from toy_world import backends, comparable, events_of, make_backend, question_number, settings_for

from skillopt_core.backends import BackendError, RequestFailed, Usage
from skillopt_core.backends.scripted import Rule, ScriptedBackend
from skillopt_core.run.api import train


def failing_on(numbers: set[int], error: type[BaseException] = RequestFailed):
    backend = make_backend()
    inner = backend.rules[-1].response

    def target(request):
        if question_number(request) in numbers:
            raise error(f"timeout after 120 s on question {question_number(request)}")
        return inner(request)

    backend.rules[-1] = Rule(stage="rollout", response=target)
    return backend


async def test_one_failing_item_scores_zero_and_the_run_completes(tmp_path):
    seen = []
    summary = await train(settings_for(tmp_path), backends=backends(failing_on({0, 7, 14, 21, 28, 35})), subscribers=[seen.append])
    assert summary.status == "completed" and summary.failed_items > 0
    done = [e for e in seen if e.kind == "rollout_done" and e.failed]
    assert done, "a rollout with failed items says so"
    rollouts = [r for step in Path(summary.run_dir, "steps").iterdir()
                for r in json.loads((step / "rollouts.json").read_text()) if r["failed"]]
    assert rollouts and all(r["hard"] == 0 and "timeout after 120 s" in r["feedback"] for r in rollouts)
    history = json.loads(Path(summary.run_dir, "history.json").read_text())
    assert sum(h["failed_items"] for h in history) > 0


async def test_failed_calls_count_against_the_budget(tmp_path):
    summary = await train(settings_for(tmp_path, "evaluation.eval_test=false", "train.steps_per_epoch=1"),
                          backends=backends(failing_on({0, 2, 4})))
    usage = json.loads(Path(summary.run_dir, "history.json").read_text())[0]["usage"]
    ok = make_backend()
    clean = await train(settings_for(tmp_path / "clean", "evaluation.eval_test=false", "train.steps_per_epoch=1"),
                        backends=backends(ok))
    clean_usage = json.loads(Path(clean.run_dir, "history.json").read_text())[0]["usage"]
    assert usage["target"]["rollout"]["calls"] == clean_usage["target"]["rollout"]["calls"]


async def test_a_systemic_error_stops_the_run_cleanly_and_it_resumes(tmp_path):
    full = await train(settings_for(tmp_path / "a"), backends=backends(make_backend()))
    broken = make_backend()
    calls = []
    reflect = broken.rules[0].response

    def dies_on_second_reflect(request):
        calls.append(1)
        if len(calls) == 2:
            raise BackendError("HTTP 401: invalid API key. Set OPENAI_API_KEY.")
        return reflect(request)

    broken.rules[0] = Rule(stage="reflect", response=dies_on_second_reflect)
    stopped = await train(settings_for(tmp_path / "b"), backends=backends(broken))
    assert stopped.status == "failed" and "invalid API key" in stopped.error and stopped.steps_done == 1
    run_b = Path(stopped.run_dir)
    kinds = [e["event"] for e in events_of(run_b)]
    assert kinds[-2:] == ["run_stopped", "run_end"]
    assert json.loads((run_b / "summary.json").read_text())["status"] == "failed"
    resumed = await train(settings_for(tmp_path / "b"), resume=run_b, backends=backends(make_backend()))
    assert resumed.status == "completed"
    assert comparable(json.loads((run_b / "history.json").read_text())) == comparable(
        json.loads(Path(full.run_dir, "history.json").read_text()))


async def test_too_many_failures_in_a_row_stop_the_run(tmp_path):
    summary = await train(settings_for(tmp_path, "train.max_consecutive_failures=3"),
                          backends=backends(failing_on(set(range(40)))))
    assert summary.status == "failed" and "3 model calls in a row failed" in summary.error
    assert summary.steps_done == 0 and Path(summary.run_dir, "state.json").exists()


def slow_backend(finished: list[int]) -> ScriptedBackend:
    """Rollouts take a while (real awaits) and append their question to ``finished``; question 3 fails
    systemically at once."""
    def rollout(request) -> str:
        n = question_number(request)
        if n == 3:
            raise BackendError("endpoint returned 404: model not found")
        finished.append(n)
        return "apple"

    return ScriptedBackend(rules=[Rule(stage="rollout", response=rollout), Rule(response='{"edits": []}')],
                           delay=lambda r: 0.2 if r.stage == "rollout" and question_number(r) != 3 else 0.0)


async def test_calls_in_flight_are_cancelled_when_the_run_stops(tmp_path):
    finished: list[int] = []
    backend = slow_backend(finished)
    summary = await train(settings_for(tmp_path, "train.workers=4"), backends=backends(backend))
    finished_at_stop = len(finished)
    assert summary.status == "failed" and "model not found" in summary.error
    assert backend.cancelled > 0 and backend.in_flight == 0
    await asyncio.sleep(0.3)
    assert len(finished) == finished_at_stop  # no call finished after the run stopped


async def test_a_failed_call_records_the_usage_the_backend_reports(tmp_path):
    from skillopt_core.run.budget import Budget, MeteredBackend, UsageLedger
    from skillopt_core.backends import CompletionRequest

    def refuse(request):
        raise RequestFailed("refused", usage=Usage(120, 7))

    ledger = UsageLedger()
    metered = MeteredBackend(ScriptedBackend(rules=[Rule(response=refuse)]), "target", ledger, Budget())
    try:
        await metered.complete(CompletionRequest.single("q", stage="rollout"))
    except RequestFailed:
        pass
    assert ledger.totals() == {"calls": 1, "input_tokens": 120, "output_tokens": 7, "cost_usd": 0.0}


async def test_every_failed_sibling_call_is_retrieved_when_a_run_stops(tmp_path, caplog):
    import gc
    import logging

    def down(request):
        raise BackendError("HTTP 401: invalid API key")

    backend = make_backend()
    backend.rules[-1] = Rule(stage="rollout", response=down)
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        summary = await train(settings_for(tmp_path, "train.workers=4"), backends=backends(backend))
        gc.collect()
        await asyncio.sleep(0)
    assert summary.status == "failed"
    assert "never retrieved" not in caplog.text


async def test_a_plot_that_cannot_be_drawn_does_not_fail_a_finished_run(tmp_path, monkeypatch):
    import skillopt_core.run.plot as plot

    def broken(*args, **kwargs):
        raise RuntimeError("no fonts")

    monkeypatch.setattr(plot, "plot_history", broken)
    seen = []
    summary = await train(settings_for(tmp_path), backends=backends(make_backend()), subscribers=[seen.append])
    assert summary.status == "completed"
    assert any(e.kind == "notice" and "history.png was not written" in e.text for e in seen)
