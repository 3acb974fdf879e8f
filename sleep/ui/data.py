"""Nights and mined tasks for the dashboard: a small read interface over the index.

Other parts of SkillOpt-Sleep write these tables; the dashboard only reads,
through a read-only SQLite connection (it never creates or migrates the index).
A missing index, a missing table or an unreadable row gives an empty
:class:`Listing` whose ``note`` tells the person why and what to run.

Assumed tables (columns are looked up by name; absent ones read as unknown):

- ``tasks`` (the miner, index migration 3): ``id``, ``project``, ``intent``,
  ``prompt``, ``support``, ``hosts`` (JSON list), ``first_seen``,
  ``last_seen``, ``judge_summary``, ``enabled``.
- ``cycles`` (the nightly cycle): ``id``, ``project``, ``started_at``,
  ``finished_at``, ``stage`` (stage reached), ``outcome``, ``reason``,
  ``n_train``, ``n_val``, ``baseline_val``, ``candidate_val``, ``usage`` (JSON:
  ``calls`` or ``model_calls``, ``input_tokens``, ``output_tokens`` or
  ``tokens``, ``cost_usd``), ``run_dir``, ``proposal_id``. Also understood:
  ``tasks`` (JSON list of ids, or ``{"train": [...], "val": [...]}``),
  ``scores`` (JSON ``{"baseline": x, "candidate": y}``) and a ``report`` JSON
  holding any of these keys.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from sleep import paths

T = TypeVar("T")


@dataclass(frozen=True)
class Listing(Generic[T]):
    rows: list[T] = field(default_factory=list)
    available: bool = True  # False: the table (or the index) does not exist yet
    note: str = ""  # why the list is empty, or what was skipped


@dataclass(frozen=True)
class Night:
    id: str
    project: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    stage: str | None = None
    outcome: str | None = None
    reason: str = ""
    n_train: int | None = None
    n_val: int | None = None
    baseline_val: float | None = None
    candidate_val: float | None = None
    calls: int | None = None
    tokens: int | None = None
    cost_usd: float | None = None
    run_dir: str | None = None
    proposal_id: str | None = None

    @property
    def n_tasks(self) -> int | None:
        if self.n_train is None and self.n_val is None:
            return None
        return (self.n_train or 0) + (self.n_val or 0)


@dataclass(frozen=True)
class MinedTask:
    id: str
    project: str | None = None
    intent: str = ""
    prompt: str = ""
    support: int | None = None
    hosts: tuple[str, ...] = ()
    first_seen: str | None = None
    last_seen: str | None = None
    judge_summary: str = ""
    enabled: bool = True


def _connect(index_path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"{index_path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
    conn.execute("PRAGMA busy_timeout=5000")
    return conn


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})").fetchall()]


def _open(table: str, index_path: Path | None, missing: str) -> tuple[sqlite3.Connection | None, list[str], str]:
    path = Path(index_path) if index_path else paths.index_path()
    if not path.is_file():
        return None, [], f"No index yet at {path}: run `skillopt-sleep harvest` first."
    try:
        conn = _connect(path)
        cols = _columns(conn, table)
    except sqlite3.Error as exc:
        return None, [], f"Could not read the index {path}: {exc}. Close other SkillOpt processes and reload."
    if not cols:
        conn.close()
        return None, [], missing
    return conn, cols, ""


def _json(value: Any) -> Any:
    if value is None or isinstance(value, (int, float, dict, list)):
        return value
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return None


def _num(value: Any, kind: type) -> Any:
    try:
        return None if value is None or value == "" else kind(value)
    except (TypeError, ValueError):
        return None


def _night(row: dict[str, Any]) -> Night:
    report = _json(row.get("report"))
    report = report if isinstance(report, dict) else {}

    def get(key: str) -> Any:
        return row[key] if row.get(key) is not None else report.get(key)

    usage = _json(get("usage"))
    usage = usage if isinstance(usage, dict) else {}
    scores = _json(get("scores"))
    scores = scores if isinstance(scores, dict) else {}
    tasks = _json(get("tasks"))
    n_train, n_val = _num(get("n_train"), int), _num(get("n_val"), int)
    if isinstance(tasks, dict):
        n_train = n_train if n_train is not None else len(tasks.get("train") or [])
        n_val = n_val if n_val is not None else len(tasks.get("val") or [])
    elif isinstance(tasks, list) and n_train is None and n_val is None:
        n_train = len(tasks)
    tokens = usage.get("tokens")
    if tokens is None and ("input_tokens" in usage or "output_tokens" in usage):
        tokens = (usage.get("input_tokens") or 0) + (usage.get("output_tokens") or 0)
    baseline = get("baseline_val")
    candidate = get("candidate_val")
    return Night(
        id=str(row.get("id") or row.get("rowid") or "?"), project=get("project"),
        started_at=get("started_at"), finished_at=get("finished_at"), stage=get("stage"),
        outcome=get("outcome"), reason=str(get("reason") or get("error") or ""),
        n_train=n_train, n_val=n_val,
        baseline_val=_num(baseline if baseline is not None else scores.get("baseline"), float),
        candidate_val=_num(candidate if candidate is not None else scores.get("candidate"), float),
        calls=_num(usage.get("calls", usage.get("model_calls", get("model_calls"))), int),
        tokens=_num(tokens if tokens is not None else get("tokens"), int),
        cost_usd=_num(usage.get("cost_usd", get("cost_usd")), float),
        run_dir=get("run_dir"), proposal_id=get("proposal_id"))


def list_nights(*, project: str | None = None, limit: int = 200, index_path: Path | None = None) -> Listing[Night]:
    """Past nights, newest first (at most ``limit``); ``project`` keeps one project's."""
    conn, cols, note = _open("cycles", index_path, (
        "No nights recorded yet: this version's index has no `cycles` table. Nights appear here once "
        "`skillopt-sleep run` (the nightly cycle) has run."))
    if conn is None:
        return Listing([], False, note)
    try:
        order = "started_at DESC" if "started_at" in cols else "rowid DESC"
        sql = f"SELECT rowid, * FROM cycles{' WHERE project = ?' if project and 'project' in cols else ''} " \
              f"ORDER BY {order} LIMIT ?"
        args: tuple[Any, ...] = ((project,) if project and "project" in cols else ()) + (int(limit),)
        cur = conn.execute(sql, args)
        names = [d[0] for d in cur.description]
        rows = [_night(dict(zip(names, r))) for r in cur.fetchall()]
    except sqlite3.Error as exc:
        return Listing([], True, f"Could not read the nights: {exc}.")
    finally:
        conn.close()
    return Listing(rows, True, "" if rows else "No nights yet: run `skillopt-sleep run` in a project.")


