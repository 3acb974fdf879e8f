"""Nights in the index (``cycles``, migration 5).

A night's row is written when it starts (outcome ``running``, with its pid)
and rewritten at each stage, after each model call (its spend) and at the end,
each in its own short transaction. A night killed mid-way leaves ``running``
behind; it is marked ``interrupted`` by the next night of the project (holding
the project's lock, so the killed one cannot still be alive) and, at once, by
``status`` and ``history`` (:func:`settle_dead`: the night's lock is free, so
its process is gone).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import orjson

from skillopt_core.timestamps import utc_now
from sleep import paths
from sleep.index import Index, within_sql
from sleep.lock import FileLock

OUTCOMES = ("running", "staged", "would_stage", "already_proposed", "no_improvement", "too_few_tasks", "idle", "failed",
            "interrupted")


# The shapes of the night record's parts (the index's ``report`` JSON, read by the CLI, the MCP
# tools and the dashboard). Every key is optional: a part is filled as the night gets that far.

class NightSkill(TypedDict, total=False):
    path: str
    name: str
    host: str
    managed: bool
    why: str


class NightTasks(TypedDict, total=False):
    train: list[str]  # item ids
    val: list[str]
    total: int  # instances
    recurring: int  # distinct recurring tasks
    note: str  # e.g. too few val items for the gate to say much


class NightScores(TypedDict, total=False):
    baseline: float | None  # the starting skill's val mean
    candidate: float | None  # the best skill's
    status: str  # the run's: completed | budget_exhausted | cancelled | failed
    best_source: str
    policy: str  # the gate policy


class RefusedCorrection(TypedDict):
    content: str
    reason: str


class NightCorrections(TypedDict, total=False):
    offered: list[str]
    kept: list[str]  # records before issue 30 say ``accepted``
    accepted: list[str]
    rejected: list[str]
    refused: list[RefusedCorrection]
    not_selected: list[str]


class NightProposal(TypedDict, total=False):
    id: str
    branch: str
    where: str
    skill_path: str


class NightUsage(TypedDict, total=False):
    model_calls: int
    input_tokens: int
    output_tokens: int
    tokens: int
    cost_usd: float


NIGHT_RECORD_VERSION = 1


@dataclass
class NightRecord:
    id: str
    project: str
    started_at: str
    stage: str = "start"
    outcome: str = "running"
    reason: str = ""
    dry_run: bool = False
    finished_at: str | None = None
    skill: NightSkill = field(default_factory=NightSkill)
    tasks: NightTasks = field(default_factory=NightTasks)
    scores: NightScores = field(default_factory=NightScores)
    corrections: NightCorrections = field(default_factory=NightCorrections)
    proposal: NightProposal | None = None
    usage: NightUsage = field(default_factory=NightUsage)
    harvest: dict[str, int] = field(default_factory=dict)  # sessions_new, sessions_updated
    mine: dict[str, int] = field(default_factory=dict)  # tasks_new, tasks_updated, tasks_total
    run_dir: str | None = None
    wall_s: float = 0.0
    fingerprint: str | None = None
    replay: dict[str, Any] = field(default_factory=dict)  # which replay mode ran and why (sleep.replay.modes)
    skills: list[dict[str, Any]] = field(default_factory=list)  # per skill: its outcome, scores, usage (multiskill)
    preflight: dict[str, Any] = field(default_factory=dict)  # calls and dollars estimated before the replay
    paired: dict[str, Any] = field(default_factory=dict)  # with vs without the skill (sleep.cycle.lifecycle)
    triggers: dict[str, Any] = field(default_factory=dict)  # trigger figures before/after (sleep.cycle.triggers)
    package: dict[str, Any] = field(default_factory=dict)  # a package edit and its gate (sleep.cycle.package)
    judge_probe: dict[str, Any] = field(default_factory=dict)  # can the model judge tell answers apart (judgeprobe)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NightRecord:
        """A record as the index keeps it (:meth:`to_dict`), of this or an earlier build: keys this
        build does not know are ignored (a later build's), missing ones take their defaults."""
        known = set(cls.__dataclass_fields__)
        version = data.get("version", NIGHT_RECORD_VERSION)
        if isinstance(version, int) and version > NIGHT_RECORD_VERSION:
            raise ValueError(f"night {data.get('id')}: record version {version} is newer than this build reads "
                             f"({NIGHT_RECORD_VERSION}); update SkillOpt to read it")
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class SkillPart:
    """One skill's part of a night as its steps fill it (:mod:`sleep.cycle.skillpart`); the night
    record keeps it in ``skills`` (:func:`sleep.cycle.multiskill.part_summary`, ``PART_FIELDS``), and
    its first staged part also in the record's single-skill fields. ``id`` and ``dry_run`` are the
    night's (the with/without, trigger and package steps read them)."""

    id: str
    dry_run: bool = False
    outcome: str = "running"
    reason: str = ""
    tasks: NightTasks = field(default_factory=NightTasks)
    scores: NightScores = field(default_factory=NightScores)
    corrections: NightCorrections = field(default_factory=NightCorrections)
    proposal: NightProposal | None = None
    usage: NightUsage = field(default_factory=NightUsage)
    run_dir: str | None = None
    fingerprint: str | None = None
    replay: dict[str, Any] = field(default_factory=dict)
    preflight: dict[str, Any] = field(default_factory=dict)
    paired: dict[str, Any] = field(default_factory=dict)
    triggers: dict[str, Any] = field(default_factory=dict)
    package: dict[str, Any] = field(default_factory=dict)
    judge_probe: dict[str, Any] = field(default_factory=dict)


def save(index: Index, night: NightRecord) -> None:
    """Insert or update the night's row (one transaction)."""
    with index.transaction():
        index.conn.execute(
            "INSERT OR REPLACE INTO cycles (id, project, started_at, finished_at, stage, outcome, reason, dry_run,"
            " skill_path, n_train, n_val, baseline_val, candidate_val, usage, run_dir, proposal_id, fingerprint,"
            " pid, report) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (night.id, night.project, night.started_at, night.finished_at, night.stage, night.outcome, night.reason,
             int(night.dry_run), night.skill.get("path"), len(night.tasks.get("train", [])) or None,
             len(night.tasks.get("val", [])) or None, night.scores.get("baseline"), night.scores.get("candidate"),
             json.dumps(night.usage), night.run_dir, (night.proposal or {}).get("id"), night.fingerprint,
             os.getpid() if night.outcome == "running" else None, orjson.dumps(night.to_dict())))


