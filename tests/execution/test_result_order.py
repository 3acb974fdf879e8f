"""An evaluation that stops early stops at the same item, with the same
results, whichever of its checks finishes first: executors that finish the
jobs in submission order and in reverse order give the same answer. (A
loaded machine or a Ray worker that starts late reorders completions; the
screen and the val gate must not see a different set of items because of it.)

The rollout-level executors hold the jobs of one evaluation and finish them
one at a time, each only after the caller has handled the one before, so the
order is exact. The training run delays the failing checks instead: after the
change the history is the same whatever the delay does, so that test cannot
fail by timing; before it, the delay was what made the histories differ (the
CI failure of tests/execution/test_ray_training.py: the Ray run's step-1
screen stopped after 1 of 3 items, the local run's after 3)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "envs"))

from bench_run import SUM_SOLUTION, train_offline  # noqa: E402

from skillopt_core.backends import BackendSpec, create_backend  # noqa: E402
from skillopt_core.envs import create_env  # noqa: E402
import skillopt_core.run.runtime as runtime  # noqa: E402
from skillopt_core.evaluation.executor import Job, LocalExecutor, run_job  # noqa: E402
from skillopt_core.evaluation.rollout import RolloutCache, run_rollouts  # noqa: E402
from skillopt_core.skill.document import Skill  # noqa: E402

FAILING = "```python\nraise SystemExit(3)\n```"
# 9001 (column D = B + C) gets a correct solution; every other task one that exits 3.
RULES = {"rules": [{"match": "sum of columns B and C", "response": SUM_SOLUTION}, {"response": FAILING}]}
TARGET_RULES = [{"stage": "rollout", **rule} for rule in RULES["rules"]]


class OrderedExecutor:
    """Holds ``expected`` jobs, then runs them one at a time, first-submitted
    first (``reverse``: last-submitted first); the next job runs only after the
    caller of the one before has resumed with its result."""

    name = "ordered"

    def __init__(self, expected: int, reverse: bool) -> None:
        self.expected, self.reverse = expected, reverse
        self.held: list[tuple[Job, asyncio.Future]] = []
        self.order: list[str] = []  # labels, in the order the jobs finished

    async def run(self, job: Job):
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self.held.append((job, future))
        if len(self.held) == self.expected:
            self._finish_next()
        try:
            return await future
        finally:
            loop.call_soon(self._finish_next)

    def _finish_next(self) -> None:
        while self.held:
            job, future = self.held.pop() if self.reverse else self.held.pop(0)
            if future.done():  # its caller was cancelled
                continue
            self.order.append(job.label)
            try:
                future.set_result(run_job(job))
            except Exception as exc:  # noqa: BLE001 - handed to the caller, as an executor does
                future.set_exception(exc)
            return


def passed_one(partial: Mapping[str, float]) -> bool:
    """The screen's rule when the current skill's sum is 1: certain once the candidate reaches 1."""
    return sum(partial.values()) >= 1


async def evaluate(ids: list[str], reverse: bool) -> tuple[list[tuple[str, float]], list[str]]:
    env = create_env("spreadsheetbench", {})
    by_id = {t.id: t for t in env.load_tasks()}
    tasks = [by_id[i] for i in ids]
    env.executor = executor = OrderedExecutor(len(tasks), reverse)
    target = create_backend(BackendSpec("scripted", None, "target", {"scripted": RULES}))
    results = await run_rollouts(env, target, Skill.parse(env.seed_skill), tasks, workers=len(tasks),
                                 cache=RolloutCache(), stop_when=passed_one, metric="soft")
    return [(r.task_id, r.score.soft) for r in results], executor.order


@pytest.mark.parametrize("ids", [["9001", "9002", "9003"], ["9002", "9003", "9001"], ["9002", "9001", "9003"]],
                         ids=["passing-first", "passing-last", "passing-second"])
async def test_an_early_stop_does_not_depend_on_which_check_finishes_first(ids: list[str]) -> None:
    forward, forward_order = await evaluate(ids, reverse=False)
    backward, backward_order = await evaluate(ids, reverse=True)
    assert forward_order != backward_order  # the checks really finished in other orders
    assert backward == forward
    # It stops at the first task (in the order given) where the candidate reaches 1.
    stop = ids.index("9001") + 1
    assert forward == [(i, 1.0 if i == "9001" else 0.0) for i in ids[:stop]]


class FailingChecksLast(LocalExecutor):
    """The local executor, with every check of a failing solution started 1.5 s late."""

    async def run(self, job: Job):
        if "SystemExit" in job.args[0]:  # the check's code: FAILING's
            await asyncio.sleep(1.5)
        return await super().run(job)


def history(tmp_path: Path, capsys, name: str) -> list[dict]:
    _, run_dir = train_offline("spreadsheetbench/local", tmp_path / name, capsys, TARGET_RULES,
                               "evaluation.eval_test=false", "optimizer.use_slow_update=false")
    records = json.loads((run_dir / "history.json").read_text(encoding="utf-8"))
    return [{k: v for k, v in r.items() if k != "timings"} for r in records]


def test_a_training_run_gives_the_same_history_when_the_failing_checks_finish_last(
        tmp_path, capsys, monkeypatch) -> None:
    plain = history(tmp_path, capsys, "plain")
    monkeypatch.setattr(runtime, "create_executor", lambda settings: FailingChecksLast())
    delayed = history(tmp_path, capsys, "delayed")
    assert delayed == plain
    assert plain[0]["screen"]["evaluated"] == 1  # 9001 leads step 1's screen batch: it decides alone
