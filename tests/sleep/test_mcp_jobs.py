"""The job registry on its own: a job's state comes from its files and its
runner's lock alone, the runner records the command's exit code, and a cancel
reaches the command as SIGINT."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest
from mcp_testutil import stop_jobs
from sleep_testutil import Homes

from sleep.mcp import jobs
from sleep.mcp.jobview import job_info


@pytest.fixture(autouse=True)
def _no_stray_jobs(homes: Homes):
    yield
    stop_jobs(homes.skillopt)


def _registered(job_id: str, created_at: str, *, process: bool) -> Path:
    folder = jobs.job_dir(job_id)
    folder.mkdir(parents=True)
    jobs._write_json(folder / "job.json", {"job_id": job_id, "kind": "train", "argv": ["skillopt", "train"],
                                           "cwd": "/", "created_at": created_at, "run_dir": "/nowhere/env/r1"})
    if process:
        jobs._write_json(folder / "process.json", {"runner_pid": 999999, "child_pid": 999998})
    return folder


def _wait_until_done(job_id: str, seconds: float = 60) -> jobs.JobRecord:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job = jobs.read(job_id)
        if not job.active:
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} still {job.state}")


def test_a_job_whose_runner_died_without_a_record_is_lost_and_resumable() -> None:
    _registered("20260101-000000-aaaaaa", "2026-01-01T00:00:00.000Z", process=True)
    job = jobs.read("20260101-000000-aaaaaa")
    assert job.state == "lost"
    assert job_info(job).next.startswith("train_skill(resume='/nowhere/env/r1') continues the run")


def test_a_just_registered_job_is_starting() -> None:
    _registered("20260101-000000-bbbbbb", jobs.utc_now(), process=False)
    assert jobs.read("20260101-000000-bbbbbb").state == "starting"


def test_a_job_id_is_checked_before_any_path_is_built() -> None:
    with pytest.raises(jobs.JobError, match="is not a job id"):
        jobs.job_dir("../../etc")


def test_the_runner_records_the_exit_code_and_the_output(tmp_path: Path) -> None:
    code = "import sys; print('out'); print('bad input: no such key', file=sys.stderr); sys.exit(2)"
    started = jobs.start("evaluate", [sys.executable, "-c", code], cwd=tmp_path)
    job = _wait_until_done(started.spec.job_id)
    assert (job.state, job.exit_code, job.stdout()) == ("error", 2, "out\n")
    assert job_info(job).error == "bad input: no such key"
    assert not jobs.runner_alive(job.job_dir)


def test_cancel_reaches_the_command_as_sigint(tmp_path: Path) -> None:
    code = ("import sys, time\nprint('ready', flush=True)\ntry:\n    time.sleep(120)\n"
            "except KeyboardInterrupt:\n    print('stopped cleanly', flush=True)\n    sys.exit(130)\n")
    started = jobs.start("train", [sys.executable, "-c", code], cwd=tmp_path)
    deadline = time.monotonic() + 60
    while "ready" not in jobs.read(started.spec.job_id).stdout() and time.monotonic() < deadline:
        time.sleep(0.05)
    jobs.cancel(started.spec.job_id)
    job = _wait_until_done(started.spec.job_id)
    assert (job.state, job.exit_code, job.stdout()) == ("cancelled", 130, "ready\nstopped cleanly\n")
    assert job.cancel_requested_at is not None


def test_a_command_killed_by_a_signal_is_recorded_as_the_shell_would(tmp_path: Path) -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    job = _wait_until_done(jobs.start("train", [sys.executable, "-c", code], cwd=tmp_path).spec.job_id)
    assert (job.state, job.exit_code) == ("failed", 137)


def test_a_night_refused_because_another_runs_is_busy_and_says_what_to_do_next(tmp_path: Path) -> None:
    """Exit 3 from `skillopt-sleep run` (another night of the project holds its lock, e.g. one started
    from a shell): the job is `busy`, and its next step is a tool call, not the CLI's `--wait` flag."""
    code = ("import sys; print('skillopt-sleep: another night for /p is already running on this index (pid 1). "
            "Wait for it to finish, or pass --wait SECONDS.', file=sys.stderr); sys.exit(3)")
    started = jobs.start("sleep_run", [sys.executable, "-c", code], cwd=tmp_path, project=str(tmp_path))
    job = _wait_until_done(started.spec.job_id)
    info = job_info(job)
    assert (job.state, job.exit_code) == ("busy", 3) and "already running" in (info.error or "")
    assert "sleep_status" in info.next and "sleep_run" in info.next, info.next
    from types import SimpleNamespace

    from sleep.mcp.guards import ServerConfig
    from sleep.mcp.tools_train import job_status

    ctx = SimpleNamespace(request_context=SimpleNamespace(lifespan_context=ServerConfig(cwd=tmp_path)))
    assert asyncio.run(job_status(ctx)).message == "1 job, 0 running."  # not "1 jobs"
