"""A job as the tools report it: state, step, scores and recent events, read
from the job's files and its run's ``events.jsonl`` (never from printed text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sleep.mcp import jobs
from sleep.mcp.models import EvalScores, JobInfo, TrainSummary
from sleep.mcp.runs import tail_events

RECENT = 8


def event_line(e: dict[str, Any]) -> str:
    """One short line for an event (``[Step 2/8] Gate: accept, val 0.75 vs 0.62``)."""
    kind = e.get("event", "?")
    step, total = e.get("step"), e.get("total_steps")
    if step and total:
        where = f"[Step {step}/{total}]"
    elif step == 0 and total:
        where = "[Test]" if e.get("phase") == "test" else "[Setup]"
    else:
        where = ""
    if kind == "run_started":
        resumed = f", resumed after step {e['resumed_at_step']}" if e.get("resumed_at_step") else ""
        return f"Run {e.get('run_id')} ({e.get('env')}): {e.get('total_steps')} steps{resumed}"
    if kind == "step_started":
        return f"{where} started (epoch {e.get('epoch')})"
    if kind == "rollout_done":
        label = e.get("label") or e.get("phase")
        failed = f", {e['failed']} failed" if e.get("failed") else ""
        return f"{where or '[Eval]'} {label} score {_f(e.get('score'))} over {e.get('n_items')} items{failed}"
    if kind == "rollout_started":
        return f"{where or '[Eval]'} rollout ({e.get('label') or e.get('phase')}): {e.get('n_items')} items"
    if kind == "patches_generated":
        return f"{where} {e.get('n_patches')} edit patches generated"
    if kind == "edits_selected":
        return f"{where} selected {e.get('n_selected')} of {e.get('n_candidates')} edits ({e.get('budget_text')})"
    if kind == "edits_applied":
        return f"{where} update: {e.get('outcomes') or 'no edits'}"
    if kind == "gate_decided":
        return (f"{where} gate: {e.get('action')} (candidate {_f(e.get('candidate'))} vs current "
                f"{_f(e.get('current'))}): {e.get('reason')}")
    if kind == "best_changed":
        return f"[Best] {e.get('source')}: {e.get('reason')}"
    if kind == "epoch_end":
        return f"[Epoch {e.get('epoch')}/{e.get('num_epochs')}] ended"
    if kind == "notice":
        return f"[{e.get('level', 'info')}] {e.get('text')}"
    if kind == "run_stopped":
        return f"[Stopped] {e.get('status')}: {e.get('message')}"
    if kind == "run_end":
        steps = e.get("steps_done")
        return f"Done ({e.get('status')}) after {steps} step{'' if steps == 1 else 's'}; best val {_f(e.get('best_val'))}"
    return kind


def _f(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) else "-"


def job_info(job: jobs.JobRecord, *, detail: bool = True) -> JobInfo:
    spec = job.spec
    info: dict[str, Any] = dict(
        job_id=spec.job_id, kind=spec.kind, state=job.state, label=spec.label, created_at=spec.created_at,
        ended_at=job.ended_at, exit_code=job.exit_code, command=_shown(spec.argv), cwd=spec.cwd,
        run_id=Path(spec.run_dir).name if spec.run_dir else None, run_dir=spec.run_dir, project=spec.project)
    events = tail_events(Path(spec.run_dir) / "events.jsonl") if spec.run_dir else []
    for e in events:
        if e.get("total_steps"):
            info["total_steps"] = e["total_steps"]
        if e.get("event") == "gate_decided":
            info["step"] = e.get("step")
        if e.get("event") == "best_changed":
            info["best_val"] = e.get("val")
        if e.get("event") == "rollout_done":
            info["last_score"] = f"{e.get('label') or e.get('phase')} {_f(e.get('score'))}"
        if e.get("event") == "run_end":
            info["step"] = e.get("steps_done")
            info["best_val"] = e.get("best_val")
    if detail:
        info["recent_events"] = [event_line(e) for e in events[-RECENT:]]
    if not job.active:
        _add_result(job, info)
    info["next"] = _next(job, info)
    return JobInfo(**info)


def _shown(argv: list[str]) -> list[str]:
    """The command as a person would type it (``skillopt train ...``), not the interpreter path."""
    if len(argv) >= 3 and argv[1] == "-m":
        name = {"skillopt_core.cli.main": "skillopt", "sleep.cli": "skillopt-sleep"}.get(argv[2], argv[2])
        return [name, *argv[3:]]
    return list(argv)


def _add_result(job: jobs.JobRecord, info: dict[str, Any]) -> None:
    out = _json_out(job.stdout())
    if job.spec.kind == "train" and isinstance(out, dict) and "status" in out:
        info["train_summary"] = TrainSummary(**{k: v for k, v in out.items() if k in TrainSummary.model_fields})
        info["step"] = out.get("steps_done", info.get("step"))
        info["best_val"] = out.get("best_val", info.get("best_val"))
    elif job.spec.kind == "evaluate" and isinstance(out, dict) and "hard" in out:
        info["eval_scores"] = EvalScores(**{k: v for k, v in out.items() if k in EvalScores.model_fields})
        info["run_dir"] = out.get("run_dir", info["run_dir"])
        info["run_id"] = out.get("run_id", info["run_id"])
    elif job.spec.kind == "sleep_run" and isinstance(out, dict):
        info["night"] = out
    if job.state in ("failed", "error", "lost", "busy") or (job.exit_code not in (None, 0) and job.state != "cancelled"):
        tail = job.stderr_tail() or _read(job.job_dir / "runner.log")[-2000:]
        lines = [ln for ln in tail.splitlines() if ln.strip()]
        info["error"] = "\n".join(lines[-12:]) or f"exit code {job.exit_code}"


def _json_out(text: str) -> Any:
    text = text.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        start = text.rfind("\n{")  # anything printed before the JSON document
        try:
            return json.loads(text[start + 1:]) if start >= 0 else None
        except ValueError:
            return None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _next(job: jobs.JobRecord, info: dict[str, Any]) -> str:
    jid = job.spec.job_id
    if job.active:
        return (f"job_status(job_id='{jid}', wait_seconds=60) follows it with progress; "
                f"cancel_job(job_id='{jid}') stops it (a training run stays resumable).")
    resumable = job.spec.kind == "train" and job.state in ("cancelled", "budget_exhausted", "failed", "lost")
    if resumable and info.get("run_dir"):
        return (f"train_skill(resume='{info['run_dir']}') continues the run after its last finished step "
                f"(or `skillopt train --resume {info['run_dir']}`).")
    if job.spec.kind == "train" and job.state == "completed":
        return f"get_run(run='{info['run_dir']}') shows its history and best skill."
    if job.state == "error":
        return "fix what the error names and start the job again."
    if job.spec.kind == "sleep_run" and job.state == "completed":
        return "list_proposals shows what the night staged for review."
    return ""
