"""Sleep tools: harvest, the night (a job), status, and the scheduler's two tools.

``sleep_harvest`` and the night run the same CLI a person runs
(``skillopt-sleep harvest --json``, ``skillopt-sleep run --json``) in their own
processes; ``sleep_status`` reads the index and the job registry. The
scheduler has not landed in this version: its tools say so as tool errors.
"""

from __future__ import annotations

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

from sleep.mcp import guards, jobs
from sleep.mcp.guards import ServerConfig
from sleep.mcp.jobview import job_info
from sleep.mcp.models import HarvestResult, JobInfo, ScheduleResult, SleepStatus
from sleep.mcp.review import proposal_summaries
from sleep.mcp.tools_train import READ_ONLY, reporter

SLEEP = [sys.executable, "-m", "sleep.cli"]
HARVEST_TIMEOUT_S = 1800.0
NO_SCHEDULER = ("scheduling nights is not available in this version of SkillOpt-Sleep (the scheduler has "
                "not landed yet); nothing was scheduled or changed. Run a night now with sleep_run, or "
                "schedule `skillopt-sleep run --project PATH` with cron yourself.")

ProjectArg = Annotated[str | None, Field(description="the project folder (default: the configured project)")]
Wait = Annotated[float, Field(ge=0, le=guards.MAX_WAIT_S,
                              description="seconds to wait for the night, with progress notifications")]


def _run_cli(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([*SLEEP, *args], cwd=str(cwd), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout)


def register(app: MCPServer, config: ServerConfig) -> None:
    @guards.tool(app, ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                          open_world_hint=False))
    async def sleep_harvest(project: Annotated[str | None, Field(
                                description="only sessions in this folder (default: every project)")] = None,
                            source: Literal["all", "claude-code", "codex", "copilot"] = "all",
                            since: Annotated[str | None, Field(
                                pattern=r"^\s*\d+(\.\d+)?\s*[smhdwSMHDW]\s*$",
                                description="only transcript files changed in the last AGE, e.g. 72h or 7d")] = None,
                            ) -> HarvestResult:
        """Read new Claude Code, Codex and Copilot transcript lines into SkillOpt-Sleep's index
        (redacted, incremental: files already read cost nothing). Reads transcripts only; writes
        only the index in the data directory."""
        scope = guards.project(config, project, required=False) if project else None
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

    @guards.tool(app, ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                          open_world_hint=True))
    async def sleep_run(ctx: Context, project: ProjectArg = None,
                        dry_run: Annotated[bool, Field(description="the whole night except staging the "
                                                                   "proposal")] = False,
                        wait_seconds: Wait = 0) -> JobInfo:
        """Run one night for a project now (`skillopt-sleep run --project P --json`) as a background
        job: harvest, mine, replay the recurring tasks through the trainer, gate, and stage the
        improvements as proposal branches (your working tree is never touched)."""
        folder = guards.project(config, project)
        for job in jobs.list_jobs():
            if job.active and job.spec.kind == "sleep_run" and job.spec.project == str(folder):
                raise ToolError(f"a night for {folder} is already running as job {job.spec.job_id}.")
        argv = [*SLEEP, "run", "--project", str(folder), "--json", *(["--dry-run"] if dry_run else [])]
        job = jobs.start("sleep_run", argv, cwd=folder, project=str(folder),
                         label=("dry run " if dry_run else "night ") + folder.name)
        if wait_seconds > 0:
            from sleep.mcp.follow import follow

            job = await follow(job.spec.job_id, wait_seconds, reporter(ctx))
        return job_info(job)

    @guards.tool(app, READ_ONLY)
    async def sleep_status(project: ProjectArg = None) -> SleepStatus:
        """Last night, the next scheduled night, proposals waiting for review and running jobs
        (every configured project when none is named)."""
        scope = guards.project(config, project, required=False)
        status = SleepStatus(schedule_note="no night is scheduled: the scheduler is not available in this version.")
        status.last_night, status.last_night_note = await anyio.to_thread.run_sync(_last_night, config, scope)
        status.pending_proposals = await proposal_summaries(config, scope, include_decided=False)
        status.running_jobs = [job_info(j, detail=False) for j in jobs.list_jobs() if j.active]
        return status

    @guards.tool(app, ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                          open_world_hint=False))
    async def schedule_sleep(project: ProjectArg = None,
                             at: Annotated[str, Field(pattern=r"^\d{2}:\d{2}$",
                                                      description="local time of the night, HH:MM")] = "03:00",
                             ) -> ScheduleResult:
        """Schedule a nightly run for a project (cron, systemd user timer or launchd).
        Not available in this version: returns an error and changes nothing."""
        raise ToolError(NO_SCHEDULER)

    @guards.tool(app, ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                                          open_world_hint=False))
    async def unschedule_sleep(project: ProjectArg = None) -> ScheduleResult:
        """Remove a project's nightly schedule. Not available in this version: returns an error
        and changes nothing."""
        raise ToolError(NO_SCHEDULER)


def _last_night(config: ServerConfig, scope: Path | None) -> tuple[dict[str, Any] | None, str]:
    """The newest night record of the project (or of the configured projects, else of any)."""
    from sleep import paths
    from sleep.cycle import store
    from sleep.index import Index

    if not paths.index_path().exists():
        return None, "no night has run yet."
    projects: list[str | None] = [str(scope)] if scope else ([str(p) for p in config.projects] or [None])
    with Index.open() as index:
        found = [n for project in projects for n in store.nights(index, project, limit=1)]
    if not found:
        return None, "no night has run yet."
    return max(found, key=lambda n: n.started_at).to_dict(), ""


def _last_lines(text: str, n: int = 6) -> str:
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    return " | ".join(lines[-n:]) or "no message"

