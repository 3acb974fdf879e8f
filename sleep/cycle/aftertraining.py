"""The steps after a skill's training, its backends and checkout still up: with vs without the
skill (:mod:`sleep.cycle.lifecycle`), the trigger description (:mod:`sleep.cycle.triggers`) and
the package edit (:mod:`sleep.cycle.package`); then the part's spend, the core's ledger and theirs."""

from __future__ import annotations

from typing import Any

from sleep.cycle import lifecycle, package, triggers
from sleep.cycle.context import NightContext, PartJob
from sleep.cycle.replaying import Replay, Trained
from sleep.nightstore import NightUsage, SkillPart


def after_training(ctx: NightContext, job: PartJob, part: SkillPart, trained: Trained, replay: Replay) -> None:
    """Run the steps on a run that ended well; each fills its own field of ``part``. A lesson offered
    from another skill (its tasks are not this skill's own) or a memory file has none of them."""
    group, config, say = job.group, job.config, ctx.say
    if group.lesson_from or group.document is not None:
        return
    choice, settings, backends = group.choice, trained.settings, trained.backends
    used = trained.result.summary.usage.get("calls", 0)
    lifecycle.measure_part(part, choice, replay.seed_text, settings, trained.result, backends, config.sleep.paired,
                           say, n_items=len(replay.tasks), used_calls=used)
    if part.paired.get("verdict") and part.paired.get("kind") == "retire":
        return  # no use tuning a retiree
    left = settings.budget.max_calls - used - (part.paired.get("spent") or {}).get("model_calls", 0) \
        if settings.budget.max_calls else None
    triggers.run_part(part, choice, replay.seed_text, ctx.project, {r.id for r in group.records}, backends,
                      config.sleep.triggers, left, say, config.core.train.workers)
    left = None if left is None else left - (part.triggers.get("spent") or {}).get("model_calls", 0)
    val = set(trained.result.splits["val"])
    package.run_part(part, choice, replay.seed_text, ctx.project, settings,
                     [t for t in trained.result.tasks if t.id in val],
                     backends, config.sleep.package, [t.prompt for t in replay.tasks], say, left)


def count_usage(part: SkillPart, ledger: dict[str, Any]) -> None:
    """The part's spend: the core's ledger (authoritative once the run ended) and the calls of the
    with/without, trigger and package steps."""
    part.usage = NightUsage(model_calls=ledger.get("calls", 0), input_tokens=ledger.get("input_tokens", 0),
                            output_tokens=ledger.get("output_tokens", 0),
                            tokens=ledger.get("input_tokens", 0) + ledger.get("output_tokens", 0),
                            cost_usd=round(ledger.get("cost_usd", 0.0), 6))
    lifecycle.add_spend(part)
    triggers.add_spend(part)
    package.add_spend(part)

