"""OpenCode's SQLite store: ``opencode.db`` in its data folder (``$XDG_DATA_HOME/opencode``,
default ``~/.local/share/opencode``), which newer versions write instead of the JSON
``storage/`` folder (sleep.harvest.sources.opencode reads both through one source).

The schema, from the drizzle tables of the OpenCode repository (anomalyco/opencode, formerly
sst/opencode: packages/opencode/src/session/session.sql.ts, project/project.sql.ts,
storage/schema.sql.ts; its ``migration/<timestamp>_<name>/migration.sql`` files create them):

- ``project(id, worktree, vcs, name, ..., time_created, time_updated)``;
- ``session(id, project_id, workspace_id, parent_id, slug, directory, title, version, ...,
  time_created, time_updated, time_archived)``;
- ``message(id, session_id, time_created, time_updated, data)`` where ``data`` is the
  message record as JSON without ``id`` and ``sessionID`` (``role``, ``time``, ``modelID``...);
- ``part(id, message_id, session_id, time_created, time_updated, data)``, ``data`` the part
  record without ``id``, ``sessionID`` and ``messageID`` (``type``, ``text``, ``tool``, ``state``...).

Newer versions (1.18: the binary's embedded migrations and ``Session.Message`` schemas)
add ``session_message(id, session_id, type, seq, time_created, time_updated, data)``: one
row per ``user`` (``{text, files?, agents?}``), ``assistant`` (``{agent, model: {id,
providerID, variant?}, content: [{type: text|reasoning|tool, ...}]}``, a tool ``{name,
state: {status, input, ...}}``), ``shell`` (``{callID, command, output}``: a command the
person ran), ``model-switched``/``agent-switched``, ``synthetic``, ``system`` and
``compaction`` record, in ``seq`` order; when a session has such rows they are its
messages. ``session_input(id, session_id, prompt, delivery, admitted_seq?, promoted_seq,
...)`` queues what the person typed (``prompt`` ``{text, files?}``); a promoted input is
already a ``user`` row, so only the inputs not yet promoted are added as prompts.
``event``/``event_sequence`` repeat the same records as events and are not read;
``credential`` and ``account`` hold tokens and are never read.

Times are ms epochs. Release channels ``latest`` and ``beta`` write ``opencode.db``; other
channels ``opencode-<channel>.db`` (storage/db.ts ``getChannelPath``); both are read.
Each session is a row file ``<db>#<session id>`` whose version is the latest
``time_updated`` of the session and its messages and the number of its messages and parts,
so an unchanged session is not read again. The records go through the same mapping as the
JSON storage's (sleep.harvest.sources.opencode_map). The database is opened read-only
(sleep.harvest.sources.sqlite_ro): a running OpenCode is never blocked and nothing is written.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sleep.harvest.reader import ParseContext, ParseStats
from sleep.harvest.sources import ParseResult, SourceFile, as_dict, scan_dir
from sleep.harvest.sources.opencode_map import HOST, Message, build_session, session_dir
from sleep.harvest.sources.sqlite_ro import as_bytes, columns, connect_read_only, row_path, tables

KIND = "db-session"
DB_RX = re.compile(r"^opencode(?:-[A-Za-z0-9._-]+)?\.db$")
MAX_DATA_BYTES = 16 << 20
_SESSION_COLS = ("id", "project_id", "parent_id", "directory", "time_created", "time_updated")


def databases(home: Path, stats: ParseStats) -> list[str]:
    """The OpenCode databases in the data folder ``home`` (``opencode.db`` first)."""
    names = [e.name for e in scan_dir(home, stats) if DB_RX.match(e.name) and e.is_file()]
    return [str(home / n) for n in sorted(names, key=lambda n: (n != "opencode.db", n))]


def _session_select(conn: sqlite3.Connection) -> list[str]:
    have = set(columns(conn, "session"))
    return [c for c in _SESSION_COLS if c in have]


def discover(home: Path, stats: ParseStats) -> Iterator[SourceFile]:
    seen: set[str] = set()
    for db in databases(home, stats):
        for file in _list(db, stats):
            if file.session_id not in seen:  # the same session in two channels' databases: the first
                seen.add(file.session_id or "")
                yield file


def _list(db: str, stats: ParseStats) -> list[SourceFile]:
    try:
        conn = connect_read_only(db)
        try:
            names = tables(conn)
            if "session" not in names:
                return []  # not (yet) migrated: no session table
            cols = _session_select(conn)
            if "id" not in cols:
                return []
            worktrees = dict(conn.execute("SELECT id, worktree FROM project").fetchall()) \
                if "project" in names and {"id", "worktree"} <= set(columns(conn, "project")) else {}
            upd = "s.time_updated" if "time_updated" in cols else "0"
            msg = ("(SELECT max(m.time_updated) FROM message m WHERE m.session_id = s.id), "
                   "(SELECT count(*) FROM message m WHERE m.session_id = s.id)") if "message" in names else "0, 0"
            parts = "(SELECT count(*) FROM part p WHERE p.session_id = s.id)" if "part" in names else "0"
            for extra in ("session_message", "session_input"):  # newer stores: their rows change it too
                if extra in names:
                    parts += f" + (SELECT count(*) FROM {extra} x WHERE x.session_id = s.id)"
            sql = (f"SELECT {', '.join('s.' + c for c in cols)}, {upd}, {msg}, {parts} FROM session s ORDER BY s.id")
            rows = conn.execute(sql).fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        stats.skip_file("unreadable_sqlite", db)
        return []
    out = []
    for row in rows:
        rec = dict(zip(cols, row[:len(cols)], strict=True))
        sid = rec.get("id")
        if not isinstance(sid, str) or not sid:
            continue
        updated, msg_updated, n_msg, n_part = row[len(cols):]
        ms = max(int(updated or 0), int(msg_updated or 0))
        doc = _session_doc(rec)
        project = session_dir(doc, lambda pid: worktrees.get(pid) if isinstance(worktrees.get(pid), str) else None)
        out.append(SourceFile(row_path(db, sid), HOST, KIND, incremental=False, session_id=sid,
                              project_dir=project, container=db,
                              version=(1 + int(n_msg or 0) + int(n_part or 0), ms * 10**6)))
    return out


def _session_doc(rec: dict[str, Any]) -> dict[str, Any]:
    """A session row in the shape of the JSON storage's session record."""
    return {"id": rec.get("id"), "projectID": rec.get("project_id"), "directory": rec.get("directory"),
            "parentID": rec.get("parent_id"),
            "time": {"created": rec.get("time_created"), "updated": rec.get("time_updated")}}


