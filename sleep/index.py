"""The SkillOpt-Sleep index: one SQLite database per user (WAL mode).

It holds harvested sessions, per-file cursors and typed-prompt history; later
issues add mined tasks, cycles and proposals through new migrations. It is the
only state: there is no second state file.

Migrations are versioned with ``PRAGMA user_version``. To extend the schema,
append a :class:`Migration` with the next version to :data:`MIGRATIONS` (never
edit a released one); :meth:`Index.open` applies what a database lacks, each in
its own transaction. The version number is not trusted on its own: the tables,
columns and indexes every migration up to it creates are checked (derived from
the migration list, :mod:`sleep.index_schema`) and a gap is repaired; an index
newer than this build is refused. Errors opening the index (unwritable folder,
damaged file, full disk) are :class:`~sleep.storage.StorageError` with a line
that says what to do.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import orjson

from skillopt_core.timestamps import utc_now
from sleep import index_schema, paths
from sleep.offsets import FileCursor
from sleep.paths import is_under
from sleep.sessions import HistoryPrompt, Session
from sleep.storage import StorageError, explain_os, explain_sqlite


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    sql: str


MIGRATIONS: list[Migration] = [
    Migration(1, "sessions, file cursors, typed-prompt history, harvest runs", """
        CREATE TABLE sessions (
            host TEXT NOT NULL,
            session_id TEXT NOT NULL,
            project_dir TEXT,
            started_at TEXT,
            ended_at TEXT,
            n_prompts INTEGER NOT NULL DEFAULT 0,
            is_subagent INTEGER NOT NULL DEFAULT 0,
            parent_session_id TEXT,
            source_path TEXT,
            data BLOB NOT NULL,
            harvested_at TEXT NOT NULL,
            PRIMARY KEY (host, session_id)
        );
        CREATE INDEX sessions_by_project ON sessions (project_dir, started_at);
        CREATE INDEX sessions_by_time ON sessions (started_at);

        CREATE TABLE file_cursors (
            path TEXT PRIMARY KEY,
            host TEXT NOT NULL,
            kind TEXT NOT NULL,
            device INTEGER,
            inode INTEGER,
            size INTEGER,
            mtime_ns INTEGER,
            offset INTEGER NOT NULL DEFAULT 0,
            head TEXT,
            status TEXT NOT NULL DEFAULT 'ok',
            session_key TEXT,
            project_dir TEXT,
            updated_at TEXT NOT NULL
        );

        CREATE TABLE history_prompts (
            id INTEGER PRIMARY KEY,
            host TEXT NOT NULL,
            source_path TEXT NOT NULL,
            at TEXT,
            project_dir TEXT,
            session_id TEXT,
            text TEXT NOT NULL
        );
        CREATE INDEX history_by_source ON history_prompts (source_path);

        CREATE TABLE harvest_runs (
            id INTEGER PRIMARY KEY,
            started_at TEXT NOT NULL,
            finished_at TEXT NOT NULL,
            report BLOB NOT NULL
        );
    """),
    Migration(2, "sessions: entrypoint and scripted flag (interactive vs the person's automation)", """
        ALTER TABLE sessions ADD COLUMN entrypoint TEXT;
        ALTER TABLE sessions ADD COLUMN scripted INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX sessions_for_mining ON sessions (project_dir, is_subagent, scripted, started_at);
    """),
    Migration(3, "mined recurring tasks, their member prompts, the miner's prompt pool and model cache", """
        CREATE TABLE tasks (
            id TEXT PRIMARY KEY,
            project TEXT NOT NULL,
            intent TEXT NOT NULL,
            prompt TEXT NOT NULL,
            context TEXT NOT NULL DEFAULT '',
            judge BLOB NOT NULL,
            judge_summary TEXT NOT NULL DEFAULT '',
            support INTEGER NOT NULL,
            hosts TEXT NOT NULL,
            first_seen TEXT,
            last_seen TEXT,
            enabled INTEGER NOT NULL DEFAULT 1,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX tasks_by_project ON tasks (project, enabled);
        CREATE TABLE task_members (
            task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
            host TEXT NOT NULL,
            session_id TEXT NOT NULL,
            prompt_index INTEGER NOT NULL,
            PRIMARY KEY (host, session_id, prompt_index)
        );
        CREATE INDEX task_members_by_task ON task_members (task_id);
        CREATE TABLE mine_prompts (
            host TEXT NOT NULL,
            session_id TEXT NOT NULL,
            prompt_index INTEGER NOT NULL,
            project TEXT NOT NULL,
            at TEXT,
            text TEXT NOT NULL,
            data BLOB NOT NULL,
            PRIMARY KEY (host, session_id, prompt_index)
        );
        CREATE INDEX mine_prompts_by_project ON mine_prompts (project);
        CREATE TABLE mine_sessions (
            host TEXT NOT NULL,
            session_id TEXT NOT NULL,
            project TEXT,
            harvested_at TEXT NOT NULL,
            PRIMARY KEY (host, session_id)
        );
        CREATE TABLE mine_runs (
            id INTEGER PRIMARY KEY,
            started_at TEXT NOT NULL,
            finished_at TEXT NOT NULL,
            report BLOB NOT NULL
        );
        CREATE TABLE mine_model_cache (
            key TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            value BLOB NOT NULL,
            created_at TEXT NOT NULL
        );
    """),
    Migration(4, "proposals: staged skill improvements (branch, commit, report, decision)", """
        CREATE TABLE proposals (
            id TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            night TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending',
            store TEXT NOT NULL,
            project_dir TEXT,
            repo_dir TEXT NOT NULL,
            skill_path TEXT NOT NULL,
            tree_path TEXT NOT NULL,
            skill_name TEXT NOT NULL,
            branch TEXT NOT NULL,
            commit_sha TEXT NOT NULL,
            parent_sha TEXT NOT NULL,
            trained_from_sha256 TEXT,
            trained_from_text TEXT,
            candidate_sha256 TEXT NOT NULL,
            baseline_val REAL,
            candidate_val REAL,
            n_edits INTEGER NOT NULL DEFAULT 0,
            cycle_id TEXT,
            report BLOB NOT NULL,
            decided_at TEXT,
            decided_by TEXT,
            reason TEXT,
            adopted_commit TEXT,
            branch_deleted INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX proposals_by_state ON proposals (state, created_at);
        CREATE INDEX proposals_by_skill ON proposals (skill_path, created_at);
    """),
    Migration(5, "cycles: one record per night (stage reached, outcome, tasks, scores, usage, run, proposal)", """
        CREATE TABLE cycles (
            id TEXT PRIMARY KEY,
            project TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            stage TEXT NOT NULL,
            outcome TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            dry_run INTEGER NOT NULL DEFAULT 0,
            skill_path TEXT,
            n_train INTEGER,
            n_val INTEGER,
            baseline_val REAL,
            candidate_val REAL,
            usage TEXT,
            run_dir TEXT,
            proposal_id TEXT,
            fingerprint TEXT,
            pid INTEGER,
            report BLOB
        );
        CREATE INDEX cycles_by_project ON cycles (project, started_at);
    """),
    Migration(6, "schedules (nightly runs per project), the watcher's noted files and its watch epochs", """
        CREATE TABLE schedules (
            project TEXT PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            at TEXT NOT NULL,
            mode TEXT NOT NULL,
            jitter_s INTEGER NOT NULL DEFAULT 0,
            argv TEXT NOT NULL,
            env TEXT NOT NULL,
            installed TEXT NOT NULL DEFAULT '{}',
            last_fired_at TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE noted_files (
            path TEXT PRIMARY KEY,
            host TEXT NOT NULL,
            noted_at TEXT NOT NULL,
            version INTEGER NOT NULL DEFAULT 1,
            source TEXT NOT NULL
        );
        CREATE TABLE watch_epochs (
            id INTEGER PRIMARY KEY,
            pid INTEGER NOT NULL,
            hostname TEXT NOT NULL,
            started_at TEXT NOT NULL,
            heartbeat_at TEXT NOT NULL,
            heartbeat_s REAL NOT NULL,
            stopped_at TEXT,
            roots TEXT NOT NULL DEFAULT '[]',
            anchors TEXT NOT NULL DEFAULT '{}'
        );
    """),
    # Written to be applied twice without harm (IF NOT EXISTS): other branches add
    # migrations after it, and an index may meet it again after a repair.
    Migration(7, "keyed hashes of the secret values harvests redacted (sleep.redact.known; never the values)", """
        CREATE TABLE IF NOT EXISTS secret_hashes (
            digest TEXT PRIMARY KEY,
            anchor TEXT NOT NULL,
            length INTEGER NOT NULL,
            key_id TEXT NOT NULL,
            first_seen TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS secret_hashes_by_anchor ON secret_hashes (key_id, anchor);
    """),
    Migration(8, "index identity (stamped on every proposal commit) and the journal of unfinished operations", """
        CREATE TABLE index_meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        CREATE TABLE operations (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            proposal_id TEXT NOT NULL,
            repo_dir TEXT NOT NULL,
            lock_path TEXT NOT NULL,
            step TEXT NOT NULL DEFAULT 'begun',
            started_at TEXT NOT NULL,
            pid INTEGER,
            data BLOB NOT NULL,
            saved BLOB
        );
    """),
]


def within_sql(column: str, folder: str) -> tuple[str, list[object]]:
    """A condition on the path ``column``: ``folder`` itself or a path below it (no LIKE: a
    path may hold % or _), and its arguments."""
    below = folder.rstrip(os.sep) + os.sep
    return f"({column} = ? OR substr({column}, 1, ?) = ?)", [folder, len(below), below]


def session_key(host: str, session_id: str) -> str:
    return f"{host}\x1f{session_id}"


def _to_wal(conn: sqlite3.Connection, wait_s: float = 30.0) -> None:
    """Switch to WAL. While another process creates the index, SQLite refuses the switch at once
    (``database is locked``, its busy timeout unused): wait for it as long as the busy timeout."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class Index:
    """A connection to the index. Use :meth:`open` (applies migrations)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.repaired: list[str] = []  # gaps :meth:`migrate` filled, described
        self._identity: str | None = None

    @classmethod
    def open(cls, path: Path | None = None) -> Index:
        """Open (creating if needed) and bring up to date; raises :class:`StorageError`
        with a one-line explanation when the file or its folder cannot be used."""
        path = Path(path) if path else paths.index_path()
        try:
            _private_files(path)  # creates the folder 0700 when missing
        except OSError as exc:
            raise StorageError(explain_os(exc, str(path.parent)), path) from None
        conn: sqlite3.Connection | None = None
        try:
            conn = sqlite3.connect(str(path), timeout=30.0, isolation_level=None)
            index = cls(conn, path)
            index.refuse_newer(MIGRATIONS)  # before anything writes (WAL mode rewrites the header)
            _to_wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            index.migrate()
            return index
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            raise StorageError(explain_sqlite(exc, path), path) from None
        except BaseException:
            if conn is not None:
                conn.close()
            raise

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- schema ----------------------------------------------------------------------

    @property
    def schema_version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def migrate(self, migrations: list[Migration] | None = None) -> list[int]:
        """Check the schema, repair gaps, apply missing migrations in order; returns the
        versions applied. Refuses (:class:`StorageError`) an index newer than ``migrations``."""
        migrations = sorted(migrations or MIGRATIONS, key=lambda m: m.version)
        self.refuse_newer(migrations)
        self._repair(migrations)
        applied = []
        for m in migrations:
            if m.version <= self.schema_version:
                continue
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                if m.version <= self.schema_version:  # another process got here first
                    self.conn.execute("ROLLBACK")
                    continue
                for statement in _statements(m.sql):
                    self.conn.execute(statement)
                self.conn.execute(f"PRAGMA user_version = {int(m.version)}")
                self.conn.execute("COMMIT")
            except BaseException:
                self.rollback()
                raise
            applied.append(m.version)
        return applied

    def refuse_newer(self, migrations: list[Migration]) -> None:
        """Raise :class:`StorageError` when a newer SkillOpt wrote this index (its schema is unknown)."""
        newest = max(m.version for m in migrations)
        if self.schema_version > newest:
            raise StorageError(
                f"the index {self.path} has schema version {self.schema_version}, newer than this SkillOpt knows "
                f"({newest}): a newer SkillOpt wrote it. Nothing was changed. Upgrade SkillOpt "
                "(`pip install -U skillopt`), or set SKILLOPT_HOME to another folder to use this version.",
                self.path)

    def _repair(self, migrations: list[Migration]) -> None:
        """Add what the migrations up to this index's version created and the index lacks."""
        added = index_schema.added_by(migrations, _statements)
        if not index_schema.gaps(self.conn, added, self.schema_version):
            return
        with self.transaction():  # re-check under the write lock: another process may have repaired it
            found = index_schema.gaps(self.conn, added, self.schema_version)
            try:
                index_schema.repair(self.conn, found)
            except sqlite3.OperationalError as exc:
                raise StorageError(
                    f"the index {self.path} lacks part of {', '.join(g.describe() for g in found)} and it cannot "
                    f"be added ({exc}); nothing was changed. Move the index aside (`mv {self.path} "
                    f"{self.path}.old`) and run `skillopt-sleep harvest` to start a new one.", self.path) from None
        self.repaired += [g.describe() for g in found]

    @property
    def identity(self) -> str:
        """This index's random id (made on first use), stamped on the proposals it stages
        so that another index never mistakes them for its own."""
        if self._identity is None:
            row = self.conn.execute("SELECT value FROM index_meta WHERE key = 'index_id'").fetchone()
            if row is None:
                with self.transaction():
                    self.conn.execute("INSERT OR IGNORE INTO index_meta (key, value) VALUES ('index_id', ?)",
                                      (secrets.token_hex(8),))
                row = self.conn.execute("SELECT value FROM index_meta WHERE key = 'index_id'").fetchone()
            self._identity = str(row[0])
        return self._identity

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.conn.execute("COMMIT")
        except BaseException:
            self.rollback()
            raise

    def rollback(self) -> None:
        """Roll back the open transaction, if SQLite has not already (it does on a full disk:
        a second ROLLBACK would hide SQLITE_FULL behind "no transaction is active")."""
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    # ----- cursors ---------------------------------------------------------------------

    def cursors(self, hosts: tuple[str, ...] | None = None) -> dict[str, FileCursor]:
        rows = self.conn.execute(
            "SELECT path, host, kind, device, inode, size, mtime_ns, offset, head, status,"
            " session_key, project_dir FROM file_cursors").fetchall()
        out = {}
        for row in rows:
            c = FileCursor(*row)
            if hosts is None or c.host in hosts:
                out[c.path] = c
        return out

    def put_cursor(self, c: FileCursor) -> None:
        self.conn.execute(
            "INSERT INTO file_cursors (path, host, kind, device, inode, size, mtime_ns, offset, head,"
            " status, session_key, project_dir, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT(path) DO UPDATE SET host=excluded.host, kind=excluded.kind,"
            " device=excluded.device, inode=excluded.inode, size=excluded.size,"
            " mtime_ns=excluded.mtime_ns, offset=excluded.offset, head=excluded.head,"
            " status=excluded.status, session_key=excluded.session_key,"
            " project_dir=excluded.project_dir, updated_at=excluded.updated_at",
            (c.path, c.host, c.kind, c.device, c.inode, c.size, c.mtime_ns, c.offset, c.head,
             c.status, c.session_key, c.project_dir, utc_now()))

    def delete_cursor(self, path: str) -> None:
        self.conn.execute("DELETE FROM file_cursors WHERE path = ?", (path,))

    # ----- sessions --------------------------------------------------------------------

    def get_session(self, host: str, session_id: str) -> Session | None:
        row = self.conn.execute("SELECT data FROM sessions WHERE host = ? AND session_id = ?",
                                (host, session_id)).fetchone()
        return Session.from_dict(orjson.loads(row[0])) if row else None

    def get_session_by_key(self, key: str) -> Session | None:
        host, _, sid = key.partition("\x1f")
        return self.get_session(host, sid)

    def put_session(self, s: Session) -> bool:
        """Insert or replace a session; True if it was new."""
        exists = self.conn.execute("SELECT 1 FROM sessions WHERE host = ? AND session_id = ?",
                                   (s.host, s.session_id)).fetchone() is not None
        self.conn.execute(
            "INSERT OR REPLACE INTO sessions (host, session_id, project_dir, started_at, ended_at,"
            " n_prompts, is_subagent, parent_session_id, source_path, data, harvested_at,"
            " entrypoint, scripted) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (s.host, s.session_id, s.project_dir, s.started_at, s.ended_at, len(s.prompts),
             int(s.is_subagent), s.parent_session_id, s.source_path, orjson.dumps(s.to_dict()), utc_now(),
             s.entrypoint, int(s.scripted)))
        return not exists

    def delete_session(self, host: str, session_id: str) -> None:
        self.conn.execute("DELETE FROM sessions WHERE host = ? AND session_id = ?", (host, session_id))

    def sessions(self, project: str | None = None, host: str | None = None,
                 include_subagents: bool = True) -> list[Session]:
        """Stored sessions, newest first; ``project`` keeps that directory and below: a
        session started elsewhere whose working directory moved into it is kept with
        only the turns typed there (:meth:`Session.for_project`)."""
        sql = "SELECT data, project_dir FROM sessions WHERE 1=1"
        args: list[object] = []
        if host:
            sql += " AND host = ?"
            args.append(host)
        if not include_subagents:
            sql += " AND is_subagent = 0"
        sql += " ORDER BY started_at DESC"
        out = []
        for data, project_dir in self.conn.execute(sql, args):
            if project and not is_under(project_dir, project):
                if b'"project":' not in data:
                    continue  # no turn was typed in another directory
                moved = Session.from_dict(orjson.loads(data)).for_project(project, is_under)
                if moved is not None:
                    out.append(moved)
                continue
            out.append(Session.from_dict(orjson.loads(data)))
        return out

    def session_count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])

    # ----- typed-prompt history ---------------------------------------------------------

    def replace_history(self, source_path: str, items: list[HistoryPrompt], *, append: bool) -> None:
        if not append:
            self.conn.execute("DELETE FROM history_prompts WHERE source_path = ?", (source_path,))
        self.conn.executemany(
            "INSERT INTO history_prompts (host, source_path, at, project_dir, session_id, text)"
            " VALUES (?,?,?,?,?,?)",
            [(h.host, source_path, h.at, h.project_dir, h.session_id, h.text) for h in items])

    def history(self, host: str | None = None) -> list[HistoryPrompt]:
        sql = "SELECT host, text, at, project_dir, session_id FROM history_prompts"
        rows = self.conn.execute(sql + (" WHERE host = ?" if host else "") + " ORDER BY at",
                                 (host,) if host else ()).fetchall()
        return [HistoryPrompt(*r) for r in rows]

    # ----- runs ------------------------------------------------------------------------

    def record_run(self, started_at: str, report: dict) -> None:
        self.conn.execute("INSERT INTO harvest_runs (started_at, finished_at, report) VALUES (?,?,?)",
                          (started_at, utc_now(), orjson.dumps(report)))


def _private_files(path: Path) -> None:
    """Create the index 0600 (SQLite gives its -wal and -shm files the database file's
    mode) in a 0700 folder, and tighten an index, WAL, shm and key file found looser.
    The folder is tightened when it is the data directory or is created here, never a
    folder of the person's that merely holds an index passed by path."""
    parent = path.parent
    if not parent.exists() or parent.resolve() == paths.data_dir().resolve():
        paths.private_dir(parent)
    if not path.exists():
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, paths.PRIVATE_FILE_MODE))
        except FileExistsError:
            pass
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), parent / paths.SECRET_KEY_FILE):
        paths.make_private(p)


def _statements(sql: str) -> list[str]:
    return [s.strip() for s in sql.split(";") if s.strip()]
