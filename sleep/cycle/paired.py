"""With or without a skill: the paired measurement behind retirement and new-skill proposals.

After a skill's training run, while its backends and disposable checkout are
still up, every instance of the skill's own tasks (train, val and test: no
choice was made on them here, so all of them are fair) is answered once with
the skill and once without any skill, on the same items and sample seeds, and
compared with :func:`skillopt_core.evaluation.stats.paired_comparison`, the
statistics ``skillopt compare`` reports (per-item wins / losses / ties, a
seeded bootstrap interval of the mean difference, the exact McNemar test for
pass/fail scores). It works on what the night holds in memory (the core's
``TrainingResult``: the run's tasks and its rollout cache), reading no run
file; rollouts of the skill that training already made come from that cache
and cost nothing.

Verdicts (:class:`PairedSettings`, ``sleep.paired`` in the configuration):

- **retire** an existing skill when there are at least ``min_instances``
  items and the interval's lower bound of *without − with* is at least
  ``-margin`` (a non-inferiority test: its tasks are shown to score no worse
  without it) and at least ``min_untied`` of those items scored differently
  with and without it. With fewer items, or when nearly every item ties (all
  pass or all fail either way: its tasks cannot tell the skill from no skill,
  and an interval of [0, 0] says nothing), the night says so and proposes
  nothing.
- **create** a new (managed) skill only when *best − without* is shown to be
  positive (the interval's lower bound above zero) over at least
  ``min_instances`` items: a new skill must measurably help the tasks no
  skill served.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skillopt_core.evaluation.cache import RolloutCache
from skillopt_core.evaluation.rollout import run_rollouts
from skillopt_core.evaluation.stats import average_within_item, paired_comparison
from skillopt_core.run.config import Settings
from skillopt_core.run.rundir import RunDir
from skillopt_core.run.runtime import build_runtime
from skillopt_core.skill.document import Skill

NO_SKILL = Skill.parse("", source="no skill")


class PairedSettings(BaseModel):
    """``sleep.paired``: the with/without measurement (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    retire: bool = True  # measure existing skills and propose retiring those that do not help
    gate_new_skills: bool = True  # a new skill is staged only when it measurably beats no skill
    per_cluster: bool = True  # unserved tasks of several kinds of work: a new skill per kind (sleep.cycle.newskills)
    min_instances: int = Field(default=8, ge=2)  # fewer paired items say too little to retire or create
    # Fewer items that score differently with and without the skill than this: all ties say nothing, no retirement.
    min_untied: int = Field(default=3, ge=0)
    margin: float = Field(default=0.0, ge=0.0, le=1.0)  # non-inferiority margin of without − with
    level: float = Field(default=0.95, gt=0.5, lt=1.0)  # the bootstrap interval's level


def measure(settings: Settings, result: Any, backends: dict[str, Any], skill_text: str,
            level: float = 0.95) -> dict[str, Any]:
    """``skill_text`` (A) against no skill (B) on every item of the training run whose in-memory
    :class:`skillopt_core.run.api.TrainingResult` is ``result``: its tasks as they ran
    (``result.tasks``) and its rollout cache (``result.rollout_rows``); no run file is read. New
    rollouts are appended to the run's cache file. Returns the comparison's dict (B − A: ``diff``,
    ``ci_low``, ``ci_high``, ``wins``/``losses``/``ties``, ``mcnemar_p``, ``per_item``) plus
    ``summary`` and ``usage`` of these calls."""
    tasks = list(result.tasks)
    if not tasks:
        raise ValueError(f"the run {result.summary.run_dir} holds no tasks to measure")
    runtime = build_runtime(settings, raw_backends=dict(backends))
    cache = RolloutCache.from_rows(result.rollout_rows, RunDir(Path(result.summary.run_dir)).cache_path)
    metric = settings.evaluation.gate_metric
    t = settings.train

    async def scores(skill: Skill) -> dict[str, float]:
        results = await run_rollouts(runtime.env, runtime.target, skill, tasks, samples=t.samples_per_item,
                                     workers=t.workers, cache=cache, seed=t.seed,
                                     max_tokens=settings.model.target_max_tokens,
                                     temperature=settings.model.temperature, metric=metric)
        return average_within_item((r.task_id, getattr(r.score, metric)) for r in results)

    async def both() -> tuple[dict[str, float], dict[str, float]]:
        return await scores(Skill.parse(skill_text, source="skill")), await scores(NO_SKILL)

    with_skill, without = asyncio.run(both())
    comparison = paired_comparison(with_skill, without, level=level, seed=t.seed)
    return {**comparison.to_dict(), "metric": metric,
            "summary": comparison.summary("with the skill", "without it"), "usage": runtime.ledger.totals()}


def retire_verdict(comparison: dict[str, Any], settings: PairedSettings) -> tuple[bool, str]:
    """(retire?, why) from :func:`measure`'s comparison of the skill (A) with no skill (B)."""
    n = comparison["n_items"]
    if n < settings.min_instances:
        return False, (f"only {n} paired item(s), fewer than sleep.paired.min_instances={settings.min_instances}: "
                       "too few to say the skill does not help")
    untied = comparison["wins"] + comparison["losses"]
    if untied < settings.min_untied:
        return False, (f"{comparison['ties']} of {n} paired items tie and only {untied} differ with and without "
                       f"the skill, fewer than sleep.paired.min_untied={settings.min_untied}: its tasks cannot "
                       "tell the skill from no skill, so they do not show it does not help")
    if comparison["ci_low"] >= -settings.margin - 1e-12:
        return True, (f"its own tasks score no worse without it: without − with {comparison['diff']:+.3f} "
                      f"({comparison['level']:.0%} CI {comparison['ci_low']:+.3f} .. {comparison['ci_high']:+.3f}, "
                      f"margin {settings.margin:g}) over {n} items; {comparison['wins']} better without, "
                      f"{comparison['losses']} worse, {comparison['ties']} ties")
    return False, (f"it helps or may help: without − with {comparison['diff']:+.3f} (CI {comparison['ci_low']:+.3f} .. "
                   f"{comparison['ci_high']:+.3f}) over {n} items")


def create_verdict(comparison: dict[str, Any], settings: PairedSettings) -> tuple[bool, str]:
    """(create?, why) from :func:`measure`'s comparison of the new skill (A) with no skill (B)."""
    n = comparison["n_items"]
    gain = -comparison["diff"]
    low, high = -comparison["ci_high"], -comparison["ci_low"]
    figures = f"with − without {gain:+.3f} ({comparison['level']:.0%} CI {low:+.3f} .. {high:+.3f}) over {n} items"
    if n < settings.min_instances:
        return False, (f"{figures}: fewer than sleep.paired.min_instances={settings.min_instances} items, too few "
                       "to show that a new skill helps")
    if low > 0:
        return True, f"the new skill measurably helps its tasks: {figures}"
    return False, f"the new skill is not shown to help its tasks over no skill: {figures}"