def _record(value: Any, rid: Any, where: str, ctx: ParseContext) -> dict[str, Any] | None:
    data = as_bytes(value)
    if data is None:
        ctx.stats.skip_line("missing_data", where)
        return None
    ctx.stats.bytes_read += len(data)
    if len(data) > MAX_DATA_BYTES:
        ctx.stats.skip_line("value_too_large", where)
        return None
    doc = ctx.loads(data, where)
    if doc is None:
        return None
    ctx.stats.kept()
    if isinstance(rid, str):
        doc["id"] = rid
    return doc


def _v2_messages(rows: list[tuple], where: str, ctx: ParseContext) -> list[Message]:
    """``session_message`` rows in the shape of the ``message``/``part`` records (module docstring)."""
    out: list[Message] = []
    for rid, kind, created, data in rows:
        rec = _record(data, rid, f"{where}/session_message/{rid}", ctx)
        if rec is None:
            continue
        time = rec.get("time") if isinstance(rec.get("time"), dict) else {"created": created}
        model = as_dict(rec.get("model"))
        if kind == "user" and isinstance(rec.get("text"), str):
            out.append(({"role": "user", "time": time}, [{"type": "text", "text": rec["text"]}]))
        elif kind == "shell":
            out.append(({"role": "shell", "time": time, "command": rec.get("command")}, []))
        elif kind in ("assistant", "model-switched"):
            msg: dict[str, Any] = {"role": "assistant", "time": time}
            if isinstance(model.get("id"), str):
                msg["modelID"] = model["id"]
            parts: list[dict[str, Any]] = []
            for c in rec.get("content") or [] if kind == "assistant" else []:
                if not isinstance(c, dict):
                    continue
                if c.get("type") == "text":
                    parts.append({"type": "text", "text": c.get("text")})
                elif c.get("type") == "tool":
                    parts.append({"type": "tool", "tool": c.get("name"), "state": c.get("state")})
            out.append((msg, parts))
    return out


def parse(file: SourceFile, ctx: ParseContext) -> ParseResult:
    db, sid = file.container or "", file.session_id or ""
    try:
        conn = connect_read_only(db)
        try:
            cols = _session_select(conn)
            row = conn.execute(f"SELECT {', '.join(cols)} FROM session WHERE id = ?", (sid,)).fetchone()
            if row is None:
                return ParseResult(None, file_skip_reason="session_gone")
            names = tables(conn)
            msgs = conn.execute("SELECT id, time_created, data FROM message WHERE session_id = ? "
                                "ORDER BY time_created, id", (sid,)).fetchall() if "message" in names else []
            part_rows = conn.execute("SELECT id, message_id, data FROM part WHERE session_id = ? "
                                     "ORDER BY message_id, id", (sid,)).fetchall() if "part" in names else []
            v2_rows = conn.execute("SELECT id, type, time_created, data FROM session_message WHERE session_id = ? "
                                   "ORDER BY seq, time_created, id", (sid,)).fetchall() \
                if "session_message" in names else []
            pending = conn.execute("SELECT id, time_created, prompt FROM session_input WHERE session_id = ? "
                                   "AND promoted_seq IS NULL ORDER BY time_created, id", (sid,)).fetchall() \
                if "session_input" in names and "promoted_seq" in columns(conn, "session_input") else []
        finally:
            conn.close()
    except sqlite3.Error:
        ctx.stats.skip_file("unreadable_sqlite", file.path)
        return ParseResult(None, file_skip_reason="unreadable_sqlite")
    parts: dict[str, list[dict[str, Any]]] = {}
    for pid, mid, data in part_rows:
        part = _record(data, pid, f"{file.path}/part/{pid}", ctx)
        if part is not None and isinstance(mid, str):
            parts.setdefault(mid, []).append(part)
    messages: list[Message] = []
    for mid, created, data in msgs:
        msg = _record(data, mid, f"{file.path}/message/{mid}", ctx)
        if msg is None:
            continue
        if not isinstance(msg.get("time"), dict):
            msg["time"] = {"created": created}
        messages.append((msg, parts.get(mid, []) if isinstance(mid, str) else []))
    if any(r[1] in ("user", "assistant", "shell") for r in v2_rows):
        messages = _v2_messages(v2_rows, file.path, ctx)
    for iid, created, data in pending:
        inp = _record(data, None, f"{file.path}/session_input/{iid}", ctx)
        if inp is not None and isinstance(inp.get("text"), str):
            messages.append(({"role": "user", "time": {"created": created}},
                             [{"type": "text", "text": inp["text"]}]))
    ctx.stats.kept()  # the session row
    return build_session(_session_doc(dict(zip(cols, row, strict=True))), sid, file.path, file.project_dir, messages,
                         ctx)
