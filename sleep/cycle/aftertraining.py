"""The steps after a skill's training, its backends and checkout still up: with vs without the
skill (:mod:`sleep.cycle.lifecycle`), the trigger description (:mod:`sleep.cycle.triggers`) and
the package edit (:mod:`sleep.cycle.package`). Each returns a
:class:`~sleep.cycle.stepresult.StepResult`, which the night's writer records in the part."""

from __future__ import annotations

from sleep.cycle import lifecycle, package, triggers
from sleep.cycle.context import NightContext, PartJob
from sleep.cycle.replaying import Replay, Trained
from sleep.cycle.stepresult import StepResult
from sleep.nightstore import SkillPart


def after_training(ctx: NightContext, job: PartJob, part: SkillPart, trained: Trained,
                   replay: Replay) -> list[StepResult]:
    """Run the steps on a run that ended well, each recorded as it ends (see the module docstring);
    their results. A lesson offered from another skill (its tasks are not this skill's own) or a
    memory file has none of them; a skill to retire is not tuned."""
    group, config, say = job.group, job.config, ctx.say
    if group.lesson_from or group.document is not None:
        return []
    choice, settings, backends, result = group.choice, trained.settings, trained.backends, trained.result
    used = result.summary.usage.get("calls", 0)
    done: list[StepResult] = []

    def record(step: StepResult | None) -> StepResult | None:
        if step is not None:
            ctx.writer.step_done(group, part, step)
            done.append(step)
        return step

    def left() -> int | None:  # the calls the part's budget has left
        return settings.budget.max_calls - used - sum(s.calls for s in done) if settings.budget.max_calls else None

    paired = record(lifecycle.measure_part(choice, replay.seed_text, settings, result, backends,
                                           config.sleep.paired, say, n_items=len(replay.tasks), used_calls=used))
    if paired is not None and paired.get("verdict") and paired.get("kind") == "retire":
        return done  # no use tuning a retiree
    record(triggers.run_part(choice, replay.seed_text, ctx.project, {r.id for r in group.records}, backends,
                             config.sleep.triggers, left(), say, part.id, part.dry_run, config.core.train.workers))
    val = set(result.splits["val"])
    record(package.run_part(choice, replay.seed_text, ctx.project, settings, [t for t in result.tasks if t.id in val],
                            backends, config.sleep.package, [t.prompt for t in replay.tasks], say, part.id,
                            part.dry_run, (part.replay or {}).get("mode") == "actions", left()))
    return done
