"""Nights and mined tasks for the dashboard: a small read interface over the index.

Other parts of SkillOpt-Sleep write these tables; the dashboard only reads,
through a read-only SQLite connection (it never creates or migrates the index).
A missing index, a missing table or an unreadable row gives an empty
:class:`Listing` whose ``note`` tells the person why and what to run. Every
text of a row passes through :func:`sleep.ui.outbound.outbound` (and a value
of an unexpected type is shown as text), so the pages show the rows as they
are, minus any secret.

Tables read:

- ``tasks`` (the miner, index migration 3): ``id``, ``project``, ``intent``,
  ``prompt``, ``support``, ``hosts`` (JSON list), ``first_seen``,
  ``last_seen``, ``judge_summary``, ``enabled``.
- ``task_members`` and ``mine_prompts`` (the miner): the prompts a task was mined from,
  and ``sessions`` (the harvest) for when they were; the task detail page only.
- ``cycles`` (the nightly cycle, migration 5, :mod:`sleep.nightstore`): the
  columns ``id``, ``project``, ``started_at``, ``finished_at``, ``stage``,
  ``outcome``, ``reason``, ``run_dir``, ``proposal_id``, and the night's
  whole record in ``report`` (tasks, scores, usage, proposal).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from sleep import paths
from sleep.jsonshape import as_dict, as_list
from sleep.ui.outbound import outbound

T = TypeVar("T")


@dataclass(frozen=True)
class Listing(Generic[T]):
    rows: list[T] = field(default_factory=list)
    available: bool = True  # False: the table (or the index) does not exist yet
    note: str = ""  # why the list is empty, or what was skipped


@dataclass(frozen=True)
class NightSkill:
    """One skill's part of a night (the record's ``skills`` list)."""
    name: str
    host: str | None = None
    path: str | None = None
    outcome: str | None = None
    reason: str = ""
    baseline_val: float | None = None
    candidate_val: float | None = None
    calls: int | None = None
    proposal_id: str | None = None
    lesson_from: str | None = None


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
    skills: tuple[NightSkill, ...] = ()  # a night of several skills: each one's result (issue 26)
    est_calls: int | None = None  # the preflight estimate made before the replay (sleep.cycle.night)
    est_usd: float | None = None
    budget_warnings: tuple[str, ...] = ()

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
        return None, [], (f"No index yet at {path}: nothing has been read from your agent sessions. "
                          "`skillopt-sleep harvest` reads them, `skillopt-sleep mine` finds the tasks you repeat, "
                          "and `skillopt-sleep run` trains a night on those tasks "
                          "(`skillopt-sleep schedule` runs it every night; `skillopt-sleep demo` shows one on "
                          "sample data).")
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


def _text(value: Any) -> str | None:
    """A column or report value as displayed text (None stays None)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return outbound(value if isinstance(value, str) else str(value))


def _num(value: Any, kind: type) -> Any:
    try:
        return None if value is None or value == "" else kind(value)
    except (TypeError, ValueError):
        return None


def _size(value: Any) -> int | None:
    return len(value) if isinstance(value, list) else None if value is not None else 0


def _night(row: dict[str, Any]) -> Night:
    """A ``cycles`` row as written by :mod:`sleep.nightstore` (the night's record is its ``report``)."""
    report = _json(row.get("report"))
    report = report if isinstance(report, dict) else {}
    usage = as_dict(report.get("usage"))
    tasks = as_dict(report.get("tasks"))
    scores = as_dict(report.get("scores"))
    proposal = as_dict(report.get("proposal"))
    preflight = as_dict(report.get("preflight"))
    warnings = as_list(preflight.get("warnings"))
    if row.get("outcome") == "running" and _process_gone(row.get("project")):
        from sleep.nightstore import interrupted_reason

        row = {**row, "outcome": "interrupted",
               "reason": interrupted_reason(row.get("stage") or report.get("stage"), usage)}
    return Night(
        id=_text(row.get("id")) or "?", project=_text(row.get("project")), started_at=_text(row.get("started_at")),
        finished_at=_text(row.get("finished_at")), stage=_text(row.get("stage")), outcome=_text(row.get("outcome")),
        reason=_text(row.get("reason")) or "",
        n_train=_size(tasks.get("train")) if tasks else None, n_val=_size(tasks.get("val")) if tasks else None,
        baseline_val=_num(scores.get("baseline"), float), candidate_val=_num(scores.get("candidate"), float),
        calls=_num(usage.get("model_calls"), int), tokens=_num(usage.get("tokens"), int),
        cost_usd=_num(usage.get("cost_usd"), float), run_dir=_text(row.get("run_dir")),
        proposal_id=_text(proposal.get("id") or row.get("proposal_id")),
        skills=tuple(_night_skill(p) for p in report.get("skills") or [] if isinstance(p, dict)),
        est_calls=_num(preflight.get("calls"), int), est_usd=_num(preflight.get("usd"), float),
        budget_warnings=tuple(w for w in warnings if isinstance(w, str)))


def _night_skill(part: dict[str, Any]) -> NightSkill:
    scores = as_dict(part.get("scores"))
    usage = as_dict(part.get("usage"))
    proposal = as_dict(part.get("proposal"))
    return NightSkill(name=_text(part.get("name")) or "?", host=_text(part.get("host")), path=_text(part.get("path")),
                      outcome=_text(part.get("outcome")), reason=_text(part.get("reason")) or "",
                      baseline_val=_num(scores.get("baseline"), float),
                      candidate_val=_num(scores.get("candidate"), float),
                      calls=_num(usage.get("model_calls"), int), proposal_id=_text(proposal.get("id")),
                      lesson_from=_text(part.get("lesson_from")))


