"""Reading and writing the miner's tables (index migration 3).

``tasks`` and ``task_members`` hold the recurring tasks; ``mine_prompts`` is the
pool of every task candidate seen so far (members and one-offs that may recur
later), ``mine_sessions`` remembers which state of each session was mined,
``mine_runs`` keeps each run's report and ``mine_model_cache`` the optimizer's
answers. All text here came from the (already redacted) index.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from sleep.mine.select import PoolItem, scope_clause


@dataclass
class TaskRecord:
    """One mined task as stored (``judge`` is the spec, ``members`` the (host, session, prompt) keys)."""

    id: str
    project: str
    intent: str
    prompt: str
    context: str
    judge: Any
    judge_summary: str
    support: int
    hosts: list[str]
    first_seen: str | None
    last_seen: str | None
    enabled: bool = True
    created_at: str = ""
    updated_at: str = ""
    members: list[tuple[str, str, int]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "project": self.project, "intent": self.intent, "prompt": self.prompt,
            "context": self.context, "support": self.support, "hosts": self.hosts,
            "first_seen": self.first_seen, "last_seen": self.last_seen, "enabled": self.enabled,
            "judge": self.judge, "judge_summary": self.judge_summary,
            "created_at": self.created_at, "updated_at": self.updated_at,
            "source_sessions": [{"host": h, "session_id": s, "prompt_index": i} for h, s, i in self.members],
        }


_TASK_COLUMNS = ("id, project, intent, prompt, context, judge, judge_summary, support, hosts, first_seen,"
                 " last_seen, enabled, created_at, updated_at")


def _task(row: tuple[Any, ...]) -> TaskRecord:
    (tid, project, intent, prompt, context, judge, jsum, support, hosts, first, last, enabled,
     created, updated) = row
    return TaskRecord(tid, project, intent, prompt, context, orjson.loads(judge), jsum, support,
                      orjson.loads(hosts), first, last, bool(enabled), created, updated)


def load_tasks(conn: sqlite3.Connection, project: str | None, *, exact: bool = False,
               enabled_only: bool = False, with_members: bool = True) -> list[TaskRecord]:
    """Tasks of ``project`` (and below it, unless ``exact``; every project if None)."""
    if project is not None and exact:
        where, args = "project = ?", [project]
    else:
        where, args = scope_clause(project, "project")
    if enabled_only:
        where += " AND enabled = 1"
    tasks = [_task(r) for r in conn.execute(
        f"SELECT {_TASK_COLUMNS} FROM tasks WHERE {where} ORDER BY project, support DESC, id", args)]
    if with_members and tasks:
        by_id = {t.id: t for t in tasks}
        for tid, host, sid, idx in conn.execute(
                "SELECT task_id, host, session_id, prompt_index FROM task_members"
                f" WHERE task_id IN (SELECT id FROM tasks WHERE {where})"
                " ORDER BY task_id, host, session_id, prompt_index", args):
            by_id[tid].members.append((host, sid, idx))
    return tasks


def get_task(conn: sqlite3.Connection, task_id: str) -> TaskRecord | None:
    row = conn.execute(f"SELECT {_TASK_COLUMNS} FROM tasks WHERE id = ?", (task_id,)).fetchone()
    return _task(row) if row else None


def find_task_ids(conn: sqlite3.Connection, prefix: str) -> list[str]:
    """Ids of the tasks whose id is ``prefix`` or starts with it (an exact id alone if it exists)."""
    prefix = prefix.strip()
    if not prefix:
        return []
    if conn.execute("SELECT 1 FROM tasks WHERE id = ?", (prefix,)).fetchone():
        return [prefix]
    like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    return [r[0] for r in conn.execute("SELECT id FROM tasks WHERE id LIKE ? ESCAPE '\\' ORDER BY id", (like,))]


def set_enabled(conn: sqlite3.Connection, task_id: str, enabled: bool) -> bool:
    """Enable or disable a task; False if no task has that id."""
    cur = conn.execute("UPDATE tasks SET enabled = ? WHERE id = ?", (int(enabled), task_id))
    return cur.rowcount > 0


def load_pool(conn: sqlite3.Connection, project: str) -> list[PoolItem]:
    """Every task candidate of one project, with the task each one belongs to."""
    members = {(h, s, i): t for t, h, s, i in conn.execute(
        "SELECT m.task_id, m.host, m.session_id, m.prompt_index FROM task_members m"
        " JOIN tasks t ON t.id = m.task_id WHERE t.project = ?", (project,))}
    out = []
    for host, sid, idx, at, text, data in conn.execute(
            "SELECT host, session_id, prompt_index, at, text, data FROM mine_prompts WHERE project = ?",
            (project,)):
        d = orjson.loads(data)
        out.append(PoolItem(project, host, sid, idx, at, text, d.get("shell", []), d.get("files", []),
                            d.get("tools", []), d.get("skills", []), d.get("evidence", {}),
                            members.get((host, sid, idx))))
    return out


def replace_session_prompts(conn: sqlite3.Connection, host: str, session_id: str, project: str | None,
                            harvested_at: str, items: Iterable[PoolItem]) -> None:
    """Store the current task candidates of one session and mark that state as mined.
    A prompt that stopped being a candidate also leaves its task."""
    items = list(items)
    keep = {it.prompt_index for it in items}
    gone = [i for (i,) in conn.execute(
        "SELECT prompt_index FROM mine_prompts WHERE host = ? AND session_id = ?", (host, session_id))
        if i not in keep]
    for i in gone:
        conn.execute("DELETE FROM task_members WHERE host = ? AND session_id = ? AND prompt_index = ?",
                     (host, session_id, i))
    conn.execute("DELETE FROM mine_prompts WHERE host = ? AND session_id = ?", (host, session_id))
    conn.executemany(
        "INSERT INTO mine_prompts (host, session_id, prompt_index, project, at, text, data)"
        " VALUES (?,?,?,?,?,?,?)",
        [(it.host, it.session_id, it.prompt_index, it.project, it.at, it.text, orjson.dumps(it.data()))
         for it in items])
    conn.execute("INSERT OR REPLACE INTO mine_sessions (host, session_id, project, harvested_at)"
                 " VALUES (?,?,?,?)", (host, session_id, project, harvested_at))


def save_task(conn: sqlite3.Connection, t: TaskRecord, now: str) -> None:
    """Insert or update a task (its ``enabled`` flag and creation time are kept) and add its members."""
    conn.execute(
        f"INSERT INTO tasks ({_TASK_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT(id) DO UPDATE SET intent=excluded.intent, prompt=excluded.prompt,"
        " context=excluded.context, judge=excluded.judge, judge_summary=excluded.judge_summary,"
        " support=excluded.support, hosts=excluded.hosts, first_seen=excluded.first_seen,"
        " last_seen=excluded.last_seen, updated_at=excluded.updated_at",
        (t.id, t.project, t.intent, t.prompt, t.context, orjson.dumps(t.judge), t.judge_summary, t.support,
         orjson.dumps(t.hosts), t.first_seen, t.last_seen, int(t.enabled), now, now))
    conn.executemany(
        "INSERT OR REPLACE INTO task_members (task_id, host, session_id, prompt_index) VALUES (?,?,?,?)",
        [(t.id, h, s, i) for h, s, i in t.members])


def record_run(conn: sqlite3.Connection, started_at: str, finished_at: str, report: dict[str, Any]) -> None:
    conn.execute("INSERT INTO mine_runs (started_at, finished_at, report) VALUES (?,?,?)",
                 (started_at, finished_at, orjson.dumps(report)))


def cache_get(conn: sqlite3.Connection, key: str) -> Any | None:
    row = conn.execute("SELECT value FROM mine_model_cache WHERE key = ?", (key,)).fetchone()
    return orjson.loads(row[0]) if row else None


def cache_put(conn: sqlite3.Connection, key: str, kind: str, value: Any, now: str) -> None:
    conn.execute("INSERT OR REPLACE INTO mine_model_cache (key, kind, value, created_at) VALUES (?,?,?,?)",
                 (key, kind, orjson.dumps(value), now))