def last_night(index_path: Path | None = None) -> Night | None:
    listing = list_nights(limit=1, index_path=index_path)
    return listing.rows[0] if listing.rows else None


def _task(row: dict[str, Any]) -> MinedTask:
    hosts = _json(row.get("hosts"))
    return MinedTask(
        id=str(row.get("id")), project=row.get("project"), intent=str(row.get("intent") or ""),
        prompt=str(row.get("prompt") or ""), support=_num(row.get("support"), int),
        hosts=tuple(str(h) for h in hosts) if isinstance(hosts, list) else (),
        first_seen=row.get("first_seen"), last_seen=row.get("last_seen"),
        judge_summary=str(row.get("judge_summary") or ""),
        enabled=True if row.get("enabled") is None else bool(row["enabled"]))


def list_tasks(*, project: str | None = None, index_path: Path | None = None) -> Listing[MinedTask]:
    """Mined recurring tasks, most supported first; ``project`` keeps one project's."""
    conn, cols, note = _open("tasks", index_path, (
        "No mined tasks yet: this version's index has no `tasks` table. Tasks appear here once "
        "`skillopt-sleep mine` has found something you repeat."))
    if conn is None:
        return Listing([], False, note)
    wanted = [c for c in ("id", "project", "intent", "prompt", "support", "hosts", "first_seen", "last_seen",
                          "judge_summary", "enabled") if c in cols]
    if "id" not in wanted:
        conn.close()
        return Listing([], False, "The index's `tasks` table has no `id` column; this dashboard cannot read it.")
    try:
        where = " WHERE project = ?" if project and "project" in cols else ""
        order = " ORDER BY support DESC, id" if "support" in cols else " ORDER BY id"
        cur = conn.execute(f"SELECT {', '.join(wanted)} FROM tasks{where}{order}",
                           (project,) if where else ())
        rows = [_task(dict(zip(wanted, r))) for r in cur.fetchall()]
    except sqlite3.Error as exc:
        return Listing([], True, f"Could not read the mined tasks: {exc}.")
    finally:
        conn.close()
    return Listing(rows, True, "" if rows else "No recurring task found yet: run `skillopt-sleep mine`.")
