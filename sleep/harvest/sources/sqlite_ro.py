"""Reading a host's SQLite store without ever writing it or blocking its writer.

Hosts keep transcripts in SQLite databases they hold open (Cursor's ``store.db`` and
``state.vscdb``, OpenCode's ``opencode.db``), mostly in WAL mode. A harvest opens them
through a read-only URI (``mode=ro``) with ``PRAGMA query_only`` and a short busy
timeout, reads with short statements and closes at once: a reader in WAL mode never
blocks the writer and never checkpoints. While the host runs it keeps ``-wal``/``-shm``
beside the database and the reader uses them; a WAL database whose host has closed it
(no ``-wal``/``-shm``) is opened ``immutable``, because even a read-only open would create
them. A ``-wal`` without its ``-shm`` (a host that died, a copied home) still holds rows
the main file lacks, and a read-only open would create the ``-shm`` beside the person's
database: the three files are then copied to a private temporary folder and the copy is
opened (it applies the WAL; the folder goes when the connection closes). A database whose writer holds
a lock in rollback-journal mode answers ``database is locked`` after the timeout; the
source counts the file as unreadable and the next harvest tries again.

One database holds many chats: a source lists them (:func:`rows_of`) and yields one
*row file* per chat, ``<database path>#<key>`` (:func:`row_path`), whose ``version``
is what the listing knows of the chat's last change (sleep.harvest.sources.SourceFile).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from typing import Any, Iterable
from urllib.parse import quote

ROW_SEP = "#"
BUSY_TIMEOUT_S = 0.5


def _closed_wal(path: str) -> bool:
    """True for a WAL-mode database no process has open: its header says WAL (bytes 18-19
    are 2) and neither ``-wal`` nor ``-shm`` exists. Opening it even read-only would create
    both beside it, so it is opened ``immutable`` instead (nothing can be pending)."""
    try:
        with open(path, "rb") as f:
            header = f.read(20)
    except OSError:
        return False
    return (len(header) == 20 and header[18] == 2 and header[19] == 2
            and not os.path.exists(path + "-wal") and not os.path.exists(path + "-shm"))


class _PrivateCopy(sqlite3.Connection):
    """A connection to a private copy of a database; closing it removes the copy."""
    folder: str | None = None

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self.folder:
                shutil.rmtree(self.folder, ignore_errors=True)
                self.folder = None


def _orphan_wal(path: str) -> bool:
    """A ``-wal`` with content but no ``-shm``: opening in place would write the ``-shm``."""
    try:
        return os.path.getsize(path + "-wal") > 0 and not os.path.exists(path + "-shm")
    except OSError:
        return False


def _open_copy(path: str) -> sqlite3.Connection:
    folder = tempfile.mkdtemp(prefix="skillopt-sqlite-")
    try:
        copy = os.path.join(folder, "db.sqlite")
        shutil.copyfile(path, copy)
        shutil.copyfile(path + "-wal", copy + "-wal")
        conn = sqlite3.connect(copy, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                               check_same_thread=False, factory=_PrivateCopy)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    conn.folder = folder  # type: ignore[attr-defined]
    conn.execute("PRAGMA query_only = 1")
    return conn


def connect_read_only(path: str) -> sqlite3.Connection:
    """``path`` opened read-only by URI: never written, never holding a lock for long, and
    never leaving a ``-wal``/``-shm`` beside a database its host has closed; an orphan
    ``-wal`` is read through a private copy (module docstring)."""
    path = os.path.abspath(path)
    if _orphan_wal(path):
        try:
            return _open_copy(path)
        except OSError as e:
            raise sqlite3.OperationalError(f"cannot copy {path} and its -wal to read them: {e}") from e
    uri = "file:" + quote(path) + "?mode=ro" + ("&immutable=1" if _closed_wal(path) else "")
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                           check_same_thread=False)
    conn.execute("PRAGMA query_only = 1")
    return conn


def row_path(db: str, key: str) -> str:
    """The path of one chat inside database ``db`` (a cursor key, never a real file)."""
    return f"{db}{ROW_SEP}{key}"


def tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]


def as_bytes(value: Any) -> bytes | None:
    """A stored value (TEXT or BLOB) as bytes, None for NULL and numbers."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return None


def rows_of(conn: sqlite3.Connection, sql: str, args: Iterable[Any] = ()) -> list[tuple]:
    return conn.execute(sql, tuple(args)).fetchall()
