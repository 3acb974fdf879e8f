"""Schedules in the index (``schedules``, migration 6): the one source of truth for
``status``, the daemon and the MCP ``schedule_sleep`` tool."""

from __future__ import annotations

import json

from skillopt_core.timestamps import utc_now
from sleep.index import Index
from sleep.scheduler.model import Schedule

_COLUMNS = "project, key, at, mode, jitter_s, argv, env, installed, last_fired_at, created_at, updated_at"


def _row(row: tuple) -> Schedule:
    project, key, at, mode, jitter_s, argv, env, installed, last_fired_at, created_at, updated_at = row
    return Schedule(project=project, key=key, at=at, mode=mode, jitter_s=int(jitter_s), argv=json.loads(argv),
                    env=json.loads(env), installed=json.loads(installed or "{}"), last_fired_at=last_fired_at,
                    created_at=created_at, updated_at=updated_at)


def all_schedules(index: Index) -> list[Schedule]:
    return [_row(r) for r in index.conn.execute(f"SELECT {_COLUMNS} FROM schedules ORDER BY project")]


def get(index: Index, project: str) -> Schedule | None:
    row = index.conn.execute(f"SELECT {_COLUMNS} FROM schedules WHERE project = ?", (project,)).fetchone()
    return _row(row) if row else None


def put(index: Index, s: Schedule) -> Schedule:
    """Insert or update; keeps ``created_at`` of an existing row and stamps ``updated_at``."""
    now = utc_now()
    with index.transaction():
        old = index.conn.execute("SELECT created_at FROM schedules WHERE project = ?", (s.project,)).fetchone()
        s.created_at = old[0] if old else now
        s.updated_at = now
        index.conn.execute(
            f"INSERT OR REPLACE INTO schedules ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (s.project, s.key, s.at, s.mode, int(s.jitter_s), json.dumps(s.argv), json.dumps(s.env),
             json.dumps(s.installed), s.last_fired_at, s.created_at, s.updated_at))
    return s


def delete(index: Index, project: str) -> bool:
    with index.transaction():
        cur = index.conn.execute("DELETE FROM schedules WHERE project = ?", (project,))
    return cur.rowcount > 0


def mark_fired(index: Index, project: str, when: str | None = None) -> None:
    """Record that the daemon started the project's night (its catch-up rule reads this)."""
    with index.transaction():
        index.conn.execute("UPDATE schedules SET last_fired_at = ? WHERE project = ?", (when or utc_now(), project))


def fingerprint(schedules: list[Schedule]) -> tuple:
    """What the daemon's jobs depend on; a change means re-planning them."""
    return tuple((s.project, s.at, s.mode, s.jitter_s, tuple(s.argv)) for s in schedules)
