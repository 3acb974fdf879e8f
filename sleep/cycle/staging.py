"""The gate's verdict on one skill's part and its proposal branch.

The candidate's walk from the trainer to the branch reads no run file: the
evidence (:mod:`sleep.replay.evidence`), the report
(:func:`sleep.proposals.fromrun.report_from_result`) and the staged text come
from the :class:`~skillopt_core.run.api.TrainingResult` in memory; the
evidence is written into the run directory for later readers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from skillopt_core import Task
from skillopt_core.run.api import TrainingResult
from sleep.cycle import lifecycle
from sleep.cycle.context import NightContext, PartJob
from sleep.cycle.replaying import Replay, refused_message
from sleep.cycle.skills import SkillChoice
from sleep.cycle.verdict import nothing_staged
from sleep.memory.plan import notes as memory_notes
from sleep.nightstore import NightProposal, SkillPart
from sleep.proposals.errors import DuplicateProposal


def gate_and_stage(ctx: NightContext, job: PartJob, part: SkillPart, result: TrainingResult, replay: Replay) -> None:
    """Set the part's outcome from its run: failed, no improvement (perhaps the skill's retirement,
    :func:`sleep.cycle.lifecycle.after_gate`), a new skill not shown to help, a dry run's
    ``would_stage``, or the proposal branch staged."""
    group, say, summary = job.group, ctx.say, result.summary
    choice, seed_text, tasks = group.choice, replay.seed_text, replay.tasks
    records = val_evidence(part, result, seed_text, tasks)
    if summary.status in ("failed", "cancelled"):
        refused = (part.replay or {}).get("refused_hosts")
        cause = f"{refused_message(refused)}; the CLI's last error: {summary.error}" if refused else summary.error
        part.outcome, part.reason = "failed", f"the replay {summary.status}: {cause}; nothing was staged"
        say(f"[Night] {part.reason}")
        return

    ctx.writer.progress(group, part, "gate")
    evaluation = job.config.core.evaluation
    improved = (summary.best_val is not None and summary.initial_val is not None
                and summary.best_val > summary.initial_val + 1e-9)
    budget_note = " (the night's budget ran out; the best skill was fully evaluated before)" \
        if summary.status == "budget_exhausted" else ""
    if not improved:
        val = len(result.splits["val"])
        gated = min(val, evaluation.val_limit) if evaluation.val_limit else val  # the val tasks the gate scored
        part.outcome = "no_improvement"
        part.reason = nothing_staged(summary, result.history, gated, evaluation.gate_policy)
        say(f"[Gate] no candidate beat the starting skill (val {_score(summary.initial_val)} → best "
            f"{_score(summary.best_val)}); nothing was staged")  # why: the night's reason, in its summary
        retired = lifecycle.after_gate(part.paired, choice, seed_text, tasks, ctx.project, say, part.id,
                                       part.dry_run, part.reason)
        if retired is not None:
            part.outcome, part.reason = retired.outcome, retired.reason
            part.proposal = cast(NightProposal | None, retired.proposal)
        return
    refused_new = lifecycle.refuse_new_skill(part.paired, choice)
    if refused_new:
        part.outcome, part.reason = "no_improvement", refused_new
        say(f"[Gate] {refused_new}")
        return
    say(f"[Gate] val {_score(summary.initial_val)} → {_score(summary.best_val)} ({summary.best_source}){budget_note}")
    if part.dry_run:
        part.outcome, part.reason = "would_stage", "dry run: the improvement was not staged"
        say(f"[Proposal] {part.reason}")
        return

    ctx.writer.progress(group, part, "stage")
    try:
        part.proposal = proposal = propose(ctx, part, choice, result, replay, records,
                                           memory_notes(group, ctx.project, seed_text, result.best_skill))
    except DuplicateProposal as exc:  # one proposal per lesson (sleep.proposals.lesson)
        part.outcome, part.reason = "already_proposed", str(exc)
        say(f"[Proposal] {part.reason}")
        return
    part.outcome, part.reason = "staged", f"staged as branch {proposal['branch']}"
    say(f"[Proposal] {proposal['id']} on branch {proposal['branch']} ({proposal['where']}); "
        f"review with `skillopt-sleep show {proposal['id']}`")


def val_evidence(part: SkillPart, result: TrainingResult, seed_text: str, tasks: list[Task]) -> list[dict]:
    """Per val instance, before/after actions and verdicts (:mod:`sleep.replay.evidence`), from the
    result's rollouts in memory; written into the run directory (its path in the part's ``replay``)."""
    from sleep.replay import evidence

    records = evidence.val_evidence(result.val_rollouts, seed_text, result.best_skill or seed_text,
                                    list(result.splits["val"]), {t.id: t.prompt for t in tasks})
    part.replay["evidence"] = str(evidence.write(result.reader.path, records))
    return records


def propose(ctx: NightContext, part: SkillPart, choice: SkillChoice, result: TrainingResult, replay: Replay,
            evidence_records: Sequence[dict] = (), extra_notes: Sequence[str] = ()) -> NightProposal:
    """Stage the run's best skill as a proposal branch (:func:`sleep.proposals.stage`)."""
    from sleep.proposals.fromrun import report_from_result
    from sleep.proposals.lesson import evidence_key
    from sleep.proposals.stage import stage

    seed_text, tasks, project = replay.seed_text, replay.tasks, ctx.project
    text, report = report_from_result(result, seed_text)
    rejected = part.corrections.get("rejected") or []
    said = (part.judge_probe or {}).get("sentence", "")
    judged = [f"{said[0].upper()}{said[1:]}."] if said else []  # the model judge probe's line
    notes = judged + list(extra_notes) + list(report.notes) + (
        ["Corrections the gate rejected this night: " + "; ".join(rejected)] if rejected else [])
    lesson_evidence = evidence_key([*(part.corrections.get("offered") or []),
                                    *{f"task:{t.metadata.get('task_id', t.id)}" for t in tasks}])
    report = report.with_(cycle_id=part.id, source="cycle", notes=notes, evidence=list(evidence_records),
                          task_intents={t.id: str(t.metadata.get("intent", "")) for t in tasks},
                          lesson_evidence=lesson_evidence, **lifecycle.report_fields(part.paired, choice))
    proposal = stage(choice.path, text, report, trained_from_text=None if choice.managed else seed_text,
                     project=project if choice.path.is_relative_to(project) else None)
    where = (f"the project's repository {proposal.project}" if proposal.store == "project"
             else f"SkillOpt's skills repository {proposal.repo}")
    return {"id": proposal.id, "branch": proposal.branch, "where": where, "skill_path": str(choice.path)}


def _score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
