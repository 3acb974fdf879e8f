"""Training and evaluation tools: ``train_skill``, ``evaluate_skill``,
``job_status``, ``cancel_job``, ``list_runs``, ``get_run``.

Training and evaluation run as jobs (``skillopt train`` / ``skillopt eval``
in their own processes, see :mod:`sleep.mcp.jobs`). The config and overrides
are checked here first (loading the settings costs no model call), so a typo
is a tool error naming the key, not a job that fails later.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from skillopt_core.run import events as ev
from sleep.mcp import guards, jobs
from sleep.mcp import overrides as ov
from sleep.mcp import runs as rd
from sleep.mcp.follow import follow
from sleep.mcp.guards import ServerConfig
from sleep.mcp.jobview import job_info
from sleep.mcp.models import JobInfo, JobList, RunDetail, RunInfo, RunList
from sleep.mcp.outbound import outbound

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
STARTS_MODEL_WORK = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                    open_world_hint=True)
CHANGES_LOCAL_STATE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                      open_world_hint=False)

ConfigArg = Annotated[str, Field(description="a config YAML file in the project or the data directory (relative "
                                             "to the server's start directory) or a packaged config name such "
                                             "as 'searchqa/local'")]
Overrides = Annotated[list[str], Field(description="`--set` style overrides, e.g. ['train.num_epochs=1']; runs are "
                                                   "written only to the server's output folders, models reached "
                                                   "only at the config's own URL or on loopback")]
Wait = Annotated[float, Field(ge=0, le=guards.MAX_WAIT_S,
                              description="seconds to wait for the job, with progress notifications "
                                          "(0: return at once; the job goes on either way)")]
JobId = Annotated[str, Field(pattern=jobs.JOB_ID.pattern, description="a job id from train_skill or job_status")]
RunRef = Annotated[str, Field(min_length=1, max_length=4096,
                              description="a run id, env/run_id, or the run directory from list_runs")]

SKILLOPT = [sys.executable, "-m", "skillopt_core.cli.main"]
LISTED_JOBS = 50  # job_status without an id: the newest ones (and every running one)


def roots(config: ServerConfig) -> list[Path]:
    """The output folders runs are read from: the server's own, and nothing a job or a call names."""
    return list(config.outputs)


def visible(config: ServerConfig, job: jobs.JobRecord) -> bool:
    """Whether this server shows ``job``: a night of one of its projects, or a run in its output folders."""
    if job.spec.kind == "sleep_run":
        return guards.in_scope(config, job.spec.project)
    if not job.spec.run_dir:
        return False
    return guards.inside(Path(job.spec.run_dir), config.outputs)


def visible_jobs(config: ServerConfig) -> list[jobs.JobRecord]:
    return [j for j in jobs.list_jobs() if visible(config, j)]


def _settings(config_path: str, overrides: list[str]):
    from skillopt_core import ConfigError, load_settings

    try:
        return load_settings(config_path, overrides)
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        raise ToolError(str(exc)) from None


async def _checked_settings(config: ServerConfig, cfg: str, overrides: list[str], *, resume: bool = False):
    """The settings of ``cfg`` with ``overrides``, after checking each override's value against the
    config's own settings, and the skill files the result reads."""
    base = await anyio.to_thread.run_sync(_settings, cfg, [])
    extra = ov.check(config, overrides, base=base, resume=resume)
    settings = await anyio.to_thread.run_sync(_settings, cfg, extra) if extra else base
    if not resume:  # a resumed run reads its skill from its own directory
        ov.check_effective(config, settings)
    return settings, extra


def _output_root(config: ServerConfig, settings) -> tuple[Path, list[str]]:
    """Where the run goes: the config's ``output.root`` when it is one of the server's output
    folders, else the server's default folder (and a note saying so)."""
    if not rd.RUN_ID.match(settings.env.name) or ".." in settings.env.name:
        raise ToolError(f"env.name {settings.env.name!r} is not an env's name (letters, digits, '.', '_' and '-').")
    named = guards.in_cwd(config, str(settings.output.root), "output.root")
    for root in config.outputs:
        if guards.inside(named, [root]) and guards.inside(root, [named]):
            return root, []
    default = type(settings.output).model_fields["root"].default
    if str(settings.output.root) == default:
        return config.default_output, []
    return config.default_output, [
        f"the config's output.root {named} is not one of this server's output folders, so the run is written "
        f"to {config.default_output} (start the server with --outputs {named} to write there)."]


def _active_on(run_dir: Path) -> jobs.JobRecord | None:
    for job in jobs.list_jobs():
        if job.active and job.spec.run_dir and Path(job.spec.run_dir) == run_dir:
            return job
    return None


def reporter(ctx: Context):
    """Progress notifications to the caller of the current tool call (none if it asked for none)."""
    async def send(progress: float, total: float | None, message: str | None) -> None:
        await ctx.report_progress(progress, total, outbound(message) if message else message)
    return send


async def _started(job: jobs.JobRecord, wait_seconds: float, ctx: Context, notes: list[str] | None = None) -> JobInfo:
    if wait_seconds > 0:
        job = await follow(job.spec.job_id, wait_seconds, reporter(ctx))
    info = job_info(job)
    info.notes = list(notes or [])
    return info


