"""A host's SQLite store of ``sessions`` and ``messages`` (Goose's ``sessions.db``, Hermes's
``state.db``): listing its sessions and reading one, read-only (:mod:`sleep.harvest.sources.sqlite_ro`),
a store that cannot be read counted (``unreadable_sqlite``), never raised."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from sleep.harvest.reader import ParseStats
from sleep.harvest.sources import SourceFile
from sleep.harvest.sources.sqlite_ro import columns, connect_read_only, tables


def list_sessions(db: Path, sql: str, stats: ParseStats) -> list[tuple[Any, ...]]:
    """The rows of the listing ``sql``; [] when the store is absent or has no ``sessions`` and
    ``messages`` tables (yet), or cannot be read (counted)."""
    if not db.is_file():
        return []
    try:
        with closing(connect_read_only(str(db))) as conn:
            if not {"sessions", "messages"} <= tables(conn):
                return []
            return conn.execute(sql).fetchall()
    except sqlite3.Error:
        stats.skip_file("unreadable_sqlite", str(db))
        return []


def read_session(file: SourceFile, head: Sequence[str], messages: Callable[[sqlite3.Connection], str],
                 stats: ParseStats) -> tuple[dict[str, Any], list[tuple[Any, ...]]] | str:
    """The session row of the row file ``file`` (those of the columns ``head`` its store has, by
    name) and its messages (the query ``messages(conn)`` with the session id for its ``?``), or
    why the file is skipped: ``session_gone``, or ``unreadable_sqlite`` (counted)."""
    sid = file.session_id or ""
    try:
        with closing(connect_read_only(file.container or "")) as conn:
            have = set(columns(conn, "sessions"))
            want = [c for c in head if c in have]
            row = conn.execute(f"SELECT {', '.join(want)} FROM sessions WHERE id = ?", (sid,)).fetchone()
            if row is None:
                return "session_gone"
            rows = conn.execute(messages(conn), (sid,)).fetchall()
    except sqlite3.Error:
        stats.skip_file("unreadable_sqlite", file.path)
        return "unreadable_sqlite"
    return dict(zip(want, row, strict=True)), rows
