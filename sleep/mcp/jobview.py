"""A job as the tools report it: state, step, scores and recent events, read
from the job's files and its run's ``events.jsonl`` through the engine's run
reader (never from printed text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillopt_core.run import events as ev
from skillopt_core.run.reader import RunReader
from sleep.mcp import jobs
from sleep.mcp.models import EvalScores, JobInfo, TrainSummary

RECENT = 8


def job_info(job: jobs.JobRecord, *, detail: bool = True) -> JobInfo:
    spec = job.spec
    info: dict[str, Any] = dict(
        job_id=spec.job_id, kind=spec.kind, state=job.state, label=spec.label, created_at=spec.created_at,
        ended_at=job.ended_at, exit_code=job.exit_code, command=_shown(spec.argv), cwd=spec.cwd,
        run_id=Path(spec.run_dir).name if spec.run_dir else None, run_dir=spec.run_dir, project=spec.project)
    events = RunReader(spec.run_dir).last_events() if spec.run_dir else []
    for e in events:
        if getattr(e, "total_steps", None):
            info["total_steps"] = e.total_steps  # type: ignore[attr-defined]
        if isinstance(e, ev.GateDecided):
            info["step"] = e.step
        elif isinstance(e, ev.BestChanged):
            info["best_val"] = e.val
        elif isinstance(e, ev.RolloutDone):
            info["last_score"] = f"{e.label or e.phase} {ev.score_text(e.score)}"
        elif isinstance(e, ev.RunEnd):
            info["step"] = e.steps_done
            info["best_val"] = e.best_val
    if detail:
        info["recent_events"] = [ev.event_line(e) for e in events[-RECENT:]]
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
    if (job.state in ("failed", "error", "lost", "busy")
            or (job.exit_code not in (None, 0) and job.state != "cancelled")):
        tail = job.stderr_tail() or job.runner_log()[-2000:]
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
    if job.state == "busy":
        return ("another night of this project is running (perhaps started outside this server: sleep_status "
                "shows it); call sleep_run again once it has finished.")
    if job.spec.kind == "sleep_run" and job.state == "completed":
        return "list_proposals shows what the night staged for review."
    return ""
