"""A training run as a proposal: its best skill and its evidence.

:func:`report_from_result` builds the report from a run the caller just held in
memory (:class:`skillopt_core.run.api.TrainingResult`: the night), reading no
file; :func:`report_from_run` from a ``skillopt train`` run directory, through
the engine's one reader (:class:`skillopt_core.run.reader.RunReader`). The
report carries the run's scores (initial → best val and test), the edits of
the accepted steps with their rationales, and per-task deltas: for each val
task, the sum of its gate deltas over the accepted steps (the items each gate
evaluated).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import yaml

from skillopt_core.run.reader import RunFileError, RunReader
from skillopt_core.run.record import GateRecord, RecordError, SelectedEdit, StepRecord
from sleep.proposals.errors import RunDirError
from sleep.proposals.model import EditRecord, ProposalReport, RunScores

if TYPE_CHECKING:
    from skillopt_core.run.api import TrainingResult


def report_from_result(result: TrainingResult, live_text: str | None = None) -> tuple[str, ProposalReport]:
    """The best skill text and the report of a run held in memory (no file is read)."""
    report = _report(result.reader.path, result.summary.to_dict(), list(result.history), result.settings.to_dict(),
                     result.backends, result.step_selected, result.step_gate, result.initial_skill, live_text)
    return result.best_skill, report


def report_from_run(run_dir: str | Path, live_text: str | None = None) -> tuple[str, ProposalReport]:
    """The run's best skill text and a report of its evidence.

    ``live_text``: the live skill's text now; when the run started from a
    different text, the report says its scores compare the run's initial skill.
    """
    root = Path(run_dir).expanduser()
    reader = RunReader(root)
    if not root.is_dir():
        raise RunDirError(f"{root} is not a folder; pass a run directory such as outputs/<env>/<run_id>.")
    if not reader.exists(reader.BEST_SKILL) or not reader.exists(reader.SUMMARY):
        raise RunDirError(f"{root} is not a finished `skillopt train` run (it needs best_skill.md and "
                          "summary.json); pass the folder printed as 'Run directory', after the run ends.")
    summary = _read(reader, reader.SUMMARY, dict)
    history = _read(reader, reader.HISTORY, list) if reader.exists(reader.HISTORY) else []
    try:
        steps = [StepRecord.from_dict(h) for h in history]
    except RecordError as exc:
        raise RunDirError(f"{reader.file(reader.HISTORY)}: {exc}") from None
    best = reader.best_skill() or ""
    initial = reader.initial_skill() if reader.exists(reader.skill_file(0)) else None
    return best, _report(root, summary, steps, reader.config(), reader.backends_used(), reader.step_selected,
                         reader.step_gate, initial, live_text)


def _report(root: Path, summary: dict[str, Any], history: Sequence[StepRecord], config: dict[str, Any],
            backends: dict[str, str], selected: Callable[[int], list[SelectedEdit]],
            gate: Callable[[int], GateRecord | None], initial: str | None, live_text: str | None) -> ProposalReport:
    accepted = [h for h in history if h.accepted]
    edits: list[EditRecord] = []
    deltas: dict[str, float] = {}
    for h in accepted:
        edits += [EditRecord.from_dict({**e.to_dict(), "step": h.step}) for e in selected(h.step) if e.applied]
        decision = gate(h.step)
        for task_id, d in (decision.deltas if decision is not None else {}).items():
            deltas[str(task_id)] = round(deltas.get(str(task_id), 0.0) + float(d), 9)
    evaluation = config.get("evaluation") or {}
    notes = [f"from the skillopt train run {root}: {summary.get('status', '?')} after "
             f"{summary.get('steps_done', '?')} of {summary.get('total_steps', '?')} steps"]
    if live_text is not None and initial is not None and _sha(initial.encode("utf-8")) != _sha(live_text.encode("utf-8")):
        notes.append("the run started from a different text than the live file, so its scores compare the "
                     "run's initial skill with its best, not the live file with the candidate.")
    run = RunScores(
        run_id=str(summary.get("run_id") or root.name), run_dir=str(root.resolve()), status=summary.get("status"),
        steps_done=summary.get("steps_done"), initial_val=summary.get("initial_val"),
        best_val=summary.get("best_val"), initial_test=summary.get("initial_test"),
        best_test=summary.get("best_test"), accepted=summary.get("accepted"), rejected=summary.get("rejected"))
    return ProposalReport(
        baseline_val=summary.get("initial_val"), candidate_val=summary.get("best_val"),
        policy=evaluation.get("gate_policy"), gate_accept=bool(accepted) if history else None,
        gate_reason=accepted[-1].gate_reason if accepted else "",
        n_val_items=next((h.gate_item_count for h in history if h.gate_item_count), None), task_deltas=deltas,
        edits=edits, models=_models(config, backends), usage=dict(summary.get("usage") or {}), source="run",
        run=run, notes=notes)


def run_refusal(run_dir: str | Path, live_text: str | None, report: ProposalReport) -> str | None:
    """Why the run should not become a proposal for the skill whose text is ``live_text``
    (None: a skill file that does not exist yet), or None when it may: the run must have
    started from that very text (``skills/step_0000.md``) and improved its val score."""
    root = Path(run_dir).expanduser()
    if live_text is not None:
        try:
            start = RunReader(root).read_bytes(RunReader.skill_file(0))
        except RunFileError:
            start = None
        if start is None:
            return (f"{root} does not say which skill it was trained from (no skills/step_0000.md), so its "
                    "scores may be about another skill")
        if _sha(start) != _sha(live_text.encode("utf-8")):
            name = _front_name(start.decode("utf-8", "replace"))
            return ("the run was trained from another text than the live skill"
                    + (f" (its starting skill is {name!r})" if name else "")
                    + "; its candidate would replace the whole file and its scores say nothing about this skill. "
                    "Train from the live file (skillopt train --skill <it>) and propose that run")
    base, best = report.baseline_val, report.candidate_val
    if base is None or best is None or best <= base + 1e-9:
        return (f"the run did not improve on val ({_score(base)} → {_score(best)}), so there is nothing to show "
                "for the change")
    return None


def _front_name(text: str) -> str | None:
    if not text.startswith("---"):
        return None
    end = text.find("\n---", 3)
    try:
        front = yaml.safe_load(text[3:end]) if end > 0 else None
    except yaml.YAMLError:
        return None
    return str(front["name"]) if isinstance(front, dict) and front.get("name") else None


def _score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _models(config: dict[str, Any], used: dict[str, str] | None = None) -> dict[str, str]:
    """Each role's backend and model: as the run described the backends it used (``used``, from
    its ``run_started`` event: what ``auto`` resolved to, and the model), else as configured."""
    model = config.get("model") or {}
    backend = model.get("backend")
    out = {}
    for role in ("target", "optimizer", "judge"):
        if (used or {}).get(role):
            out[role] = str(used[role])  # type: ignore[index]
            continue
        role_backend = model.get(f"{role}_backend") or backend
        name = model.get(role)
        if role_backend or name:
            out[role] = f"{role_backend or '?'}:{name or 'default'}"
    return out


def _read(reader: RunReader, rel: str, kind: type) -> Any:
    try:
        data = reader.read_json(rel)
    except (OSError, ValueError, RunFileError) as exc:
        raise RunDirError(f"{reader.file(rel)} is unreadable ({exc}); is the run still writing it?") from None
    if not isinstance(data, kind):
        raise RunDirError(f"{reader.file(rel)} does not hold a JSON {kind.__name__}; is this a skillopt train run?")
    return data


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
