"""`skillopt compare` and multi-target `skillopt eval`: two skills (or one
skill on several target models) measured on the same items and sample seeds.

A skill is named by a skill file or by a run directory (its ``best_skill.md``).
With ``seeds`` > 1 every item is answered once per seed and the repeats are
averaged within the item before any statistic, so the bootstrap resamples
items, the unit that was drawn. The A/A mode compares skill A with itself on
disjoint seed sets: its interval should contain zero about 95 % of the time,
and its width is the noise floor of the comparison.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import yaml

from skillopt_core.backends import Backend
from skillopt_core.envs.base import EnvAdapter
from skillopt_core.evaluation.cache import RolloutCache
from skillopt_core.evaluation.rollout import run_rollouts
from skillopt_core.evaluation.stats import average_within_item, paired_comparison
from skillopt_core.run import events as ev
from skillopt_core.run.config import Settings, apply_overrides, validate_settings
from skillopt_core.run.rundir import RunDir, atomic_write_json, atomic_write_text, new_run_id
from skillopt_core.run.runtime import build_runtime, initial_skill
from skillopt_core.skill.document import Skill, load_skill
from skillopt_core.tasks.data import Dataset, split_tasks
from skillopt_core.tasks.task import Task

__all__ = ["compare_skills", "evaluate_targets", "resolve_skill"]


def resolve_skill(where: str | Path) -> Path:
    """A skill file, or a run directory's best skill."""
    path = Path(where)
    if path.is_dir():
        best = path / "best_skill.md"
        if not best.exists():
            raise FileNotFoundError(f"{path} is a folder without best_skill.md; pass a skill file or a training run "
                                    f"directory")
        return best
    if not path.exists():
        raise FileNotFoundError(f"no skill file or run directory at {path}")
    return path


def _for_target(settings: Settings, target: str | None) -> Settings:
    if target is None:
        return settings
    data, origin = settings.to_dict(), dict[tuple, str]()
    apply_overrides(data, [f"model.target={target}"], origin)
    return validate_settings(data, origin)


class _Scorer:
    """Scores skills on one split for one target, with one shared cache."""

    def __init__(self, settings: Settings, run_dir: RunDir, split: str, bus: ev.EventBus,
                 backends: Mapping[str, Backend] | None) -> None:
        self.s = settings
        self.rt = build_runtime(settings, raw_backends=dict(backends) if backends else None)
        self.tasks, _ = split_items(settings, self.rt.env, split)
        self.split, self.bus = split, bus
        self.cache = RolloutCache(run_dir.cache_path)

    async def scores(self, skill: Skill, seeds: Iterable[int], label: str, metric: str) -> dict[str, float]:
        t = self.s.train
        pairs: list[tuple[str, float]] = []
        for seed in seeds:
            self.bus.emit(ev.RolloutStarted(0, 0, self.split, len(self.tasks) * t.samples_per_item, t.workers, label))
            results = await run_rollouts(
                self.rt.env, self.rt.target, skill, self.tasks, samples=t.samples_per_item, workers=t.workers,
                cache=self.cache, seed=seed, max_tokens=self.s.model.target_max_tokens,
                temperature=self.s.model.temperature,
            )
            pairs += [(r.task_id, getattr(r.score, metric)) for r in results]
            self.bus.emit(ev.RolloutDone(0, 0, self.split,
                                         sum(v for _, v in pairs[-len(results):]) / max(1, len(results)),
                                         len(results), sum(r.cached for r in results), label,
                                         sum(r.failed for r in results)))
        return average_within_item(pairs)


def split_items(settings: Settings, env: EnvAdapter, split: str) -> tuple[list[Task], Dataset]:
    """The items an evaluation of ``split`` scores (after ``test_limit`` / ``val_limit``) and the whole split."""
    data = split_tasks(env.load_tasks(), seed=settings.env.split_seed, ratio=settings.env.split_ratio)
    limit = settings.evaluation.test_limit if split == "test" else settings.evaluation.val_limit
    tasks = list(data.split(split))[:limit] if limit else list(data.split(split))
    if not tasks:
        raise ValueError(f"The {split} split is empty ({data.summary()}); load more items or change env.split_ratio.")
    return tasks, data


