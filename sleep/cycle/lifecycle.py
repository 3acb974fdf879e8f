"""A skill's life in the night: retire one that does not help, create one only when it helps.

:mod:`sleep.cycle.paired` measures; this module is the night's side. After a
skill's training run (its backends and checkout still up) :func:`measure_part`
pairs, on every instance of the skill's tasks,

- an existing skill's file text with no skill (the part's ``paired``, ``kind``
  ``retire``), and
- a new (managed) skill's best candidate with no skill (``kind`` ``create``),

and returns the comparison (:class:`sleep.cycle.stepresult.StepResult`); after
the gate, :func:`after_gate` returns the part's outcome. An existing skill whose tasks score no worse
without it (:func:`sleep.cycle.paired.retire_verdict`) and that the gate could
not improve gets a *retire* proposal: a branch that deletes its ``SKILL.md``
(other files of its folder stay; the host no longer lists the skill), with the
paired comparison in the report. Nothing is deleted until the person adopts it,
and ``undo`` restores the file byte for byte. A new skill is staged only when
it measurably helps (:func:`sleep.cycle.paired.create_verdict`); its proposal
carries the comparison too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sleep.cycle.paired import PairedSettings, create_verdict, measure, retire_verdict
from sleep.cycle.stepresult import Outcome, Spent, StepResult

Say = Callable[[str], None]


def measure_part(choice: Any, seed_text: str, settings: Any, result: Any, backends: dict, cfg: PairedSettings,
                 say: Say, n_items: int, used_calls: int = 0) -> StepResult | None:
    """The part's ``paired`` step (see the module docstring), from the run's in-memory ``result`` (its
    tasks, rollouts and best skill; no run file is read); a failure is returned, never raised; None
    when there is nothing to measure. No call is made for fewer than ``min_instances`` items, or when
    the part's budget (``settings.budget.max_calls`` less the ``used_calls`` of training) cannot pay
    for both arms."""
    if choice.managed:
        if not cfg.gate_new_skills:
            return None
        text = result.best_skill or seed_text
        if text == seed_text:
            return None  # nothing trained: nothing to create
        kind = "create"
    else:
        if not cfg.retire:
            return None
        text, kind = seed_text, "retire"
    if n_items < cfg.min_instances:
        return StepResult("paired", {"kind": kind}, skipped=f"{n_items} item(s), fewer than sleep.paired."
                          f"min_instances={cfg.min_instances}: not measured with and without the skill")
    limit = settings.budget.max_calls
    if limit:
        left = limit - used_calls
        if left < 2 * n_items * settings.train.samples_per_item:
            skipped = (f"the budget has {max(left, 0)} call(s) left; measuring with and without the skill may "
                       f"need {2 * n_items}")
            say(f"[Paired] {choice.name}: {skipped}")
            return StepResult("paired", {"kind": kind}, skipped=skipped)
        settings = settings.model_copy(deep=True)
        settings.budget = settings.budget.model_copy(update={"max_calls": left})
    say(f"[Paired] {choice.name}: measuring {n_items} items with and without the skill "
        f"({2 * n_items * settings.train.samples_per_item} rollouts at most)...")
    try:
        comparison = measure(settings, result, backends, text, level=cfg.level)
    except Exception as exc:
        say(f"[Paired] {choice.name}: not measured with and without the skill ({exc})")
        return StepResult("paired", {"kind": kind}, error=f"{type(exc).__name__}: {exc}")
    verdict, why = (retire_verdict if kind == "retire" else create_verdict)(comparison, cfg)
    say(f"[Paired] {choice.name}: {comparison['summary']}")
    return StepResult("paired", {"kind": kind, "verdict": verdict, "why": why, **comparison},
                      spent=Spent.of_ledger(comparison.get("usage") or {}))


def refuse_new_skill(paired: Mapping[str, Any], choice: Any) -> str | None:
    """Why the improved managed skill is not staged (the part's ``paired`` record does not show it
    beats no skill), or None."""
    if not choice.managed or paired.get("kind") != "create" or paired.get("verdict", True):
        return None
    return f"{paired['why']}; nothing was staged (sleep.paired.gate_new_skills)"


def report_fields(paired: Mapping[str, Any], choice: Any) -> dict[str, Any]:
    """``kind`` and ``paired`` for the proposal report of the part's edit or new skill."""
    out: dict[str, Any] = {"kind": "create" if choice.managed else "edit"}
    if paired.get("kind") == "create" and "n_items" in paired:
        out["paired"] = _evidence(paired)
    return out


def after_gate(paired: Mapping[str, Any], choice: Any, seed_text: str, tasks: list, project: Path, say: Say,
               night_id: str, dry_run: bool, reason: str) -> Outcome | None:
    """The part's outcome when the gate could not improve the skill and its ``paired`` record says it
    does not help: its retirement staged, or ``reason`` with why not (None: nothing to add)."""
    if paired.get("kind") != "retire" or not paired.get("verdict"):
        return None
    if dry_run:
        return Outcome("no_improvement", f"{reason}; dry run: the skill's retirement was not staged")
    from sleep.proposals.errors import DuplicateProposal, NothingToPropose
    from sleep.proposals.lesson import evidence_key
    from sleep.proposals.model import ProposalReport
    from sleep.proposals.stage import stage

    per_item = paired.get("per_item") or {}
    report = ProposalReport(
        baseline_val=paired["mean_a"], candidate_val=paired["mean_b"], policy="paired non-inferiority",
        gate_accept=True, gate_reason=paired["why"], n_val_items=paired["n_items"],
        task_deltas={k: round(v["b"] - v["a"], 6) for k, v in per_item.items()},
        task_intents={t.id: str(t.metadata.get("intent", "")) for t in tasks}, cycle_id=night_id, source="cycle",
        notes=[f"Retire skill {choice.name}: {paired['why']}.",
               f"Adopting deletes {choice.path} (the host stops listing the skill; other files of its folder stay); "
               "`skillopt-sleep undo` restores it byte for byte."],
        lesson_evidence=evidence_key(["retire", *{f"task:{t.metadata.get('task_id', t.id)}" for t in tasks}]),
        kind="retire", paired=_evidence(paired))
    try:
        proposal = stage(choice.path, None, report, trained_from_text=seed_text,
                         project=project if choice.path.is_relative_to(project) else None)
    except (DuplicateProposal, NothingToPropose) as exc:
        say(f"[Retire] {choice.name}: {exc}")
        return Outcome("no_improvement", f"{reason}; its retirement was not staged: {exc}")
    where = (f"the project's repository {proposal.project}" if proposal.store == "project"
             else f"SkillOpt's skills repository {proposal.repo}")
    say(f"[Retire] {proposal.id} on branch {proposal.branch} proposes retiring {choice.name}: {paired['why']}; "
        f"review with `skillopt-sleep show {proposal.id}`")
    return Outcome("staged", f"the skill does not help ({paired['why']}); its retirement is staged as branch "
                             f"{proposal.branch}",
                   {"id": proposal.id, "branch": proposal.branch, "where": where, "skill_path": str(choice.path),
                    "kind": "retire"})


def _evidence(paired: Mapping[str, Any]) -> dict[str, Any]:
    keep = ("kind", "why", "metric", "n_items", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "level", "wins",
            "losses", "ties", "mcnemar_p", "significant", "summary", "per_item")
    return {k: paired[k] for k in keep if k in paired}
