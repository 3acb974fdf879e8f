"""The night's skills in turn, most used first, each with its fair share of the budget
(:mod:`sleep.cycle.multiskill`): a memory file's lessons routed out of a skill's part
(:mod:`sleep.memory.plan`) and a lesson the gate accepted for one host's skill offered to
the other hosts' join the queue. Each part's record goes to the night's writer."""

from __future__ import annotations

from sleep import nightstore
from sleep.cycle import multiskill, nighttasks
from sleep.cycle.context import NightContext, PartJob
from sleep.cycle.multiskill import SkillGroup
from sleep.cycle.skillpart import run_part
from sleep.cycle.skills import SkillPathError
from sleep.index import Index
from sleep.memory.plan import MemoryPlan
from sleep.nightstore import SkillPart
from sleep.rule_text import Style


def every_skill(ctx: NightContext) -> None:
    """Each skill of the night in turn (see the module docstring); then the night's record over them."""
    project, config, say, writer = ctx.project, ctx.config, ctx.say, ctx.writer
    records, members, sessions = nighttasks.load(project)
    queue = multiskill.skill_groups(project, records, members, sessions, ctx.skill,
                                    config.sleep.min_tasks if config.sleep.paired.per_cluster else 0)
    memory = MemoryPlan(project, records, members, config.sleep)  # lessons about the whole repository
    with Index.open() as index:
        before = multiskill.previous_fingerprints(n for n in nightstore.nights(index, str(project), limit=20)
                                                  if not n.dry_run)
    hosts = multiskill.hosts_of(sessions)
    taken = {g.choice.path for g in queue}
    if len(queue) > 1:
        say(f"[Tasks] {len(queue)} skills this night, most used first: "
            + ", ".join(f"{g.choice.name} ({g.choice.host}, {len(g.records)} tasks)" for g in queue))
    used = {"model_calls": 0, "tokens": 0, "cost_usd": 0.0}
    i = 0
    while i < len(queue):
        group = queue[i]
        part = _one(ctx, PartJob(group, members, _share(ctx, used, len(queue) - i),
                                 writer.night.id if i == 0 else f"{writer.night.id}-{i}",
                                 before.get(str(group.choice.path))), used, memory, queue)
        writer.part_done(group, part)
        used["model_calls"] += part.usage.get("model_calls", 0)
        used["tokens"] += part.usage.get("tokens", 0)
        used["cost_usd"] += part.usage.get("cost_usd", 0.0)
        queue.extend(_lessons(ctx, group, part, members, memory, hosts, taken))
        i += 1
    writer.settle()


def _share(ctx: NightContext, used: dict, left: int):
    """The night's configuration with the next skill's share of what is left of the budget."""
    budget = ctx.config.core.budget
    core = ctx.config.core.model_copy(deep=True)
    core.budget = core.budget.model_copy(update={
        "max_calls": multiskill.budget_share(budget.max_calls, used["model_calls"], left),
        "max_tokens": multiskill.budget_share(budget.max_tokens, used["tokens"], left),
        "max_usd": multiskill.usd_share(budget.max_usd, used["cost_usd"], left)})
    return ctx.config.model_copy(update={"core": core})


def _one(ctx: NightContext, job: PartJob, used: dict, memory: MemoryPlan, queue: list[SkillGroup]) -> SkillPart:
    """One skill's part, unless the budget is spent; one unreadable skill file does not stop the others."""
    group, say = job.group, ctx.say
    spent = multiskill.budget_spent(ctx.config.core.budget, used)
    if spent:
        say(f"[Night] {group.choice.name}: {spent}")
        return SkillPart(ctx.writer.night.id, dry_run=ctx.dry_run, outcome="no_improvement", reason=spent)
    try:
        if memory.enabled and ctx.skill is None and group.edits is None and group.document is None:
            group.edits, more = memory.split(group, nighttasks.edits(group, job.members, ctx.config, Style.of(
                group.choice.seed_text())), nighttasks.evidence(group, job.members, ctx.config), say)
            queue.extend(more)
        memory.started(group)
        return run_part(ctx, job)
    except SkillPathError as exc:
        reason = f"{exc}; nothing was trained or staged for it"
        say(f"[Night] {group.choice.name}: {reason}")
        return SkillPart(ctx.writer.night.id, dry_run=ctx.dry_run, outcome="failed", reason=reason)


def _lessons(ctx: NightContext, group: SkillGroup, part: SkillPart, members: dict[str, list], memory: MemoryPlan,
             hosts, taken: set) -> list[SkillGroup]:
    """The parts a lesson accepted in ``part`` adds: to the other hosts' memory files (a memory
    part's), or to the other hosts' skills (a skill part's, when the night trains every skill)."""
    accepted = part.corrections.get("kept") or []
    if part.outcome not in ("staged", "would_stage") or not accepted or group.lesson_from is not None:
        return []
    out: list[SkillGroup] = []
    if group.document is not None:
        for offer in memory.offers(group, accepted, taken):
            ctx.say(f"[Lesson] {offer.choice.why}: {offer.choice.path}")
            out.append(offer)
    elif len(hosts) > 1 and ctx.skill is None:
        style = Style.of(group.choice.seed_text())
        lesson = [e for e in nighttasks.edits(group, members, ctx.config, style) if e.content in accepted]
        for target in multiskill.lesson_targets(ctx.project, group, hosts, taken):
            ctx.say(f"[Lesson] {len(lesson)} correction(s) accepted for {group.choice.name} ({group.choice.host}) "
                    f"are offered to {target.host}'s skill {target.path}")
            out.append(multiskill.SkillGroup(target, group.records, 0, str(group.choice.path), lesson))
    return out

