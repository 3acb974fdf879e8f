"""How proposals read on a terminal (pure functions of :class:`Proposal`)."""

from __future__ import annotations

from pathlib import Path

from rich.cells import cell_len

from sleep.proposals.evidence import instances, table_lines
from sleep.proposals.message import label, score, usage_text
from sleep.proposals.model import Proposal

_HEADER = ("ID", "PROJECT", "SKILL", "BRANCH", "NIGHT", "VAL", "EDITS", "STATE")


def project_label(p: Proposal) -> str:
    if p.project:
        return Path(p.project).name or p.project
    return "(user skills)"


def review_lines(proposals: list[Proposal]) -> list[str]:
    """One line per proposal (and an indented reason under a stale one)."""
    rows = [_HEADER] + [(p.id, project_label(p), p.skill_name, p.branch, p.night,
                         f"{score(p.baseline_val)} → {score(p.candidate_val)}", str(p.n_edits), p.state)
                        for p in proposals]
    # Terminal cells, not characters: a CJK or emoji character takes two (rich's measure).
    widths = [max(cell_len(r[i]) for r in rows) for i in range(len(_HEADER))]
    out = []
    for i, row in enumerate(rows):
        out.append("  ".join(cell + " " * (widths[j] - cell_len(cell)) for j, cell in enumerate(row)).rstrip())
        if i and proposals[i - 1].stale_reason:
            out.append(" " * (widths[0] + 2) + f"stale: {proposals[i - 1].stale_reason}")
    return out


def report_text(p: Proposal) -> str:
    """The report of ``show``: where, what scores, which tasks, which edits, why."""
    r = p.report
    lines = [f"Proposal {p.id} · {p.state}"]
    if p.stale_reason:
        lines.append(f"  stale: {p.stale_reason}")
    lines += [
        f"Skill         {p.skill_name}  {p.skill_path}",
        f"Project       {p.project or '-'}" + ("" if p.store == "project" else f"  (versioned in {p.repo})"),
        f"Branch        {p.branch}  (commit {p.commit[:12]}, parent {p.parent[:12]})",
        f"Night         {p.night}  staged {p.created_at}" + (f"  cycle {p.cycle_id}" if p.cycle_id else ""),
    ]
    val = f"Val           {_f3(r.baseline_val)} → {_f3(r.candidate_val)}"
    if r.baseline_val is not None and r.candidate_val is not None:
        val += f" ({r.candidate_val - r.baseline_val:+.3f})"
    gate = "not run" if r.gate_accept is None else ("accept" if r.gate_accept else "reject")
    val += f"   gate {gate}" + (f", policy {r.policy}" if r.policy else "")
    val += f", {r.n_val_items} val items" if r.n_val_items is not None else ""
    lines.append(val)
    if r.gate_reason:
        lines.append(f"              {r.gate_reason}")
    if r.run:
        lines.append(f"Run           {r.run.run_id} ({r.run.status or '?'}): val {_f3(r.run.initial_val)} → "
                     f"{_f3(r.run.best_val)}, test {_f3(r.run.initial_test)} → {_f3(r.run.best_test)}")
    if r.models:
        lines.append("Models        " + ", ".join(f"{k} {v}" for k, v in sorted(r.models.items())))
    if r.usage:
        lines.append(f"Usage         {usage_text(r.usage)}")
    if r.trained_from_sha256:
        where = "working tree, uncommitted changes" if r.uncommitted_changes else "as committed"
        lines.append(f"Trained from  sha256 {r.trained_from_sha256[:12]} ({where})")
    else:
        lines.append("Trained from  no file (a new skill)")
    if r.task_deltas:
        lines.append("Per-task deltas (candidate - baseline):")
        for task_id, d in sorted(r.task_deltas.items(), key=lambda kv: (-abs(kv[1]), kv[0])):
            intent = r.task_intents.get(task_id, "")
            lines.append(f"  {label(task_id):<20} {d:+.2f}" + (f"  {label(intent, 90)}" if intent else ""))
    if r.edits:
        lines.append(f"Edits ({len(r.edits)}):")
        for n, e in enumerate(r.edits, 1):
            what = e.content if e.op == "add" else e.target
            where = f" after {label(e.anchor, 40)!r}" if e.op == "add" and e.anchor else ""
            into = f" → {label(e.content, 60)!r}" if e.op == "replace" else ""
            lines.append(f"  {n}. {e.op}{where}: {label(what, 90)!r}{into}")
            if e.rationale:
                lines.append(f"     why: {label(e.rationale, 200)}")
    else:
        lines.append(f"Edits         none recorded ({r.source}); "
                     f"{p.n_edits} changed hunk{'' if p.n_edits == 1 else 's'}")
    evidence = instances(r.evidence)
    if evidence:
        lines.append(f"Evidence per val instance ({len(evidence)}): "
                     "the starting skill (before) → the candidate (after)")
        lines += table_lines(evidence)
    if r.notes:
        lines.append("Notes:")
        lines += [f"  - {n}" for n in r.notes]
    if p.decided_at:
        lines.append(f"Decided       {p.state} by {p.decided_by or '?'} at {p.decided_at}"
                     + (f": {p.reason}" if p.reason else ""))
        if p.adopted_commit:
            lines.append(f"              commit {p.adopted_commit[:12]}")
    return "\n".join(lines)


def _f3(value: float | None) -> str:
    return "?" if value is None else f"{value:.3f}"
