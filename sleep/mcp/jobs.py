"""Jobs: long work as separate processes, registered in the data directory.

A job is one command (``skillopt train ...``, ``skillopt eval ...``,
``skillopt-sleep run ...``) run by a small supervisor,
``python -m sleep.mcp.jobrunner JOB_DIR``, in a session of its own, so neither
the MCP server exiting nor the client killing the server's process group
stops it. Everything about a job lives in ``<data dir>/jobs/<job id>/``:

- ``job.json``: what was asked (kind, argv, cwd, run directory, project), written
  by the server before the runner starts;
- ``runner.lock``: held by the runner for as long as it lives (an OS lock, so a
  runner killed by SIGKILL or a reboot never looks alive);
- ``process.json``: the runner's and the command's pids;
- ``stdout.txt`` / ``stderr.txt``: the command's output;
- ``cancel.json``: written when someone asked to cancel;
- ``exit.json``: the command's exit code, written by the runner at the end.

The state of a job is read from these files alone, so any server process (a
restarted one, the HTTP one and the stdio one side by side) sees the same jobs.
Cancelling sends SIGINT to the runner, which passes it to the command: the
engine stops cleanly and the run stays resumable (exit 130).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from skillopt_core.run.rundir import atomic_write_json as _write_json  # the tests write job files through it too
from skillopt_core.timestamps import utc_now
from sleep import paths
from sleep.lock import FileLock, LockBusy

JOB_ID = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{6}$")
KINDS = ("train", "evaluate", "sleep_run")
STARTING_GRACE_S = 60.0  # a runner not yet holding its lock is "starting" this long

# Exit codes of `skillopt train` (and the other commands) -> job state.
_TRAIN_EXIT = {0: "completed", 3: "budget_exhausted", 130: "cancelled", 1: "failed", 2: "error"}
_OTHER_EXIT = {0: "completed", 130: "cancelled", 2: "error"}


class JobError(Exception):
    """A job could not be started, found or cancelled; the message says why."""


@dataclass(frozen=True)
class JobSpec:
    """What the server asked for. ``run_dir``: the run directory the command writes
    (train / evaluate), known before it starts; ``project``: the project of a night."""

    job_id: str
    kind: str
    argv: list[str]
    cwd: str
    created_at: str
    label: str = ""
    run_dir: str | None = None
    project: str | None = None
    resumed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class JobRecord:
    """A job as its files describe it now."""

    spec: JobSpec
    state: str  # starting | running | cancelling | completed | budget_exhausted | cancelled | failed | error | lost
    exit_code: int | None = None
    ended_at: str | None = None
    cancel_requested_at: str | None = None
    runner_pid: int | None = None
    child_pid: int | None = None
    job_dir: Path = field(default=Path("."))

    @property
    def active(self) -> bool:
        return self.state in ("starting", "running", "cancelling")

    def stdout(self) -> str:
        return _read_text(self.job_dir / "stdout.txt")

    def runner_log(self) -> str:
        return _read_text(self.job_dir / "runner.log")

    def stderr_tail(self, max_chars: int = 2000) -> str:
        text = _read_text(self.job_dir / "stderr.txt")
        return text[-max_chars:]


def jobs_dir() -> Path:
    return paths.data_dir() / "jobs"


def new_job_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def job_dir(job_id: str) -> Path:
    """The folder of ``job_id``; the id is checked first, so no id reaches outside ``jobs/``."""
    if not isinstance(job_id, str) or not JOB_ID.match(job_id):
        raise JobError(f"{job_id!r} is not a job id (they look like 20261130-173752-a1b2c3); "
                       "job_status without an id lists the jobs.")
    return jobs_dir() / job_id


# Children this server process started: a thread waits on each so none is left a zombie.
_reapers: list[threading.Thread] = []


def start(kind: str, argv: list[str], *, cwd: str | os.PathLike, label: str = "",
          run_dir: str | None = None, project: str | None = None, resumed: bool = False,
          env: dict[str, str] | None = None) -> JobRecord:
    """Register a job and start its runner; returns at once (the runner is in its own session)."""
    if kind not in KINDS:
        raise JobError(f"unknown job kind {kind!r}")
    job_id = new_job_id()
    folder = job_dir(job_id)
    folder.mkdir(parents=True, exist_ok=False)
    spec = JobSpec(job_id=job_id, kind=kind, argv=list(argv), cwd=str(cwd), created_at=utc_now(), label=label,
                   run_dir=run_dir, project=project, resumed=resumed)
    _write_json(folder / "job.json", spec.to_dict())
    runner = [sys.executable, "-m", "sleep.mcp.jobrunner", str(folder)]
    child_env = dict(os.environ if env is None else env)
    child_env["PYTHONUNBUFFERED"] = "1"
    kwargs: dict[str, Any] = {}
    if sys.platform == "win32":  # pragma: no cover - Windows only
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.DETACHED_PROCESS
    else:
        kwargs["start_new_session"] = True
    try:
        with open(folder / "runner.log", "ab") as log:
            proc = subprocess.Popen(runner, cwd=str(cwd), env=child_env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=log, close_fds=True, **kwargs)
    except OSError as exc:
        raise JobError(f"could not start the job runner: {exc}") from exc
    reaper = threading.Thread(target=proc.wait, name=f"reap-{job_id}", daemon=True)
    reaper.start()
    _reapers.append(reaper)
    return read(job_id)


def read(job_id: str) -> JobRecord:
    folder = job_dir(job_id)
    spec_data = _read_json(folder / "job.json")
    if spec_data is None:
        raise JobError(f"no job {job_id} in {jobs_dir()}; job_status without an id lists the jobs.")
    spec = JobSpec(**{k: v for k, v in spec_data.items() if k in JobSpec.__dataclass_fields__})
    process = _read_json(folder / "process.json") or {}
    cancel = _read_json(folder / "cancel.json") or {}
    exit_data = _read_json(folder / "exit.json")

    def record(state: str, exit_code: int | None = None, ended_at: str | None = None) -> JobRecord:
        return JobRecord(spec=spec, state=state, exit_code=exit_code, ended_at=ended_at,
                         cancel_requested_at=cancel.get("at"), runner_pid=process.get("runner_pid"),
                         child_pid=process.get("child_pid"), job_dir=folder)

    if exit_data is not None:
        code = exit_data.get("exit_code")
        table = _TRAIN_EXIT if spec.kind == "train" else _OTHER_EXIT
        state = table.get(code, "failed") if isinstance(code, int) else "failed"
        if spec.kind == "sleep_run" and code == 3:
            state = "busy"  # another night (or harvest) holds the lock
        return record(state, code, exit_data.get("ended_at"))
    if runner_alive(folder):
        return record("cancelling" if cancel else "running")
    if not process and _age_s(spec.created_at) < STARTING_GRACE_S:
        return record("starting")
    if _read_json(folder / "exit.json") is not None:  # it ended between the two reads
        return read(job_id)
    return record("lost")


def list_jobs() -> list[JobRecord]:
    """Every registered job, newest first (unreadable folders are skipped)."""
    root = jobs_dir()
    if not root.is_dir():
        return []
    records = []
    for entry in sorted(root.iterdir(), reverse=True):
        if JOB_ID.match(entry.name):
            try:
                records.append(read(entry.name))
            except (JobError, OSError, TypeError, ValueError):
                continue
    return records


def cancel(job_id: str) -> JobRecord:
    """Ask the job to stop cleanly (SIGINT to its runner, which passes it on)."""
    job = read(job_id)
    if not job.active:
        return job
    _write_json(job.job_dir / "cancel.json", {"at": utc_now()})
    deadline = time.monotonic() + 5.0
    while job.runner_pid is None and time.monotonic() < deadline:  # just started: wait for its pid
        time.sleep(0.05)
        job = read(job_id)
    if job.runner_pid is not None and runner_alive(job.job_dir):
        try:
            os.kill(job.runner_pid, signal.SIGINT)
        except ProcessLookupError:
            pass
    return read(job_id)


def runner_alive(folder: Path) -> bool:
    """True while a runner holds ``runner.lock`` (the OS drops the lock when it dies)."""
    lock_file = folder / "runner.lock"
    if not lock_file.exists():
        return False
    probe = FileLock(lock_file, what="job runner")
    try:
        probe.acquire(wait=0.0)
    except LockBusy:
        return True
    probe.release()
    return False


def _age_s(iso: str) -> float:
    try:
        then = datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    except (TypeError, ValueError):
        return float("inf")
    return (datetime.now(timezone.utc) - then).total_seconds()


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""

