"""Rollout: run the target over tasks under a skill, score each answer.

Bounded concurrency (``workers``) and a content-addressed cache keyed by
(backend, model, skill hash, task id, sample index): an unchanged skill is
never evaluated twice, so the gate's "current skill" costs nothing to re-read.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Sequence

from skillopt_core.backends import Backend, BackendError, RequestRejected
from skillopt_core.run.budget import BudgetExceeded
from skillopt_core.evaluation.gate import gate_scores_from_samples
from skillopt_core.skill.document import Skill
from skillopt_core.tasks.task import Score, Task


@dataclass(frozen=True)
class RolloutResult:
    task_id: str
    sample: int
    response: str
    score: Score
    cached: bool = False

    def to_dict(self) -> dict:
        return {
            "task_id": self.task_id,
            "sample": self.sample,
            "response": self.response,
            "hard": self.score.hard,
            "soft": self.score.soft,
            "feedback": self.score.feedback,
            "cached": self.cached,
        }


def cache_key(backend: Backend, skill: Skill, task_id: str, sample: int) -> str:
    return json.dumps([backend.name, backend.model, skill.hash, task_id, sample])


class RolloutCache:
    """Append-only JSONL cache. A torn last line (crash mid-write) is ignored."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._entries: dict[str, dict] = {}
        self.skipped_lines = 0
        if path is not None and path.exists():
            with path.open("r", encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    try:
                        row = json.loads(line)
                        self._entries[row["key"]] = row
                    except (json.JSONDecodeError, KeyError, TypeError):
                        self.skipped_lines += 1

    def get(self, key: str) -> tuple[str, Score] | None:
        row = self._entries.get(key)
        if row is None:
            return None
        return row["response"], Score(row["hard"], row["soft"], row.get("feedback", ""))

    def put(self, key: str, response: str, score: Score) -> None:
        row = {"key": key, "response": response, "hard": score.hard, "soft": score.soft, "feedback": score.feedback}
        self._entries[key] = row
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")

    def __len__(self) -> int:
        return len(self._entries)


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
    on_progress: Callable[[int, int], None] | None = None,
) -> list[RolloutResult]:
    """Results in (task, sample) order. One bad item never raises: it scores 0
    with the reason as feedback. A BackendError or BudgetExceeded is systemic
    and propagates."""
    cache = cache if cache is not None else RolloutCache()
    skill_text = skill.render()
    jobs = [(t, s) for t in tasks for s in range(samples)]
    results: list[RolloutResult | None] = [None] * len(jobs)
    sem = asyncio.Semaphore(max(1, workers))
    done = 0

    async def one(i: int, task: Task, sample: int) -> None:
        nonlocal done
        key = cache_key(target, skill, task.id, sample)
        hit = cache.get(key)
        if hit is not None:
            results[i] = RolloutResult(task.id, sample, hit[0], hit[1], cached=True)
        else:
            async with sem:
                results[i] = await _run_one(env, target, skill_text, task, sample, seed, max_tokens, temperature)
            cache.put(key, results[i].response, results[i].score)
        done += 1
        if on_progress:
            on_progress(done, len(jobs))

    await asyncio.gather(*(one(i, t, s) for i, (t, s) in enumerate(jobs)))
    return [r for r in results if r is not None]


async def _run_one(env, target: Backend, skill_text: str, task: Task, sample: int, seed: int, max_tokens: int, temperature: float) -> RolloutResult:
    request = env.build_request(skill_text, task, max_tokens)
    request = replace(request, seed=sample_seed(seed, task.id, sample), temperature=temperature, role="target", stage=request.stage or "rollout")
    try:
        completion = await target.complete(request)
    except RequestRejected as exc:
        return RolloutResult(task.id, sample, "", Score(0.0, 0.0, f"The target could not answer this task: {exc}"))
    except (BackendError, BudgetExceeded):
        raise
    except Exception as exc:  # one bad item: score 0, say why, keep going
        return RolloutResult(task.id, sample, "", Score(0.0, 0.0, f"The target call failed: {type(exc).__name__}."))
    try:
        score = await env.score(task, completion.text)
    except (BackendError, BudgetExceeded):
        raise
    except Exception as exc:
        score = Score(0.0, 0.0, f"The answer could not be scored: {type(exc).__name__}.")
    return RolloutResult(task.id, sample, completion.text, score)


def mean_score(results: Iterable[RolloutResult], metric: str = "hard") -> float:
    values = [getattr(r.score, metric) for r in results]
    return sum(values) / len(values) if values else 0.0


def per_item(results: Iterable[RolloutResult], metric: str = "hard") -> dict[str, float]:
    """Mean score per task id over its samples (the gate's per-item values)."""
    samples: dict[str, list[float]] = {}
    for r in results:
        samples.setdefault(r.task_id, []).append(getattr(r.score, metric))
    return gate_scores_from_samples(samples)
