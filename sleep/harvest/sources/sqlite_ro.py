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
opened (it applies the WAL); the copy serves every chat of the database until the database
or its WAL changes, and is removed then or when the process ends. A database whose writer holds
a lock in rollback-journal mode answers ``database is locked`` after the timeout; the
source counts the file as unreadable and the next harvest tries again.

One database holds many chats: a source lists them and yields one
*row file* per chat, ``<database path>#<key>`` (:func:`row_path`), whose ``version``
is what the listing knows of the chat's last change (sleep.harvest.sources.SourceFile).
"""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import sys
import tempfile
from typing import Any
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


def _orphan_wal(path: str) -> bool:
    """A ``-wal`` with content but no ``-shm``: opening in place would write the ``-shm``."""
    try:
        return os.path.getsize(path + "-wal") > 0 and not os.path.exists(path + "-shm")
    except OSError:
        return False


# One private copy per database, kept while the database and its WAL are unchanged (a harvest
# opens the database once per chat) and removed when they change or the process ends. A forked
# harvest worker leaves its parent's copies alone and removes its own when it exits (a pool
# worker ends through multiprocessing's exit function, which runs no atexit handler).
_COPIES: dict[str, tuple[tuple[int, ...], str]] = {}
_OWNER = [os.getpid(), False]  # the process the copies belong to; its multiprocessing finalizer set


def _drop_copies() -> None:
    if _OWNER[0] == os.getpid():
        for _key, folder in _COPIES.values():
            shutil.rmtree(folder, ignore_errors=True)
    _COPIES.clear()


atexit.register(_drop_copies)


def _own_copies() -> None:
    if _OWNER[0] != os.getpid():  # a forked child: the inherited copies are its parent's
        _COPIES.clear()
        _OWNER[:] = [os.getpid(), False]
    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is not None and not _OWNER[1]:
        mp_util.Finalize(None, _drop_copies, exitpriority=0)
        _OWNER[1] = True


def _copy_of(path: str) -> str:
    """A private copy of ``path`` and its ``-wal`` (module docstring), made once per version."""
    _own_copies()
    db, wal = os.stat(path), os.stat(path + "-wal")
    key = (db.st_size, db.st_mtime_ns, wal.st_size, wal.st_mtime_ns)
    hit = _COPIES.pop(path, None)
    if hit is not None:
        if hit[0] == key and os.path.exists(os.path.join(hit[1], "db.sqlite")):
            _COPIES[path] = hit
            return os.path.join(hit[1], "db.sqlite")
        shutil.rmtree(hit[1], ignore_errors=True)
    folder = tempfile.mkdtemp(prefix="skillopt-sqlite-")
    try:
        copy = os.path.join(folder, "db.sqlite")
        shutil.copyfile(path, copy)
        shutil.copyfile(path + "-wal", copy + "-wal")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    _COPIES[path] = (key, folder)
    return copy


def connect_read_only(path: str) -> sqlite3.Connection:
    """``path`` opened read-only by URI: never written, never holding a lock for long, and
    never leaving a ``-wal``/``-shm`` beside a database its host has closed; an orphan
    ``-wal`` is read through a private copy (module docstring)."""
    path = os.path.abspath(path)
    if _orphan_wal(path):
        try:
            copy = _copy_of(path)
        except OSError as e:
            raise sqlite3.OperationalError(f"cannot copy {path} and its -wal to read them: {e}") from e
        conn = sqlite3.connect(copy, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA query_only = 1")
        return conn
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
