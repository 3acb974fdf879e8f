"""What a proposal says in git: the commit message and the note (pure functions).

The commit message carries numbers and identifiers only: the gate decision and
policy, val scores, per-task deltas by task id, the number of val items, model
names, usage. No prompt text, no transcript text, no intent, no rationale and
no edit content: those go to the report (the git note and the index), after
secret redaction. Identifiers are reduced to one printable line each.

Everything here that reaches git goes through :class:`sleep.redact.OutboundScrubber`
(the redactor and the exact-match filter of every secret a harvest of the index
redacted): the report's fields, the note, the commit message, and each new line of
the candidate skill (:func:`new_secrets`).
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import replace
from typing import Any

from sleep.proposals.model import EditRecord, ProposalReport, RunScores
from sleep.redact import IndexRef, OutboundScrubber, Redactor

MAX_DELTAS_LISTED = 40
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def label(text: Any, limit: int = 64) -> str:
    """``text`` as one short printable line (task ids, model names in a commit message)."""
    out = _UNPRINTABLE.sub(" ", str(text)).strip()
    out = Redactor(use_detect_secrets=False).redact(out)
    return out if len(out) <= limit else out[: limit - 1] + "…"


def score(value: float | None) -> str:
    return "?" if value is None else f"{value:.2f}"


def subject(skill: str, report: ProposalReport, n_edits: int) -> str:
    edits = "1 edit" if n_edits == 1 else f"{n_edits} edits"
    return f"skillopt: {label(skill)} {score(report.baseline_val)} → {score(report.candidate_val)} ({edits})"


def applied_edits(report: ProposalReport) -> int:
    return sum(1 for e in report.edits if e.status == "applied")


def changed_hunks(before: str, after: str) -> int:
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    return sum(1 for _ in matcher.get_grouped_opcodes(0))


def commit_message(skill: str, report: ProposalReport, proposal_id: str, n_edits: int, *,
                   index_id: str | None = None) -> str:
    """The commit message; its trailers name the proposal and the index that staged it
    (``SkillOpt-Index``: only that index may ever clean the branch up)."""
    lines = [subject(skill, report, n_edits), ""]
    if report.gate_accept is None:
        lines.append(f"Gate: not run{_policy(report)}")
    else:
        lines.append(f"Gate: {'accept' if report.gate_accept else 'reject'}{_policy(report)}")
    if report.baseline_val is not None or report.candidate_val is not None:
        delta = ""
        if report.baseline_val is not None and report.candidate_val is not None:
            delta = f" ({report.candidate_val - report.baseline_val:+.3f})"
        lines.append(f"Val: {_f3(report.baseline_val)} → {_f3(report.candidate_val)}{delta}")
    if report.n_val_items is not None:
        lines.append(f"Val items: {report.n_val_items}")
    if not report.edits:
        lines.append(f"Edits: none recorded ({report.source}); {n_edits} changed hunk{'' if n_edits == 1 else 's'}")
    if report.task_deltas:
        lines.append("Per-task deltas (candidate - baseline):")
        ordered = sorted(report.task_deltas.items(), key=lambda kv: (-abs(kv[1]), str(kv[0])))
        width = max(len(label(t)) for t, _ in ordered[:MAX_DELTAS_LISTED])
        for task_id, d in ordered[:MAX_DELTAS_LISTED]:
            lines.append(f"  {label(task_id):<{width}}  {d:+.2f}")
        if len(ordered) > MAX_DELTAS_LISTED:
            lines.append(f"  ... {len(ordered) - MAX_DELTAS_LISTED} more in the report")
    if report.models:
        lines.append("Models: " + ", ".join(f"{label(r, 24)} {label(m)}" for r, m in sorted(report.models.items())))
    if report.usage:
        lines.append("Usage: " + usage_text(report.usage))
    if report.run is not None:
        lines.append(f"Run: {label(report.run.run_id)} (val {_f3(report.run.initial_val)} → "
                     f"{_f3(report.run.best_val)}, test {_f3(report.run.initial_test)} → {_f3(report.run.best_test)})")
    if report.cycle_id:
        lines.append(f"Cycle: {label(report.cycle_id)}")
    if report.trained_from_sha256:
        where = "working tree, uncommitted changes" if report.uncommitted_changes else "as committed"
        lines.append(f"Trained from: sha256 {report.trained_from_sha256[:12]} ({where})")
    lines += ["", f"SkillOpt-Proposal: {proposal_id}"] + ([f"SkillOpt-Index: {index_id}"] if index_id else [])
    return "\n".join(lines) + "\n"


def usage_text(usage: dict[str, Any]) -> str:
    parts = []
    if usage.get("calls") is not None:
        parts.append(f"{int(usage['calls']):,} calls")
    if usage.get("input_tokens") is not None:
        parts.append(f"{int(usage['input_tokens']):,} input tokens")
    if usage.get("output_tokens") is not None:
        parts.append(f"{int(usage['output_tokens']):,} output tokens")
    if usage.get("cost_usd"):
        parts.append(f"${float(usage['cost_usd']):,.2f}")
    return ", ".join(parts) or "not recorded"


def note_text(report: ProposalReport, *, proposal_id: str, skill: str, branch: str, tree_path: str,
              night: str, index: IndexRef = None) -> str:
    """The git note: the whole report as JSON, every string of it scrubbed (field by
    field, so the JSON stays valid)."""
    payload = {"proposal_id": proposal_id, "skill": skill, "branch": branch, "path": tree_path,
               "night": night, "report": report.to_dict()}
    return json.dumps(OutboundScrubber(index).value(payload), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def scrub_message(message: str, index: IndexRef = None) -> str:
    """The commit message as it may enter git (:func:`sleep.redact.scrub_outbound`)."""
    return OutboundScrubber(index)(message)


def redact_report(report: ProposalReport, index: IndexRef = None) -> tuple[ProposalReport, int]:
    """The report with secrets in every free-text field replaced by typed markers, and
    every value a harvest of ``index`` ever redacted replaced too.

    Task ids stay as they are: they are identifiers the product made (a
    redacted id would merge deltas); commit messages show them through :func:`label`.
    """
    from sleep.proposals import evidence as evidence_records  # it reads label() from here

    r = OutboundScrubber(index)
    red = r
    out = replace(
        report,
        gate_reason=red(report.gate_reason),
        task_intents={k: red(v) for k, v in report.task_intents.items()},
        edits=[EditRecord(e.op, red(e.target), red(e.content), red(e.rationale),
                          red(e.anchor) if e.anchor is not None else None, e.status, e.step)
               for e in report.edits],
        models={red(k): red(v) for k, v in report.models.items()},
        cycle_id=red(report.cycle_id) if report.cycle_id else report.cycle_id,
        notes=[red(n) for n in report.notes],
        evidence=evidence_records.redact(report.evidence, red),
        run=replace(report.run, run_id=red(report.run.run_id), run_dir=red(report.run.run_dir))
        if isinstance(report.run, RunScores) else report.run,
    )
    return out, r.total


def new_secrets(candidate: str, trained_from: str | None, index: IndexRef = None) -> list[tuple[int, str]]:
    """(line number, kinds) of each line of ``candidate`` that holds a secret and is not
    already in ``trained_from`` (a skill that already had it is the person's business):
    a secret the redactor recognises, or a value a harvest of ``index`` redacted
    (``known-secret``) in whatever form the rules would miss."""
    known = set((trained_from or "").splitlines())
    scrubber = OutboundScrubber(index)
    found = []
    for n, line in enumerate(candidate.splitlines(), 1):
        if line in known:
            continue
        kinds = scrubber.findings(line)
        if kinds:
            found.append((n, ", ".join(sorted(set(kinds)))))
    return found


def _policy(report: ProposalReport) -> str:
    return f" (policy {label(report.policy, 24)})" if report.policy else ""


def _f3(value: float | None) -> str:
    return "?" if value is None else f"{value:.3f}"