def night_lock_path(project: str) -> Path:
    """The lock a night of ``project`` holds from its start to its last record."""
    digest = hashlib.sha256(project.encode()).hexdigest()[:16]
    return paths.data_dir() / "locks" / f"night-{digest}.lock"


def mark_interrupted(index: Index, project: str) -> int:
    """Nights of ``project`` still marked running (their process died); call with the project's lock held."""
    with index.transaction():
        rows = index.conn.execute("SELECT id, report FROM cycles WHERE project = ? AND outcome = 'running'",
                                  (project,)).fetchall()
        for night_id, report in rows:
            _interrupt(index, night_id, report)
    return len(rows)


def settle_dead(index: Index) -> int:
    """Mark ``interrupted`` every night recorded running whose process is gone (its lock is
    free; the OS frees it when a process dies, however it died). Returns how many."""
    rows = index.conn.execute("SELECT id, project FROM cycles WHERE outcome = 'running'").fetchall()
    dead = [(night_id, project) for night_id, project in rows
            if not FileLock(night_lock_path(project)).held()]
    if not dead:
        return 0
    with index.transaction():
        for night_id, _ in dead:
            row = index.conn.execute("SELECT report FROM cycles WHERE id = ? AND outcome = 'running'",
                                     (night_id,)).fetchone()
            if row is not None:
                _interrupt(index, night_id, row[0])
    return len(dead)


def _interrupt(index: Index, night_id: str, report: bytes) -> None:
    data = orjson.loads(report)
    data.update(outcome="interrupted", finished_at=data.get("finished_at") or utc_now(),
                reason=interrupted_reason(data.get("stage"), data.get("usage") or {}))
    index.conn.execute("UPDATE cycles SET outcome = 'interrupted', reason = ?, finished_at = ?, pid = NULL,"
                       " report = ? WHERE id = ?", (data["reason"], data["finished_at"], orjson.dumps(data), night_id))


def interrupted_reason(stage: str | None, usage: dict[str, Any]) -> str:
    """Why a night whose process is gone ended, with what it spent and the next step."""
    return (f"the night stopped during its {stage} stage (killed or crashed); nothing was staged{_spent(usage)}; "
            "`skillopt-sleep run` starts it over (what it harvested is kept)")


def _spent(usage: dict[str, Any]) -> str:
    calls = usage.get("model_calls")
    return f"; it had made {calls} model calls ({usage.get('tokens', 0)} tokens)" if calls else ""


def nights(index: Index, project: str | None = None, limit: int = 50, *,
           within: str | None = None) -> list[NightRecord]:
    """Nights, newest first (of ``project`` when given; of the projects at or below the
    folder ``within`` when given, the CLI's default scope)."""
    args: list[object]
    if within:
        cond, args = within_sql("project", within)
    elif project:
        cond, args = "project = ?", [project]
    else:
        cond, args = "1=1", []
    sql = f"SELECT report FROM cycles WHERE {cond} ORDER BY started_at DESC LIMIT ?"
    args.append(limit)
    return [NightRecord.from_dict(orjson.loads(r[0])) for r in index.conn.execute(sql, args)]


def count(index: Index) -> int:
    """How many nights the index holds (every project)."""
    return int(index.conn.execute("SELECT COUNT(*) FROM cycles").fetchone()[0])
