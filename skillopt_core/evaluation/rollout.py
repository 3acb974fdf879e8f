"""Rollout: run the target over tasks under a skill, score each answer.

Bounded concurrency (``workers`` calls in flight) and the content-addressed
cache of :mod:`skillopt_core.evaluation.cache`: an unchanged request is never
sent twice, and an unchanged answer is never graded twice.

Failures: one item failing (a :class:`RequestFailed` from the backend, an
answer the judge cannot grade, any other error of that one call) scores 0 with
the reason as feedback and is counted in ``RolloutResult.failed``; only a
systemic error (:class:`BackendError`, :class:`BudgetExceeded`) propagates,
and then every call still in flight is cancelled first.

Multi-turn envs (a text game, an agent with tools) define ``run_episode(target,
request, task)``: it is called where a single-turn env's one model call would
be, may call ``target`` many times (each call is metered), and returns a
:class:`Completion` whose text (the transcript) is cached and scored like an
answer.

Early stopping: ``stop_when`` sees the per-item scores of the first k tasks
(in the order given, once all of their samples are finished) for k = 1, 2, ...;
when it returns true, the calls still in flight are cancelled and those k
tasks' results are returned. Items that finished out of order wait for the
ones before them, and an item after the k-th that happened to finish first is
not returned (its answer and score stay in the cache). So where an evaluation
stops, and what it returns, depend on the scores alone, never on which call
finished first (a loaded machine, a Ray worker that started late): the same
seeds give the same decisions on either executor. Only what was spent past
the stop (calls already in flight) depends on timing.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from skillopt_core.backends import Backend, BackendError, RequestFailed
from skillopt_core.backends.trajectory import Trajectory
from skillopt_core.concurrency import cancel_all
from skillopt_core.evaluation.cache import RolloutCache, completion_key, score_key, skill_digest
from skillopt_core.evaluation.gate import gate_scores_from_samples
from skillopt_core.run.budget import BudgetExceeded
from skillopt_core.skill.document import Skill
from skillopt_core.tasks.judges.outcome import scoring_trajectory
from skillopt_core.tasks.task import Score, Task

__all__ = ["RolloutCache", "RolloutResult", "mean_score", "per_item", "run_rollouts", "sample_seed"]


@dataclass(frozen=True)
class RolloutResult:
    task_id: str
    sample: int
    response: str
    score: Score
    cached: bool = False
    failed: bool = False
    trajectory: Trajectory | None = None

    def to_dict(self) -> dict:
        extra = {"trajectory": self.trajectory.to_dict()} if self.trajectory is not None else {}
        return {
            "task_id": self.task_id,
            "sample": self.sample,
            "response": self.response,
            "hard": self.score.hard,
            "soft": self.score.soft,
            "feedback": self.score.feedback,
            "cached": self.cached,
            "failed": self.failed,
            **extra,
        }


def sample_seed(seed: int, task_id: str, sample: int) -> int:
    digest = hashlib.sha256(f"{seed}:{task_id}:{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


async def run_rollouts(
    env,
    target: Backend,
    skill: Skill,
    tasks: Sequence[Task],
    *,
    samples: int = 1,
    workers: int = 4,
    cache: RolloutCache | None = None,
    seed: int = 0,
    max_tokens: int = 256,
    temperature: float = 0.0,
    on_progress: Callable[[int, int], object] | None = None,
    stop_when: Callable[[Mapping[str, float]], bool] | None = None,
    metric: str = "hard",
    seeds: Mapping[str, int] | None = None,
) -> list[RolloutResult]:
    """Results in (task, sample) order, for every task unless ``stop_when``
    ended the evaluation early (then for the first tasks, those it stopped on:
    see the module docstring). ``seeds`` (task id → seed) overrides ``seed``
    for the tasks it names."""
    cache = cache if cache is not None else RolloutCache()
    skill_text = skill.render()
    jobs = [(t, s) for t in tasks for s in range(samples)]
    results: list[RolloutResult | None] = [None] * len(jobs)
    sem = asyncio.Semaphore(max(1, workers))
    remaining = {t.id: samples for t in tasks}
    finished: dict[str, float] = {}  # per-item scores of tasks[:prefix]
    prefix = 0
    done = 0
    stop = asyncio.Event()

    def extend_prefix(stop_when: Callable[[Mapping[str, float]], bool]) -> None:
        """Offer ``stop_when`` each newly complete first-k prefix of ``tasks``, in order."""
        nonlocal prefix
        while not stop.is_set() and prefix < len(tasks) and remaining[tasks[prefix].id] == 0:
            task = tasks[prefix]
            prefix += 1
            finished.update(per_item([r for r in results if r is not None and r.task_id == task.id], metric))
            if stop_when(finished):
                stop.set()

    async def one(i: int, task: Task, sample: int) -> None:
        nonlocal done
        if stop.is_set():
            return
        task_seed = seeds.get(task.id, seed) if seeds else seed
        results[i] = await _run_one(env, target, skill_text, task, sample, task_seed, max_tokens, temperature, cache,
                                    sem, stop)
        if results[i] is None:
            return
        done += 1
        if on_progress:
            on_progress(done, len(jobs))
        remaining[task.id] -= 1
        if remaining[task.id] == 0 and stop_when is not None:
            extend_prefix(stop_when)

    pending = [asyncio.ensure_future(one(i, t, s)) for i, (t, s) in enumerate(jobs)]
    try:
        await _until_done_or_stopped(pending, stop)
    finally:
        await cancel_all(pending)
    if stop.is_set():
        return [r for r in results if r is not None and r.task_id in finished]
    return [r for r in results if r is not None]


async def _until_done_or_stopped(tasks: Sequence[asyncio.Future], stop: asyncio.Event) -> None:
    """Wait for all ``tasks``; return early once ``stop`` is set; raise the
    first error (the caller cancels what is left)."""
    waiter = asyncio.ensure_future(stop.wait())
    try:
        outstanding = set(tasks)
        while outstanding:
            finished, outstanding = await asyncio.wait(outstanding | {waiter}, return_when=asyncio.FIRST_COMPLETED)
            outstanding.discard(waiter)
            for task in finished:
                if task is not waiter and not task.cancelled() and task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
            if stop.is_set():
                return
    finally:
        waiter.cancel()


async def _run_one(
    env, target: Backend, skill_text: str, task: Task, sample: int, seed: int,
    max_tokens: int, temperature: float, cache: RolloutCache, sem: asyncio.Semaphore, stop: asyncio.Event,
) -> RolloutResult | None:
    """One (task, sample); None when the evaluation was stopped before its call started."""
    try:
        request = env.build_request(skill_text, task, max_tokens)
    except Exception as exc:  # the env's contract says never; one task still must not stop the run
        return _failure(task, sample, f"The request for this task could not be built: {type(exc).__name__}.")
    request = replace(request, seed=sample_seed(seed, task.id, sample), temperature=temperature,
                      role="target", stage=request.stage or "rollout")
    ckey = completion_key(target, request)
    about = {"task": task.id, "sample": sample, "skill": skill_digest(skill_text)}
    episode = getattr(env, "run_episode", None)
    response = cache.completion(ckey)
    cached = response is not None
    trajectory = cache.trajectory(ckey) if cached else None
    if response is None:
        try:
            async with sem:
                if stop.is_set():
                    return None
                completion = await (episode(target, request, task) if episode else target.complete(request))
        except RequestFailed as exc:
            return _failure(task, sample, f"The target could not answer this task: {exc}")
        except (BackendError, BudgetExceeded):
            raise
        except Exception as exc:  # one bad item: score 0, say why, keep going
            return _failure(task, sample, f"The target call failed: {type(exc).__name__}: {exc}")
        response = completion.text
        trajectory = completion.trajectory
        cache.put_completion(ckey, response, trajectory, about)
    skey = score_key(ckey, getattr(env, "name", type(env).__name__), task)
    score = cache.score(skey)
    if score is None:
        try:
            with scoring_trajectory(trajectory):
                score = await env.score(task, response)
        except RequestFailed as exc:
            return RolloutResult(task.id, sample, response, Score(0.0, 0.0, f"The answer could not be graded: {exc}"),
                                 cached=cached, failed=True, trajectory=trajectory)
        except (BackendError, BudgetExceeded):
            raise
        except Exception as exc:
            score = Score(0.0, 0.0, f"The answer could not be scored: {type(exc).__name__}.")
        cache.put_score(skey, score, about)
    return RolloutResult(task.id, sample, response, score, cached=cached, trajectory=trajectory)


def _failure(task: Task, sample: int, why: str) -> RolloutResult:
    return RolloutResult(task.id, sample, "", Score(0.0, 0.0, why), failed=True)


def mean_score(results: Iterable[RolloutResult], metric: str = "hard") -> float:
    values = [getattr(r.score, metric) for r in results]
    return sum(values) / len(values) if values else 0.0


def per_item(results: Iterable[RolloutResult], metric: str = "hard") -> dict[str, float]:
    """Mean score per task id over its samples (the gate's per-item values)."""
    samples: dict[str, list[float]] = {}
    for r in results:
        samples.setdefault(r.task_id, []).append(getattr(r.score, metric))
    return gate_scores_from_samples(samples)