async def train_skill(ctx: Context, config_path: ConfigArg | None = None, overrides: Overrides = [],
                      resume: RunRef | None = None, wait_seconds: Wait = 0) -> JobInfo:
    """Train a skill with `skillopt train` as a background job and return its job id.

    Give config_path (a config file or packaged name) to start a new run, or resume (a run id or
    directory) to continue a stopped run after its last finished step. The job runs in its own
    process and survives this server and the client; follow it with job_status and stop it with
    cancel_job. Models are called as the config says (possibly remote APIs)."""
    config = guards.server_config(ctx)
    guards.overrides(overrides)
    if (config_path is None) == (resume is None):
        raise ToolError("give exactly one of config_path (a new run) or resume (a stopped run).")
    if resume is not None:
        run = _resolve(config, resume)
        busy = _active_on(run.path)
        if busy:
            raise ToolError(f"run {run.run_id} is already running as job {busy.spec.job_id}.")
        if not (run.path / "state.json").is_file():
            raise ToolError(f"run {run.run_id} has no finished step to resume from (no state.json).")
        _, extra = await _checked_settings(config, str(run.path / "config.yaml"), overrides, resume=True)
        argv = [*SKILLOPT, "train", "--resume", str(run.path), *_sets(extra), "--json"]
        job = jobs.start("train", argv, cwd=config.cwd, label=f"resume {run.env}/{run.run_id}",
                         run_dir=str(run.path), resumed=True)
        return await _started(job, wait_seconds, ctx)
    cfg = guards.config_arg(config, config_path or "")
    settings, extra = await _checked_settings(config, cfg, overrides)
    run_id = str(settings.output.run_id or jobs.new_job_id())
    if not rd.RUN_ID.match(run_id) or ".." in run_id:
        raise ToolError(f"output.run_id {run_id!r} is not a plain name (letters, digits, '.', '_' and '-'; "
                        "no '/', no '..'); set another one.")
    root, notes = _output_root(config, settings)
    run_dir = root / settings.env.name / run_id
    if (run_dir / "state.json").exists():
        raise ToolError(f"{run_dir} already holds a run: resume it with train_skill(resume='{run_dir}') "
                        "or choose another output.run_id.")
    if _active_on(run_dir):
        raise ToolError(f"a job is already writing {run_dir}; choose another output.run_id.")
    argv = [*SKILLOPT, "train", "--config", cfg, *_sets(_not_output(extra)),
            *_sets([f"output.root={root}", f"output.run_id={run_id}"]), "--json"]
    job = jobs.start("train", argv, cwd=config.cwd, label=f"train {settings.env.name} ({cfg})",
                     run_dir=str(run_dir))
    return await _started(job, wait_seconds, ctx, notes)


async def evaluate_skill(ctx: Context, config_path: ConfigArg,
                         skill_path: Annotated[str | None, Field(
                             description="the skill file to score (default: the config's seed skill)")] = None,
                         split: Literal["test", "val", "train"] = "test", overrides: Overrides = [],
                         wait_seconds: Wait = 60) -> JobInfo:
    """Score one skill on one split with `skillopt eval` and return the scores.

    Runs as a job; if it is not done within wait_seconds the job id is returned and job_status
    gives the scores later. Writes an eval-<id> run directory; never changes the skill."""
    config = guards.server_config(ctx)
    guards.overrides(overrides)
    cfg = guards.config_arg(config, config_path)
    skill = guards.skill_file(config, skill_path, "skill_path") if skill_path else None
    settings, extra = await _checked_settings(config, cfg, overrides)
    run_id = jobs.new_job_id()
    root, notes = _output_root(config, settings)
    argv = [*SKILLOPT, "eval", "--config", cfg, "--split", split, *_sets(_not_output(extra)),
            *_sets([f"output.root={root}", f"output.run_id={run_id}"]), "--json"]
    if skill is not None:
        argv[4:4] = ["--skill", str(skill)]
    job = jobs.start("evaluate", argv, cwd=config.cwd, label=f"eval {split} ({skill or 'seed skill'})",
                     run_dir=str(root / settings.env.name / f"eval-{run_id}"))
    return await _started(job, wait_seconds, ctx, notes)


async def job_status(ctx: Context, job_id: JobId | None = None, wait_seconds: Wait = 0) -> JobList:
    """The state of a job (step, latest scores, recent events, run directory, result), or of
    every job when no id is given. With wait_seconds, waits for the job to end and sends
    progress notifications from its events meanwhile."""
    config = guards.server_config(ctx)
    if job_id is None:
        if wait_seconds:
            raise ToolError("wait_seconds needs a job_id.")
        records = visible_jobs(config)
        active = sum(1 for j in records if j.active)
        shown = [j for i, j in enumerate(records) if i < LISTED_JOBS or j.active]
        more = f" (the newest {len(shown)} shown)" if len(shown) < len(records) else ""
        return JobList(jobs=[job_info(j, detail=False) for j in shown],
                       message=f"{len(records)} job{'' if len(records) == 1 else 's'}, {active} running{more}.")
    job = await _lookup(config, job_id)
    if wait_seconds > 0 and job.active:
        job = await follow(job_id, wait_seconds, reporter(ctx))
    return JobList(jobs=[job_info(job)])


