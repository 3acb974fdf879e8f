"""Sleep tools: harvest, the night (a job), status, and the scheduler's two tools.

``sleep_harvest`` and the night run the same CLI a person runs
(``skillopt-sleep harvest --json``, ``skillopt-sleep run --json``) in their own
processes; ``sleep_status`` reads the index and the job registry. ``schedule_sleep``
and ``unschedule_sleep`` call the scheduler's library (:mod:`sleep.scheduler.api`),
the same code as ``skillopt-sleep schedule`` / ``unschedule``.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from sleep.hosts import all_hosts, source_groups
from sleep.mcp import guards, jobs
from sleep.mcp.guards import ServerConfig
from sleep.mcp.jobview import job_info
from sleep.mcp.launch import HARVEST_TIMEOUT_S
from sleep.mcp.models import HarvestResult, JobInfo, ScheduleResult, SleepStatus
from sleep.mcp.review import proposal_summaries
from sleep.mcp.tools_train import CHANGES_LOCAL_STATE, READ_ONLY, STARTS_MODEL_WORK, reporter, visible_jobs
from sleep.scheduler.model import DEFAULT_AT, ScheduleError

SLEEP = [sys.executable, "-m", "sleep.cli"]

ProjectArg = Annotated[str | None, Field(description="the project folder (default: the configured project)")]
Wait = Annotated[float, Field(ge=0, le=guards.MAX_WAIT_S,
                              description="seconds to wait for the night, with progress notifications")]


def _run_cli(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([*SLEEP, *args], cwd=str(cwd), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout)


async def sleep_harvest(ctx: Context, project: Annotated[str | None, Field(
                            description="only sessions in this folder (default: every project, or the "
                                        "server's one project when started with --project)")] = None,
                        source: str = "all",  # register() gives it the hosts' choice (host_choice)
                        since: Annotated[str | None, Field(
                            pattern=r"^\s*\d+(\.\d+)?\s*[smhdwSMHDW]\s*$",
                            description="only transcript files changed in the last AGE, e.g. 72h or 7d")] = None,
                        ) -> HarvestResult:
    """Read new transcript lines of {hosts} into SkillOpt-Sleep's index
    (redacted, incremental: files already read cost nothing). Reads transcripts only; writes
    only the index in the data directory."""
    config = guards.server_config(ctx)
    scope = guards.project(config, project, required=False)
    if scope is None and config.projects:
        raise ToolError("name one of this server's projects in the call ("
                        + ", ".join(str(p) for p in config.projects) + "); it harvests only those.")
    args = ["harvest", "--json", "--source", source]
    args += ["--project", str(scope)] if scope else ["--all-projects"]
    if since:
        args += ["--since", since.strip()]
    proc = await anyio.to_thread.run_sync(_run_cli, args, config.cwd, HARVEST_TIMEOUT_S)
    if proc.returncode == 3:
        raise ToolError("another harvest (or night) is using the index right now; try again in a minute.")
    if proc.returncode != 0:
        raise ToolError(f"harvest failed (exit {proc.returncode}): {_last_lines(proc.stderr)}")
    report = json.loads(proc.stdout)
    return HarvestResult(report=report, **{k: report.get(k) for k in (
        "scope", "files_seen", "files_read", "sessions_new", "sessions_updated", "secrets_redacted",
        "skipped", "index_path", "elapsed_s")})


async def sleep_run(ctx: Context, project: ProjectArg = None,
                    dry_run: Annotated[bool, Field(description="the whole night except staging the "
                                                               "proposal")] = False,
                    wait_seconds: Wait = 0) -> JobInfo:
    """Run one night for a project now (`skillopt-sleep run --project P --json`) as a background
    job: harvest, mine, replay the recurring tasks through the trainer, gate, and stage the
    improvements as proposal branches (your working tree is never touched)."""
    config = guards.server_config(ctx)
    folder = guards.project(config, project)
    for job in jobs.list_jobs():  # every job: a night started by another server holds the project too
        if job.active and job.spec.kind == "sleep_run" and job.spec.project == str(folder):
            raise ToolError(f"a night for {folder} is already running as job {job.spec.job_id}.")
    argv = [*SLEEP, "run", "--project", str(folder), "--json", *(["--dry-run"] if dry_run else [])]
    job = jobs.start("sleep_run", argv, cwd=folder, project=str(folder),
                     label=("dry run " if dry_run else "night ") + folder.name)
    if wait_seconds > 0:
        from sleep.mcp.follow import follow

        job = await follow(job.spec.job_id, wait_seconds, reporter(ctx))
    return job_info(job)


async def sleep_status(ctx: Context, project: ProjectArg = None) -> SleepStatus:
    """Last night, the next scheduled night, proposals waiting for review and running jobs
    (every configured project when none is named)."""
    config = guards.server_config(ctx)
    scope = guards.project(config, project, required=False)
    status = SleepStatus()
    status.next_night, status.schedule_note = await anyio.to_thread.run_sync(_next_night, config, scope)
    status.last_night, status.last_night_note = await anyio.to_thread.run_sync(_last_night, config, scope)
    status.pending_proposals = await proposal_summaries(config, scope, include_decided=False)
    status.running_jobs = [job_info(j, detail=False) for j in visible_jobs(config) if j.active]
    return status


async def schedule_sleep(ctx: Context, project: ProjectArg = None,
                         at: Annotated[str, Field(pattern=r"^\d{2}:\d{2}$",
                                                  description="local time of the night, HH:MM")] = DEFAULT_AT,
                         mode: Annotated[Literal["auto", "cron", "systemd", "launchd", "daemon"], Field(
                             description="auto picks what the machine has (systemd user timer, launchd, "
                                         "cron; else the daemon's schedule)")] = "auto",
                         dry_run: Annotated[bool, Field(description="only show what would be installed")] = False,
                         ) -> ScheduleResult:
    """Schedule a project's nightly run (`skillopt-sleep run --project P`) with cron, a systemd
    user timer, launchd, or the SkillOpt daemon. Idempotent: scheduling again updates the one
    entry. Only the managed entry is written; the rest of the crontab or unit folder is untouched."""
    config = guards.server_config(ctx)
    from sleep.scheduler import api

    folder = guards.project(config, project)
    try:
        if dry_run:
            p = await anyio.to_thread.run_sync(api.plan, folder, at, mode)
            r = p.rendered
            return ScheduleResult(scheduled=False, project=p.schedule.project, mode=p.schedule.mode,
                                  at=p.schedule.at, next_night=p.next_run, notes=p.notes,
                                  entry=dict(r.files) if r else {},
                                  message="dry run: nothing was installed or changed")
        out = await anyio.to_thread.run_sync(api.schedule, folder, at, mode)
    except ScheduleError as exc:
        raise ToolError(str(exc)) from None
    s = out.schedule
    assert s is not None
    return ScheduleResult(scheduled=True, project=s.project, mode=s.mode, at=s.at, next_night=out.next_run,
                          changes=out.changes, notes=out.notes,
                          message=f"{s.project} runs nightly at {s.at} ({s.mode})")


async def unschedule_sleep(ctx: Context, project: ProjectArg = None,
                           all: Annotated[bool, Field(description="remove every project's nightly run")] = False,
                           ) -> ScheduleResult:
    """Remove a project's nightly run (or every one with all=true): exactly the entry that
    schedule_sleep installed, nothing else."""
    config = guards.server_config(ctx)
    from sleep.scheduler import api

    folder = None
    if not all:  # a project whose folder is gone can still be unscheduled
        folder = guards.in_cwd(config, project, "project") if project else guards.project(config, None,
                                                                                         required=False)
        if folder is not None and not guards.in_scope(config, folder):
            raise guards.out_of_scope(config, "that schedule", str(folder))
    if folder is None and not all:
        raise ToolError("name the project (its folder) in the call, or pass all=true.")
    try:
        if all and config.projects:  # every schedule of this server's projects, no other
            outs = [await anyio.to_thread.run_sync(api.unschedule, p) for p in config.projects]
            out = outs[0]
            for more in outs[1:]:
                out.changes += more.changes
                out.notes += more.notes
                out.removed += more.removed
        else:
            out = await anyio.to_thread.run_sync(lambda: api.unschedule(folder, everything=all))
    except ScheduleError as exc:
        raise ToolError(str(exc)) from None
    return ScheduleResult(scheduled=False, project=str(folder) if folder else None, changes=out.changes,
                          notes=out.notes, message="; ".join(out.notes) or f"removed {len(out.removed)} schedule(s)")


def host_choice() -> Any:
    """The ``source`` values ``sleep_harvest`` accepts: ``all`` and one per host registered now
    (sleep/hosts/, a host a package adds by entry point included)."""
    choice = Literal[("all", *(g for g in source_groups() if g != "all"))]  # type: ignore[valid-type]
    return Annotated[choice, Field(description="all, or one host's transcripts")]


def host_list() -> str:
    """The registered hosts' names as prose: "Claude Code, Codex, ... and Cursor"."""
    labels = [h.label for h in all_hosts()]
    return ", ".join(labels[:-1]) + f" and {labels[-1]}" if len(labels) > 1 else "".join(labels)


