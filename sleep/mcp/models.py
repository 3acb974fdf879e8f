"""Typed results of the MCP tools (each becomes the tool's ``outputSchema``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from sleep.proposals.model import State as ProposalState  # every state a proposal can be in, "undone" too

JobKind = Literal["train", "evaluate", "sleep_run"]
JobState = Literal["starting", "running", "cancelling", "completed", "budget_exhausted", "cancelled",
                   "failed", "error", "busy", "lost"]


class TrainSummary(BaseModel):
    """The end of a training run, as ``skillopt train --json`` prints it."""

    status: str
    steps_done: int
    total_steps: int
    initial_val: float | None = None
    best_val: float | None = None
    initial_test: float | None = None
    best_test: float | None = None
    accepted: int = 0
    rejected: int = 0
    best_source: str = ""
    best_reason: str = ""
    error: str = ""
    failed_items: int = 0
    usage: dict[str, int | float] = Field(default_factory=dict)
    preflight: dict[str, Any] | None = Field(None, description="the estimate made before the run: calls, usd, "
                                             "one_step, unpriced_roles and budget warnings")


class EvalScores(BaseModel):
    """Scores of one skill on one split (``skillopt eval --json``)."""

    split: str
    skill: str
    n_items: int
    hard: float = Field(description="mean pass/fail score, 0..1")
    soft: float = Field(description="mean partial-credit score, 0..1")
    failed_items: int = 0
    skill_hash: str = ""


class JobInfo(BaseModel):
    """One background job: a training run, an evaluation or a night."""

    job_id: str
    kind: JobKind
    state: JobState
    label: str = ""
    created_at: str
    ended_at: str | None = None
    exit_code: int | None = None
    command: list[str] = Field(description="the command the job runs (the same CLI a person would type)")
    cwd: str
    run_id: str | None = None
    run_dir: str | None = Field(None, description="the run directory it writes (train / evaluate)")
    project: str | None = None
    step: int | None = Field(None, description="training steps finished")
    total_steps: int | None = None
    best_val: float | None = None
    last_score: str | None = Field(None, description="the latest rollout score, e.g. 'gate candidate 0.75'")
    recent_events: list[str] = Field(default_factory=list, description="the last events, one line each")
    train_summary: TrainSummary | None = None
    eval_scores: EvalScores | None = None
    night: dict[str, Any] | None = Field(None, description="the night record printed by `skillopt-sleep run --json`")
    error: str | None = Field(None, description="why it failed (the end of its stderr)")
    next: str = Field("", description="what to do next")
    notes: list[str] = Field(default_factory=list, description="what the server decided for this call, e.g. "
                                                               "where the run is written")


class JobList(BaseModel):
    jobs: list[JobInfo]
    message: str = ""


class RunInfo(BaseModel):
    """One run directory."""

    run_id: str
    env: str
    kind: Literal["train", "evaluate"]
    run_dir: str
    status: str = Field(description="completed, budget_exhausted, cancelled, failed, running or incomplete")
    started_at: str | None = None
    steps_done: int | None = None
    total_steps: int | None = None
    initial_val: float | None = None
    best_val: float | None = None
    initial_test: float | None = None
    best_test: float | None = None
    split: str | None = None
    hard: float | None = None
    soft: float | None = None
    job_id: str | None = None


class RunList(BaseModel):
    runs: list[RunInfo]
    roots: list[str] = Field(description="the output folders searched")
    truncated: bool = False


class RunDetail(BaseModel):
    run: RunInfo
    summary: dict[str, Any] | None = Field(None, description="summary.json")
    history: list[dict[str, Any]] = Field(default_factory=list, description="history.json: one record per step")
    best_skill: str | None = Field(None, description="the text of best_skill.md")
    recent_events: list[str] = Field(default_factory=list)


class ProposalSummary(BaseModel):
    """One staged proposal (a git branch with one commit changing one skill file)."""

    id: str
    state: ProposalState
    stale_reason: str | None = None
    skill_name: str
    skill_path: str
    project: str | None = None
    branch: str
    night: str
    created_at: str
    baseline_val: float | None = None
    candidate_val: float | None = None
    n_edits: int = 0
    decided_at: str | None = None
    reason: str | None = None


class ProposalList(BaseModel):
    proposals: list[ProposalSummary]
    message: str = ""


class EvidenceCommand(BaseModel):
    command: str
    exit_code: int | None = None
    denied: bool = Field(False, description="the sandbox's policy refused it (it did not run)")


class EvidenceFile(BaseModel):
    path: str
    change: str = Field("", description="added, modified or deleted")


class EvidenceCheck(BaseModel):
    command: str
    passed: bool | None = None
    exit_code: int | None = None


class EvidenceSide(BaseModel):
    replayed: bool = Field(False, description="false: no rollout of this instance under this skill was found")
    acted: bool = Field(False, description="false: a read-only replay (only the answer came back)")
    passed: bool | None = Field(None, description="the judge's verdict")
    score: float | None = None
    feedback: str = Field("", description="the judge's sentence")
    answer: str = Field("", description="the start of the agent's final answer")
    commands: list[EvidenceCommand] = Field(default_factory=list)
    files: list[EvidenceFile] = Field(default_factory=list)
    checks: list[EvidenceCheck] = Field(default_factory=list)


class EvidenceInstance(BaseModel):
    task: str
    prompt: str = Field("", description="the start of the instance's prompt")
    before: EvidenceSide
    after: EvidenceSide


class ProposalDetail(BaseModel):
    proposal: ProposalSummary
    report_text: str = Field(description="the report as `skillopt-sleep show` prints it")
    diff: str = Field(description="the staged commit's diff of the skill file")
    branch_tip: str | None = Field(None, description="where the branch points now (null: deleted)")
    report: dict[str, Any] = Field(default_factory=dict, description="the full report (scores, edits, deltas)")
    evidence: list[EvidenceInstance] = Field(
        default_factory=list, description="per val instance, what the agent did under the starting skill (before) "
                                          "and under the candidate (after): commands run, files changed, checks, "
                                          "the judge's verdict")


class DecisionResult(BaseModel):
    """What adopt or reject changed, exactly."""

    proposal: ProposalSummary
    action: Literal["adopted", "rejected"]
    wrote_file: str | None = Field(None, description="the live skill file that now has the candidate's text")
    commit: str | None = Field(None, description="the commit made (adopt with commit=true)")
    branch_deleted: str | None = Field(None, description="the branch deleted, if any")
    messages: list[str] = Field(default_factory=list)
    changed: list[str] = Field(description="every change made, one sentence each")


class HarvestResult(BaseModel):
    """What one harvest read into the index (counts only, never transcript text)."""

    scope: str
    files_seen: int
    files_read: int
    sessions_new: int
    sessions_updated: int
    secrets_redacted: int
    skipped: dict[str, int] = Field(default_factory=dict)
    index_path: str
    elapsed_s: float
    report: dict[str, Any] = Field(default_factory=dict, description="the full `harvest --json` report")


class SleepStatus(BaseModel):
    last_night: dict[str, Any] | None = Field(None, description="the latest night record")
    last_night_note: str = ""
    next_night: str | None = None
    schedule_note: str = ""
    pending_proposals: list[ProposalSummary] = Field(default_factory=list)
    running_jobs: list[JobInfo] = Field(default_factory=list)


class ScheduleResult(BaseModel):
    """What schedule_sleep / unschedule_sleep did (or, with dry_run, would do)."""

    scheduled: bool = Field(description="whether the project has a nightly run after this call")
    project: str | None = None
    mode: str | None = Field(None, description="cron, systemd, launchd or daemon")
    at: str | None = Field(None, description="local time of the night, HH:MM")
    next_night: str | None = Field(None, description="the next night, local time (ISO 8601)")
    message: str = ""
    changes: list[str] = Field(default_factory=list, description="every change made, one sentence each")
    notes: list[str] = Field(default_factory=list)
    entry: dict[str, str] = Field(default_factory=dict, description="dry_run: the files or crontab lines it writes")