def open_run_dir(settings: Settings, kind: str, subscribers: Iterable[ev.Subscriber]) -> tuple[RunDir, ev.EventBus]:
    """A new ``<kind>-<id>`` run directory with the settings written and an event bus logging to it."""
    run_dir = RunDir.create(settings.output.root, settings.env.name, f"{kind}-{settings.output.run_id or new_run_id()}")
    atomic_write_text(run_dir.config_path, yaml.safe_dump(settings.to_dict(), sort_keys=False))
    bus = ev.EventBus([ev.JsonlEventLog(run_dir.events_path), *subscribers], run_id=run_dir.run_id)
    return run_dir, bus


async def compare_skills(
    settings: Settings,
    skill_a: str | Path | None,
    skill_b: str | Path | None = None,
    *,
    split: str = "test",
    seeds: int = 1,
    aa: bool = False,
    targets: Sequence[str | None] = (None,),
    metric: str = "hard",
    level: float = 0.95,
    subscribers: Iterable[ev.Subscriber] = (),
    backends: Mapping[str, Backend] | None = None,
) -> dict:
    """B minus A on the same items and seeds, per target model.

    ``skill_a`` / ``skill_b``: a skill file or a run directory (None: the
    env's seed skill). ``aa``: compare A with itself on disjoint seed sets
    (``skill_b`` must be omitted). Writes ``<root>/<env>/compare-<id>/``.
    """
    if seeds < 1:
        raise ValueError(f"seeds must be at least 1, got {seeds}")
    if aa and skill_b is not None:
        raise ValueError("the A/A calibration compares one skill with itself: give --a only (no --b)")
    if not aa and skill_b is None and skill_a is None:
        raise ValueError("give two skills to compare (--a and --b), or --aa for an A/A calibration of one skill")
    if metric not in ("hard", "soft"):
        raise ValueError(f"metric must be hard or soft, got {metric!r}")
    path_a = resolve_skill(skill_a) if skill_a is not None else None
    path_b = resolve_skill(skill_b) if skill_b is not None else None
    run_dir, bus = open_run_dir(settings, "compare", subscribers)
    base = settings.train.seed
    seeds_a = list(range(base, base + seeds))
    seeds_b = list(range(base + seeds, base + 2 * seeds)) if aa else seeds_a
    rows = []
    for target in targets:
        s = _for_target(settings, target)
        scorer = _Scorer(s, run_dir, split, bus, backends)
        a = load_skill(path_a) if path_a else initial_skill(s, scorer.rt.env)
        b = a if aa else (load_skill(path_b) if path_b else initial_skill(s, scorer.rt.env))
        scores_a = await scorer.scores(a, seeds_a, "compare A", metric)
        scores_b = await scorer.scores(b, seeds_b, "compare A again" if aa else "compare B", metric)
        result = paired_comparison(scores_a, scores_b, level=level, seed=base)
        rows.append({"target": s.model.target or "(backend default)", "usage": scorer.rt.ledger.totals(),
                     "summary": result.summary("A", "A'" if aa else "B"), **result.to_dict()})
    summary = {
        "run_id": run_dir.run_id, "run_dir": str(run_dir.path), "split": split, "metric": metric, "seeds": seeds,
        "mode": "aa" if aa else "ab", "a": str(path_a or "seed skill"),
        "b": str(path_b or ("A" if aa else "seed skill")),
        "targets": rows,
    }
    atomic_write_json(run_dir.summary_path, summary)
    return summary


async def evaluate_targets(
    settings: Settings,
    targets: Sequence[str],
    *,
    skill_path: str | Path | None = None,
    split: str = "test",
    subscribers: Iterable[ev.Subscriber] = (),
    backends: Mapping[str, Backend] | None = None,
) -> dict:
    """One skill on several target models, side by side (same items, same seeds)."""
    path = resolve_skill(skill_path) if skill_path is not None else None
    run_dir, bus = open_run_dir(settings, "eval", subscribers)
    rows = []
    for target in targets:
        s = _for_target(settings, target)
        scorer = _Scorer(s, run_dir, split, bus, backends)
        skill = load_skill(path) if path else initial_skill(s, scorer.rt.env)
        hard = await scorer.scores(skill, [s.train.seed], f"eval {split} on {target}", "hard")
        soft = await scorer.scores(skill, [s.train.seed], f"eval {split} on {target}", "soft")
        rows.append({"target": target, "n_items": len(hard), "hard": sum(hard.values()) / len(hard),
                     "soft": sum(soft.values()) / len(soft), "per_item": hard, "usage": scorer.rt.ledger.totals()})
    summary = {"run_id": run_dir.run_id, "run_dir": str(run_dir.path), "split": split,
               "skill": str(path or "seed skill"), "targets": rows}
    atomic_write_json(run_dir.summary_path, summary)
    return summary