def _process_gone(project: Any) -> bool:
    """Whether a night recorded running has no process any more: its lock is free (the OS frees
    it however the process died). Shown as interrupted at once, as ``status`` and ``history`` do
    (:func:`sleep.nightstore.settle_dead`); the dashboard only reads, so the record itself is
    settled by the next command that writes."""
    if not isinstance(project, str) or not project:
        return False
    from sleep.lock import FileLock
    from sleep.nightstore import night_lock_path

    try:
        return not FileLock(night_lock_path(project)).held()
    except OSError:
        return False


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
        rows = [_night(dict(zip(names, r, strict=True))) for r in cur.fetchall()]
    except sqlite3.Error as exc:
        return Listing([], True, f"Could not read the nights: {exc}.")
    finally:
        conn.close()
    return Listing(rows, True, "" if rows else (
        "No nights yet. A night needs mined tasks: `skillopt-sleep harvest`, then `skillopt-sleep mine`, "
        "then `skillopt-sleep run` in the project (or `skillopt-sleep schedule` to run it every night)."))


def last_night(index_path: Path | None = None) -> Night | None:
    listing = list_nights(limit=1, index_path=index_path)
    return listing.rows[0] if listing.rows else None


def _task(row: dict[str, Any]) -> MinedTask:
    hosts = _json(row.get("hosts"))
    return MinedTask(
        id=_text(row.get("id")) or "?", project=_text(row.get("project")), intent=_text(row.get("intent")) or "",
        prompt=_text(row.get("prompt")) or "", support=_num(row.get("support"), int),
        hosts=tuple(_text(h) or "" for h in hosts) if isinstance(hosts, list) else (),
        first_seen=_text(row.get("first_seen")), last_seen=_text(row.get("last_seen")),
        judge_summary=_text(row.get("judge_summary")) or "",
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
        rows = [_task(dict(zip(wanted, r, strict=True))) for r in cur.fetchall()]
    except sqlite3.Error as exc:
        return Listing([], True, f"Could not read the mined tasks: {exc}.")
    finally:
        conn.close()
    return Listing(rows, True, "" if rows else (
        "No recurring task found yet. `skillopt-sleep mine` looks for prompts you repeat in the sessions "
        "`skillopt-sleep harvest` has read; it needs a few sessions that ask for the same kind of thing."))


@dataclass(frozen=True)
class Member:
    host: str
    session_id: str
    prompt_index: int | None
    at: str | None
    text: str


@dataclass(frozen=True)
class TaskDetail:
    task: MinedTask
    context: str
    judge: str  # the judge spec (rubric or rules) as indented JSON
    members: tuple[Member, ...]
    more_members: int = 0


MAX_MEMBERS = 200


def task_detail(task_id: str, index_path: Path | None = None) -> tuple[TaskDetail | None, str]:
    """One mined task with its judge and the prompts it was mined from; (None, why) when not found."""
    conn, _cols, note = _open("tasks", index_path, "This version's index has no `tasks` table.")
    if conn is None:
        return None, note
    try:
        cur = conn.execute("SELECT * FROM tasks WHERE id = ?", (task_id,))
        names = [d[0] for d in cur.description]
        row = cur.fetchone()
        if row is None:
            return None, f"No mined task {task_id!r} in the index (it may have been merged or re-mined)."
        d = dict(zip(names, row, strict=True))
        raw_judge = d.get("judge")
        judge = _json(raw_judge.decode("utf-8", "replace") if isinstance(raw_judge, bytes) else raw_judge)
        judge_text = outbound(json.dumps(judge, ensure_ascii=False, indent=1)) if judge is not None else (
            _text(d.get("judge")) or "")
        members: list[Member] = []
        more = 0
        if _columns(conn, "task_members"):
            has_prompts = bool(_columns(conn, "mine_prompts"))
            has_sessions = bool(_columns(conn, "sessions"))
            sql = ("SELECT m.host, m.session_id, m.prompt_index, "
                   + ("p.at, p.text " if has_prompts else "NULL, NULL ")
                   + (", s.started_at " if has_sessions else ", NULL ")
                   + "FROM task_members m "
                   + ("LEFT JOIN mine_prompts p ON p.host = m.host AND p.session_id = m.session_id "
                      "AND p.prompt_index = m.prompt_index " if has_prompts else "")
                   + ("LEFT JOIN sessions s ON s.host = m.host AND s.session_id = m.session_id "
                      if has_sessions else "")
                   + "WHERE m.task_id = ? ORDER BY 4 DESC, 6 DESC")
            for host, sid, idx, at, text, started in conn.execute(sql, (task_id,)).fetchall():
                if len(members) >= MAX_MEMBERS:
                    more += 1
                    continue
                members.append(Member(_text(host) or "", _text(sid) or "", _num(idx, int), _text(at or started),
                                      _text(text) or ""))
    except sqlite3.Error as exc:
        return None, f"Could not read the task: {exc}."
    finally:
        conn.close()
    return TaskDetail(_task(d), _text(d.get("context")) or "", judge_text, tuple(members), more), ""
