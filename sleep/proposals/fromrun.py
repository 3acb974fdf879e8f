"""A ``skillopt train`` run directory as a proposal: its best skill and its evidence.

Reads the run's files only (``best_skill.md``, ``summary.json``,
``history.json``, ``steps/step_NNNN/selected.json`` and ``gate.json``,
``config.yaml``, ``skills/step_0000.md``); it imports nothing from the
engine. The report carries the run's scores (initial → best val and test),
the edits of the accepted steps with their rationales, and per-task deltas:
for each val task, the sum of its gate deltas over the accepted steps (the
items each gate evaluated).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from sleep.proposals.errors import RunDirError
from sleep.proposals.model import EditRecord, ProposalReport, RunScores


def report_from_run(run_dir: str | Path, live_text: str | None = None) -> tuple[str, ProposalReport]:
    """The run's best skill text and a report of its evidence.

    ``live_text``: the live skill's text now; when the run started from a
    different text, the report says its scores compare the run's initial skill.
    """
    root = Path(run_dir).expanduser()
    best = root / "best_skill.md"
    if not root.is_dir():
        raise RunDirError(f"{root} is not a folder; pass a run directory such as outputs/<env>/<run_id>.")
    if not best.is_file() or not (root / "summary.json").is_file():
        raise RunDirError(f"{root} is not a finished `skillopt train` run (it needs best_skill.md and "
                          "summary.json); pass the folder printed as 'Run directory', after the run ends.")
    summary = _json(root / "summary.json", dict)
    history = _json(root / "history.json", list) if (root / "history.json").is_file() else []
    config = _yaml(root / "config.yaml")
    accepted = [h for h in history if isinstance(h, dict) and str(h.get("action", "")).startswith("accept")]
    edits: list[EditRecord] = []
    deltas: dict[str, float] = {}
    for h in accepted:
        step = int(h.get("step", 0))
        sdir = root / "steps" / f"step_{step:04d}"
        if (sdir / "selected.json").is_file():
            for e in _json(sdir / "selected.json", dict).get("edits") or []:
                if isinstance(e, dict) and e.get("status", "applied") == "applied":
                    edits.append(EditRecord.from_dict({**e, "step": step}))
        if (sdir / "gate.json").is_file():
            for task_id, d in (_json(sdir / "gate.json", dict).get("deltas") or {}).items():
                deltas[str(task_id)] = round(deltas.get(str(task_id), 0.0) + float(d), 9)
    evaluation = config.get("evaluation") or {}
    notes = [f"from the skillopt train run {root}: {summary.get('status', '?')} after "
             f"{summary.get('steps_done', '?')} of {summary.get('total_steps', '?')} steps"]
    initial = root / "skills" / "step_0000.md"
    if live_text is not None and initial.is_file() and _sha(initial.read_bytes()) != _sha(live_text.encode("utf-8")):
        notes.append("the run started from a different text than the live file, so its scores compare the "
                     "run's initial skill with its best, not the live file with the candidate.")
    run = RunScores(
        run_id=str(summary.get("run_id") or root.name), run_dir=str(root.resolve()), status=summary.get("status"),
        steps_done=summary.get("steps_done"), initial_val=summary.get("initial_val"),
        best_val=summary.get("best_val"), initial_test=summary.get("initial_test"),
        best_test=summary.get("best_test"), accepted=summary.get("accepted"), rejected=summary.get("rejected"))
    report = ProposalReport(
        baseline_val=summary.get("initial_val"), candidate_val=summary.get("best_val"),
        policy=evaluation.get("gate_policy"), gate_accept=bool(accepted) if history else None,
        gate_reason=str(accepted[-1].get("gate_reason", "")) if accepted else "",
        n_val_items=_val_items(history), task_deltas=deltas, edits=edits, models=_models(config, _backends_used(root)),
        usage=dict(summary.get("usage") or {}), source="run", run=run, notes=notes)
    return best.read_text(encoding="utf-8"), report


def run_refusal(run_dir: str | Path, live_text: str | None, report: ProposalReport) -> str | None:
    """Why the run should not become a proposal for the skill whose text is ``live_text``
    (None: a skill file that does not exist yet), or None when it may: the run must have
    started from that very text (``skills/step_0000.md``) and improved its val score."""
    root = Path(run_dir).expanduser()
    initial = root / "skills" / "step_0000.md"
    if live_text is not None:
        if not initial.is_file():
            return (f"{root} does not say which skill it was trained from (no skills/step_0000.md), so its "
                    "scores may be about another skill")
        start = initial.read_bytes()
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


def _backends_used(root: Path) -> dict[str, str]:
    """The backends the run's ``run_started`` event described (its first; {} when absent)."""
    events = root / "events.jsonl"
    try:
        with events.open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict) and event.get("event") == "run_started":
                    backends = event.get("backends")
                    return {str(k): str(v) for k, v in backends.items()} if isinstance(backends, dict) else {}
    except OSError:
        pass
    return {}


def _val_items(history: list) -> int | None:
    for h in history:
        if isinstance(h, dict) and isinstance(h.get("gate_items"), int):
            return h["gate_items"]
    return None


def _json(path: Path, kind: type) -> Any:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunDirError(f"{path} is unreadable ({exc}); is the run still writing it?") from None
    if not isinstance(data, kind):
        raise RunDirError(f"{path} does not hold a JSON {kind.__name__}; is this a skillopt train run?")
    return data


def _yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