TOOLS = (
    (sleep_harvest, CHANGES_LOCAL_STATE),
    (sleep_run, STARTS_MODEL_WORK),
    (sleep_status, READ_ONLY),
    (schedule_sleep, CHANGES_LOCAL_STATE),
    (unschedule_sleep, ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                                       open_world_hint=False)),
)


def register(app: MCPServer) -> None:
    """The tools, with the host choice and the hosts' names read once, when the server is built."""
    for fn, hints in TOOLS:
        if fn is sleep_harvest:
            typed = guards.with_parameter_types(fn, source=host_choice())
            description = inspect.cleandoc(fn.__doc__ or "").replace("{hosts}", host_list())
            guards.tool(app, hints, description)(typed)
        else:
            guards.tool(app, hints)(fn)


def _next_night(config: ServerConfig, scope: Path | None) -> tuple[str | None, str]:
    from sleep.scheduler.api import list_schedules
    from sleep.scheduler.daemon import daemon_running
    from sleep.scheduler.model import next_run

    wanted = {str(scope)} if scope is not None else {str(p) for p in config.projects}
    schedules = [s for s in list_schedules() if not wanted or s.project in wanted]
    if not schedules:
        return None, "no night is scheduled; schedule one with schedule_sleep (or `skillopt-sleep schedule`)."
    runs = sorted(((next_run(s.at).isoformat(timespec="minutes"), s) for s in schedules), key=lambda r: r[0])
    notes = [f"{s.project}: nightly at {s.at} ({s.mode})" for _, s in runs]
    if any(s.mode == "daemon" for s in schedules) and not daemon_running()[0]:
        notes.append("daemon schedules run only while `skillopt-sleep daemon` runs, and it is not running")
    return runs[0][0], "; ".join(notes)


def _last_night(config: ServerConfig, scope: Path | None) -> tuple[dict[str, Any] | None, str]:
    """The newest night record of the project (or of the configured projects, else of any)."""
    from sleep import nightstore, paths
    from sleep.index import Index

    if not paths.index_path().exists():
        return None, "no night has run yet."
    projects: list[str | None] = [str(scope)] if scope else ([str(p) for p in config.projects] or [None])
    with Index.open() as index:
        found = [n for project in projects for n in nightstore.nights(index, project, limit=1)]
    if not found:
        return None, "no night has run yet."
    return max(found, key=lambda n: n.started_at).to_dict(), ""


def _last_lines(text: str, n: int = 6) -> str:
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    return " | ".join(lines[-n:]) or "no message"