async def cancel_job(ctx: Context, job_id: JobId) -> JobInfo:
    """Stop a running job cleanly (SIGINT, like Ctrl-C). A training run stops at its next
    checkpoint and stays resumable with train_skill(resume=...). Cancelling an ended job
    changes nothing."""
    config = guards.server_config(ctx)
    job = await _lookup(config, job_id)
    if not job.active:
        info = job_info(job)
        info.next = f"job {job_id} had already ended ({job.state}); nothing was changed. " + info.next
        return info
    await anyio.to_thread.run_sync(jobs.cancel, job_id)
    for _ in range(40):  # a clean stop usually takes well under 2 s; report it when it did
        job = jobs.read(job_id)
        if not job.active:
            break
        await anyio.sleep(0.05)
    return job_info(job)


async def list_runs(ctx: Context, env: Annotated[str | None, Field(description="only runs of this env")] = None,
                    limit: Annotated[int, Field(ge=1, le=500)] = 50) -> RunList:
    """Training and evaluation runs in the output folders, newest first."""
    config = guards.server_config(ctx)
    found = roots(config)
    refs = await anyio.to_thread.run_sync(lambda: [r for r in rd.iter_runs(found) if env in (None, r.env)])
    active = {Path(j.spec.run_dir): j.spec.job_id for j in jobs.list_jobs() if j.active and j.spec.run_dir}
    infos = [run_info(r, active.get(r.path)) for r in refs]
    infos.sort(key=lambda i: (i.started_at or "", i.run_id), reverse=True)
    return RunList(runs=infos[:limit], roots=[str(r) for r in found], truncated=len(infos) > limit)


async def get_run(ctx: Context, run: RunRef) -> RunDetail:
    """One run: its summary, per-step history, best skill text and recent events."""
    config = guards.server_config(ctx)
    ref = _resolve(config, run)
    active = _active_on(ref.path)
    reader = ref.reader
    return RunDetail(run=run_info(ref, active.spec.job_id if active else None), summary=reader.summary(),
                     history=reader.history_records(), best_skill=rd.read_text(ref, "best_skill.md"),
                     recent_events=[ev.event_line(e) for e in reader.last_events(12)])


TOOLS = (
    (train_skill, STARTS_MODEL_WORK),
    (evaluate_skill, STARTS_MODEL_WORK),
    (job_status, READ_ONLY),
    (cancel_job, CHANGES_LOCAL_STATE),
    (list_runs, READ_ONLY),
    (get_run, READ_ONLY),
)


def register(app: MCPServer) -> None:
    guards.register_tools(app, TOOLS)


async def _lookup(config: ServerConfig, job_id: str) -> jobs.JobRecord:
    try:
        job = jobs.read(job_id)
    except jobs.JobError as exc:
        raise ToolError(str(exc)) from None
    if not visible(config, job):
        if job.spec.kind == "sleep_run":
            raise guards.out_of_scope(config, f"job {job_id} (a night)", job.spec.project)
        raise ToolError(f"job {job_id} writes {job.spec.run_dir}, outside this server's output folders "
                        f"({', '.join(str(p) for p in config.outputs)}); job_status without an id lists its jobs.")
    return job


def _resolve(config: ServerConfig, ref: str) -> rd.RunRef:
    try:
        return rd.resolve(ref, roots(config))
    except rd.RunError as exc:
        raise ToolError(str(exc)) from None


def _not_output(extra: list[str]) -> list[str]:
    """The overrides without the output folder and run id, which the server pins itself (checked)."""
    return [v for v in extra if v.split("=", 1)[0].strip() not in ("output.root", "output.run_id")]


def _sets(values: list[str]) -> list[str]:
    return [arg for v in values for arg in ("--set", v)]


def run_info(ref: rd.RunRef, job_id: str | None = None) -> RunInfo:
    reader = ref.reader
    summary = reader.summary() or {}
    first = reader.first_event()
    info = RunInfo(run_id=ref.run_id, env=ref.env, kind=ref.kind, run_dir=str(ref.path), status="incomplete",
                   started_at=first.at or None if first else None, job_id=job_id)
    if ref.kind == "evaluate":
        info.status = "completed" if "hard" in summary else ("running" if job_id else "incomplete")
        info.split, info.hard, info.soft = summary.get("split"), summary.get("hard"), summary.get("soft")
        return info
    for key in ("steps_done", "total_steps", "initial_val", "best_val", "initial_test", "best_test"):
        setattr(info, key, summary.get(key))
    if job_id:
        info.status = "running"
    elif summary.get("status"):
        info.status = summary["status"]
    else:
        last = reader.last_events(1)
        if last and isinstance(last[-1], ev.RunEnd):
            info.status = last[-1].status or "incomplete"
    if info.total_steps is None and isinstance(first, ev.RunStarted):
        info.total_steps = first.total_steps
    return info
