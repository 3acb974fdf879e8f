"""Why a night staged nothing, in terms of its data, and what to do next.

Read from the run's summary and its history (typed step records: the current
and candidate val means, the gate's action), as the night holds them in memory. The first reason that
applies is given:

- the budget ran out before any candidate was kept;
- the starting skill already passes every val task (nothing left to show);
- val holds a single task (one task can hardly show a difference);
- every candidate was worse or no better (by how much);
- no step produced a candidate that differed from the skill.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

if TYPE_CHECKING:  # the MCP server's start-up path imports this module; the engine loads later
    from skillopt_core import Edit
    from skillopt_core.run.record import StepRecord


def nothing_staged(summary: Any, history: Sequence[StepRecord], n_val: int, policy: str) -> str:
    """The night's reason when no candidate beat the starting skill (see the module docstring)."""
    base, best = summary.initial_val, summary.best_val
    scores = f"val {_f(base)} → best {_f(best)}, gate {policy}"
    tried = [h for h in history if h.tried]
    steps = f"{summary.steps_done} of {summary.total_steps} step{'s' if summary.total_steps != 1 else ''}"
    if summary.status == "budget_exhausted":
        return (f"the night's budget ran out after {steps} ({scores}) before a candidate beat the skill; nothing "
                "was staged. Next: raise budget.max_calls / budget.max_tokens (e.g. --set budget.max_calls=600), "
                "or lower train.steps_per_epoch")
    if base is not None and base >= 1.0 - 1e-9:
        return (f"the skill already passes all {_tasks(n_val)} val {'task' if n_val == 1 else 'tasks'} "
                f"({scores}): there is nothing to improve on; nothing was staged. Next: nothing to do; new "
                "recurring tasks come as you work (tasks the skill gets wrong are the ones a night can fix)")
    if n_val <= 1:
        return (f"val holds {_tasks(n_val)} task ({scores}): one task can hardly show that a candidate is better; "
                "nothing was staged. Next: work with your agents a few more days so more tasks recur, or lower "
                "sleep.min_support to mine more of them")
    full = [h for h in tried if not h.partial]
    if tried and not full:
        n = len(tried)
        return (f"the gate rejected {'the' if n == 1 else f'all {n}'} candidate{'s' if n != 1 else ''} early, "
                f"after part of val ({tried[-1].gate_evaluated_count} of {tried[-1].gate_item_count} tasks): "
                f"even full marks on the rest could not beat the skill ({scores}); nothing was staged. "
                "Next: a stronger backend (e.g. --backend claude-code) or more steps (--set train.steps_per_epoch=4)")
    tried = full
    if tried:
        deltas = [float(h.candidate_val) - float(h.current_val) for h in tried]  # type: ignore[arg-type]
        best_delta = max(deltas)
        if abs(best_delta) < 1e-9:
            how = "no better"
        elif best_delta < 0:
            how = f"worse, by {-best_delta:.3f} at best"
        else:
            reason = tried[deltas.index(best_delta)].gate_reason or "the gate rejected it"
            how = f"rejected by the gate (the best raised the val mean by {best_delta:.3f}, but: {reason})"
        n = len(tried)
        return (f"{'the' if n == 1 else f'all {n}'} candidate{'s' if n != 1 else ''} "
                f"{'was' if n == 1 else 'were'} {how} ({scores}, over {_tasks(n_val)} val tasks); nothing was "
                "staged. Next: a stronger backend for the optimizer or the replays (e.g. --backend claude-code), "
                "or more steps (--set train.steps_per_epoch=4)")
    return (f"no step produced a candidate that differs from the skill ({steps}; {scores}); nothing was staged. "
            "Next: a stronger optimizer model (model.optimizer_backend), or more steps "
            "(--set train.steps_per_epoch=4)")


def _tasks(n: int) -> str:
    return "one" if n == 1 else str(n)


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


CORRECTION_OUTCOMES = ("kept", "rejected", "refused", "not_selected")
"""What became of each correction a night offered (the night record's and the MCP record's words):
kept by the gate, rejected by the gate, refused before the gate (with the reason), or not selected."""


def correction_outcomes(edits: list, history: Sequence[StepRecord],
                        refused_edits: Iterable[tuple[Edit, str]] = ()) -> dict[str, Any]:
    """Each offered correction edit in exactly one of :data:`CORRECTION_OUTCOMES` (so the
    counts add up to ``offered``), from the run's history (the gate's action on the step that
    selected it) and the edits its steps refused before merging, with why (``refused_edits``)."""
    offered = [e.content for e in edits]
    refused: dict[str, str] = {}
    for edit, why in refused_edits:
        if "correction" in edit.origin:
            refused.setdefault(_norm(edit.content), why or "refused")
    kept: set[str] = set()
    rejected: set[str] = set()
    for record in history:
        for edit in record.selected_edits:
            if "correction" not in edit.origin:
                continue
            if record.accepted:
                kept.add(_norm(edit.content))
            elif record.action.startswith("reject"):
                rejected.add(_norm(edit.content))
    out: dict[str, Any] = {"offered": offered, **{k: [] for k in CORRECTION_OUTCOMES}}
    for content in offered:
        n = _norm(content)
        if n in kept:
            out["kept"].append(content)
        elif n in rejected:
            out["rejected"].append(content)
        elif n in refused:
            out["refused"].append({"content": content, "reason": refused[n]})
        else:
            out["not_selected"].append(content)
    return out


def all_corrections(night: Any) -> dict[str, Any]:
    """The corrections of every skill of ``night`` in one record (the lead skill's alone when
    the night had one skill)."""
    parts = [p.get("corrections") or {} for p in (getattr(night, "skills", None) or [])]
    if len(parts) <= 1:
        return dict(getattr(night, "corrections", None) or {})
    out: dict[str, Any] = {}
    for c in parts:
        if "accepted" in c and "kept" not in c:
            c = {**c, "kept": c["accepted"]}
        for key in ("offered", *CORRECTION_OUTCOMES):
            if key in c:
                out.setdefault(key, []).extend(c[key] or [])
    return out


def describe_corrections(corrections: dict[str, Any]) -> str | None:
    """One line: ``3 offered: 2 kept by the gate, 1 rejected by the gate, 0 refused, 0 not selected``
    (refusals with their reasons); None when none was offered. Reads records written before the
    words were ``kept`` (``accepted``) too."""
    offered = corrections.get("offered") or []
    if not offered:
        return None
    kept = corrections.get("kept", corrections.get("accepted")) or []
    rejected, refused = corrections.get("rejected") or [], corrections.get("refused") or []
    not_selected = corrections.get("not_selected")
    if not_selected is None:
        not_selected = [c for c in offered if c not in kept and c not in rejected]
    line = (f"{len(offered)} offered: {len(kept)} kept by the gate, {len(rejected)} rejected by the gate, "
            f"{len(refused)} refused, {len(not_selected)} not selected")
    reasons = [f"{r.get('content')!r} {r.get('reason')}" for r in refused if isinstance(r, dict)]
    return line + (" (refused: " + "; ".join(reasons) + ")" if reasons else "")


def _norm(text: object) -> str:
    return " ".join(str(text or "").split())
