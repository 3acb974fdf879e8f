"""The rollout executors: local (a thread here) and ray (tasks on a local Ray
instance with 2 CPUs, tests/execution/conftest.py). A job's result and its
error are the same on both; a Ray worker that dies is retried, then its item
fails alone."""

from __future__ import annotations

import os

import pytest

from skillopt_core.backends.base import RequestFailed
from skillopt_core.evaluation.executor import ExecutorError, Job, LocalExecutor, RayExecutor, create_executor
from skillopt_core.run.config import load_settings

import ray_jobs


async def test_local_executor_returns_the_job_result() -> None:
    assert await LocalExecutor().run(Job(ray_jobs.add, (2, 3))) == 5


async def test_local_executor_raises_the_job_error() -> None:
    with pytest.raises(ValueError, match="bad cell"):
        await LocalExecutor().run(Job(ray_jobs.fail, ("bad cell",)))


def test_config_picks_the_executor() -> None:
    assert create_executor(load_settings(None)).name == "local"


def test_ray_executor_without_ray_installed_says_how_to_install_it(monkeypatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(ExecutorError, match=r"pip install 'skillopt\[ray\]'"):
        create_executor(load_settings(None, ["execution.executor=ray"]))


async def test_ray_job_result_and_error_match_local_and_run_in_a_worker(ray_instance) -> None:
    executor = RayExecutor(max_retries=0)
    assert await executor.run(Job(ray_jobs.add, (2, 3))) == 5
    with pytest.raises(ValueError, match="bad cell"):
        await executor.run(Job(ray_jobs.fail, ("bad cell",)))
    assert await executor.run(Job(ray_jobs.worker_pid)) != os.getpid()


async def test_ray_worker_that_dies_once_is_retried(ray_instance, tmp_path) -> None:
    executor = RayExecutor(max_retries=1)
    assert await executor.run(Job(ray_jobs.die_once, (str(tmp_path / "marker"),))) == "survived"


async def test_ray_worker_that_always_dies_fails_only_its_item(ray_instance) -> None:
    executor = RayExecutor(max_retries=0)
    with pytest.raises(RequestFailed, match="died 1 time"):
        await executor.run(Job(ray_jobs.always_die, label="item sheet-7"))
    assert await executor.run(Job(ray_jobs.add, (1, 1))) == 2  # the executor still works


class _WorkerDiesFor:
    """An executor whose worker dies (after Ray's retries) for one task's check."""

    name = "dying"

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id

    async def run(self, job: Job):
        if self.task_id in job.label:
            raise RequestFailed(f"the Ray worker running {job.label} died 3 time(s) (WorkerCrashedError)")
        return await LocalExecutor().run(job)


async def test_a_dead_worker_fails_only_its_item_and_is_not_cached() -> None:
    from skillopt_core.backends import BackendSpec, create_backend
    from skillopt_core.envs import create_env
    from skillopt_core.evaluation.rollout import RolloutCache, run_rollouts
    from skillopt_core.skill.document import Skill

    env = create_env("spreadsheetbench", {})
    tasks = [t for t in env.load_tasks() if t.id in ("9001", "9002")]
    env.executor = _WorkerDiesFor("9002")
    target = create_backend(BackendSpec("scripted", None, "target",
                                        {"scripted": {"rules": [{"response": "```python\nraise SystemExit(1)\n```"}]}}))
    cache = RolloutCache()
    results = await run_rollouts(env, target, Skill.parse(env.seed_skill), tasks, cache=cache)
    by_id = {r.task_id: r for r in results}
    assert (by_id["9001"].failed, by_id["9002"].failed) == (False, True)
    assert "died" in by_id["9002"].score.feedback and by_id["9002"].score.hard == 0.0
    assert len(cache) == 3  # two completions, one score: the failed check is re-run next time
