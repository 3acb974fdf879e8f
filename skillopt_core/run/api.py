"""Entry points shared by the CLI, the scripts and the MCP server:
``train_run`` (new or resumed) and ``eval_run``."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

import yaml

from skillopt_core.run import events as ev
from skillopt_core.backends import Backend
from skillopt_core.run.budget import UsageLedger
from skillopt_core.run.config import Settings, load_settings
from skillopt_core.tasks.data import split_tasks
from skillopt_core.evaluation.rollout import RolloutCache, mean_score, per_item, run_rollouts
from skillopt_core.run.rundir import RunDir, atomic_write_json, atomic_write_text, new_run_id, read_json
from skillopt_core.run.runtime import build_runtime, initial_skill
from skillopt_core.skill.document import load_skill
from skillopt_core.run.trainer import RunSummary, Trainer, load_notices


def _bus(run_dir: RunDir, subscribers: Iterable[ev.Subscriber]) -> ev.EventBus:
    return ev.EventBus([ev.JsonlEventLog(run_dir.events_path), *subscribers])


def resume_settings(run_path: str | Path, overrides: Sequence[str] = ()) -> Settings:
    """The settings a run was started with (its config.yaml), plus overrides."""
    config = Path(run_path) / "config.yaml"
    if not config.exists():
        raise FileNotFoundError(f"{run_path} is not a run directory (no config.yaml). Pass the folder printed as 'Run directory'.")
    return load_settings(config, overrides)


async def train_run(
    settings: Settings,
    *,
    resume: str | Path | None = None,
    subscribers: Iterable[ev.Subscriber] = (),
    raw_backends: dict[str, Backend] | None = None,
) -> RunSummary:
    ledger = UsageLedger()
    if resume is not None:
        run_dir = RunDir(Path(resume))
        if run_dir.state_path.exists():
            ledger = UsageLedger.from_snapshot(read_json(run_dir.state_path).get("ledger") or {})
    # Backends first: a missing key or endpoint must not leave an empty run directory behind.
    runtime = build_runtime(settings, ledger=ledger, raw_backends=raw_backends)
    if resume is None:
        run_dir = RunDir.create(settings.output.root, settings.env.name, settings.output.run_id)
    atomic_write_text(run_dir.config_path, yaml.safe_dump(settings.to_dict(), sort_keys=False))
    trainer = Trainer(settings, runtime, run_dir, _bus(run_dir, subscribers))
    return await trainer.run()


async def eval_run(
    settings: Settings,
    *,
    skill_path: str | Path | None = None,
    split: str = "test",
    subscribers: Iterable[ev.Subscriber] = (),
    raw_backends: dict[str, Backend] | None = None,
) -> dict:
    """Evaluate one skill on one split; writes ``<root>/<env>/eval-<id>/``."""
    runtime = build_runtime(settings, raw_backends=raw_backends)
    skill = load_skill(skill_path) if skill_path else initial_skill(settings, runtime.env)
    run_dir = RunDir.create(settings.output.root, settings.env.name, f"eval-{settings.output.run_id or new_run_id()}")
    atomic_write_text(run_dir.config_path, yaml.safe_dump(settings.to_dict(), sort_keys=False))
    bus = _bus(run_dir, subscribers)
    data = split_tasks(runtime.env.load_tasks(), seed=settings.env.split_seed, ratio=tuple(settings.env.split_ratio))
    limit = settings.evaluation.test_limit if split == "test" else settings.evaluation.val_limit
    tasks = list(data.split(split))[:limit] if limit else list(data.split(split))
    if not tasks:
        raise ValueError(f"The {split} split is empty ({data.summary()}); load more items or change env.split_ratio.")
    t = settings.train
    cache = RolloutCache(run_dir.cache_path)
    bus.emit(ev.RunStarted(run_dir.run_id, settings.env.name, str(run_dir.path), 0, data.summary(), runtime.describe_backends()))
    for note in load_notices(runtime.env, cache):
        bus.emit(note)
    bus.emit(ev.RolloutStarted(0, 0, split, len(tasks) * t.samples_per_item, t.workers, f"eval {split}"))
    results = await run_rollouts(
        runtime.env, runtime.target, skill, tasks, samples=t.samples_per_item, workers=t.workers,
        cache=cache, seed=t.seed, max_tokens=settings.model.target_max_tokens,
        temperature=settings.model.temperature,
        on_progress=lambda done, total: bus.emit(ev.RolloutProgress(0, split, done, total)),
    )
    hard, soft = mean_score(results, "hard"), mean_score(results, "soft")
    bus.emit(ev.RolloutDone(0, 0, split, hard, len(results), sum(r.cached for r in results), f"eval {split}"))
    summary = {
        "run_id": run_dir.run_id, "run_dir": str(run_dir.path), "split": split, "skill": str(skill_path or "seed skill"),
        "skill_hash": skill.hash, "n_items": len(tasks), "hard": hard, "soft": soft,
        "per_item": per_item(results, "hard"), "usage": runtime.ledger.totals(),
    }
    atomic_write_json(run_dir.path / "results.json", [r.to_dict() for r in results])
    atomic_write_json(run_dir.summary_path, summary)
    return summary
