"""One skill's part of the night: its items, idle or too few, the replay through the core
trainer and the steps after it, the run's figures, then the gate and the proposal
(:mod:`sleep.cycle.staging`). It returns the part's record (:class:`sleep.nightstore.SkillPart`);
the night's writer saves it at the part's stages (``replay``, ``gate``, ``stage``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import cast

from skillopt_core.run.api import TrainingResult
from sleep.cycle import aftertraining, nighttasks, staging
from sleep.cycle.context import NightContext, PartJob
from sleep.cycle.corrections import with_own_words
from sleep.cycle.judgeprobe import TooFewJudged
from sleep.cycle.replaying import Replay, replaying
from sleep.cycle.verdict import correction_outcomes
from sleep.nightstore import NightCorrections, NightScores, NightTasks, NightUsage, SkillPart
from sleep.replay.instances import MIN_MEANINGFUL_VAL
from sleep.rule_text import Style


def run_part(ctx: NightContext, job: PartJob) -> SkillPart:
    """The part of ``job.group``'s skill (see the module docstring); ``ctx.config``: the night's
    configuration (the fingerprint's), ``job.config``: with this skill's share of the budget."""
    part = SkillPart(ctx.writer.night.id, dry_run=ctx.dry_run)
    group, config, say = job.group, job.config, ctx.say
    choice = group.choice
    tasks = nighttasks.items(group.records, job.members, config)
    n_tasks = len({t.metadata.get("task_id", t.id) for t in tasks})
    say(f"[Tasks] {n_tasks} enabled tasks ({len(tasks)} instances) for skill {choice.name} ({choice.why}): "
        f"{choice.path}")
    if n_tasks < config.sleep.min_tasks:
        part.outcome = "too_few_tasks"
        part.reason = (f"{n_tasks} usable recurring task{'' if n_tasks == 1 else 's'} for skill {choice.name}, "
                       f"fewer than sleep.min_tasks={config.sleep.min_tasks}; "
                       "nothing was trained or staged for it. Work with your agents a few more days, or lower "
                       "sleep.min_tasks / sleep.min_support.")
        say(f"[Night] {part.reason}")
        return part
    seed_text = choice.seed_text()
    tasks = with_own_words(tasks, job.members)  # the judge guard never counts the person's words as the judge's
    edits = group.edits if group.edits is not None else nighttasks.edits(group, job.members, config,
                                                                         Style.of(seed_text))
    part.fingerprint = nighttasks.fingerprint(tasks, seed_text, ctx.config, edits)
    if ctx.config.sleep.skip_idle and job.last is not None and job.last[0] == part.fingerprint:
        part.outcome = "idle"
        part.reason = (f"nothing changed for skill {choice.name} since night {job.last[1]} (same tasks, judges, "
                       "corrections and skill); 0 model calls")
        say(f"[Night] idle: {part.reason}")
        return part

    ctx.writer.progress(group, part, "replay")
    replay = Replay(tasks, seed_text, edits, Counter({choice.host: 1}) if group.lesson_from else None)
    try:
        with replaying(ctx, job, part, replay) as trained:
            replay = replace(replay, tasks=trained.tasks)  # the model judge probe may have changed them
            steps = aftertraining.after_training(ctx, job, part, trained, replay) \
                if trained.result.summary.status not in ("failed", "cancelled") else []
    except TooFewJudged as exc:  # the probe left the model judge out; too few tasks have rules of their own
        part.outcome, part.reason = "too_few_tasks", exc.reason
        part.usage = cast(NightUsage, exc.result.spent.usage())
        say(f"[Night] {part.reason}")
        return part
    result = trained.result
    part.run_dir = result.summary.run_dir
    ctx.writer.spent_in_all(part, result.summary.usage, steps, trained.probe_spent)
    _record_run(ctx, job, part, result, replay)
    staging.gate_and_stage(ctx, job, part, result, replay)
    return part


def _record_run(ctx: NightContext, job: PartJob, part: SkillPart, result: TrainingResult, replay: Replay) -> None:
    """The run's figures in the part: its corrections' outcomes, its split and its scores."""
    summary, history, splits, say = result.summary, result.history, result.splits, ctx.say
    part.corrections = cast(NightCorrections, correction_outcomes(
        replay.edits, history, [r for h in history for r in result.step_refused(h.step)]))
    tasks = replay.tasks
    part.tasks = NightTasks(train=splits["train"], val=splits["val"], total=len(tasks),
                            recurring=len({t.metadata.get("task_id", t.id) for t in tasks}))
    say(f"[Tasks] {len(splits['train'])} train and {len(splits['val'])} val items")
    if len(splits["val"]) < MIN_MEANINGFUL_VAL:
        part.tasks["note"] = (f"only {len(splits['val'])} val item(s): the gate's decision says little; "
                              "raise sleep.instances_per_task or wait for more sessions")
        say(f"[Tasks] {part.tasks['note']}")
    part.scores = NightScores(baseline=summary.initial_val, candidate=summary.best_val, status=summary.status,
                              best_source=summary.best_source, policy=job.config.core.evaluation.gate_policy)
