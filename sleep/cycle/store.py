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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from sleep import paths
from sleep.index import Index, _now, within_sql
from sleep.lock import FileLock

OUTCOMES = ("running", "staged", "would_stage", "already_proposed", "no_improvement", "too_few_tasks", "idle", "failed",
            "interrupted")


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
    skill: dict[str, Any] = field(default_factory=dict)
    tasks: dict[str, Any] = field(default_factory=dict)
    scores: dict[str, Any] = field(default_factory=dict)
    corrections: dict[str, Any] = field(default_factory=dict)
    proposal: dict[str, Any] | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    harvest: dict[str, Any] = field(default_factory=dict)
    mine: dict[str, Any] = field(default_factory=dict)
    run_dir: str | None = None
    wall_s: float = 0.0
    fingerprint: str | None = None
    replay: dict[str, Any] = field(default_factory=dict)  # which replay mode ran and why
    skills: list[dict[str, Any]] = field(default_factory=list)  # per skill: its outcome, scores, usage (multiskill)
    preflight: dict[str, Any] = field(default_factory=dict)  # calls and dollars estimated before the replay
    paired: dict[str, Any] = field(default_factory=dict)  # with vs without the skill (sleep.cycle.lifecycle)
    triggers: dict[str, Any] = field(default_factory=dict)  # trigger figures before/after (sleep.cycle.triggers)
    package: dict[str, Any] = field(default_factory=dict)  # a package edit and its gate (sleep.cycle.package)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
    data.update(outcome="interrupted", finished_at=data.get("finished_at") or _now(),
                reason=f"the night stopped during its {data.get('stage')} stage (killed or crashed); "
                       "nothing was staged" + _spent(data.get("usage") or {}))
    index.conn.execute("UPDATE cycles SET outcome = 'interrupted', reason = ?, finished_at = ?, pid = NULL,"
                       " report = ? WHERE id = ?", (data["reason"], data["finished_at"], orjson.dumps(data), night_id))


def _spent(usage: dict[str, Any]) -> str:
    calls = usage.get("model_calls")
    return f"; it had made {calls} model calls ({usage.get('tokens', 0)} tokens)" if calls else ""


def nights(index: Index, project: str | None = None, limit: int = 50, *,
           within: str | None = None) -> list[NightRecord]:
    """Nights, newest first (of ``project`` when given; of the projects at or below the
    folder ``within`` when given, the CLI's default scope)."""
    cond, args = within_sql("project", within) if within else ("project = ?", [project]) if project else ("1=1", [])
    sql = f"SELECT report FROM cycles WHERE {cond} ORDER BY started_at DESC LIMIT ?"
    args.append(limit)
    known = set(NightRecord.__dataclass_fields__)
    return [NightRecord(**{k: v for k, v in orjson.loads(r[0]).items() if k in known})
            for r in index.conn.execute(sql, args)]


def count(index: Index) -> int:
    """How many nights the index holds (every project)."""
    return int(index.conn.execute("SELECT COUNT(*) FROM cycles").fetchone()[0])


def last_completed(index: Index, project: str) -> NightRecord | None:
    """The newest night of ``project`` that trained or found nothing to do (not failed or interrupted)."""
    for night in nights(index, project, limit=20):
        if night.outcome in ("staged", "would_stage", "already_proposed", "no_improvement", "idle") and not night.dry_run:
            return night
    return None
