"""The journal of unfinished proposal operations (index table ``operations``, migration 8).

Staging, adopting and rejecting each write in several steps (git refs and
notes, the person's index, the live skill file). Before the first of them the
operation is recorded here, with what undoing or finishing it needs; its last
step deletes the record in the same transaction that records the outcome (the
proposal row, the decision). Every operation holds its repository's lock
(:func:`repo_lock`) from before the record to after its deletion, so a record
whose lock is free belongs to a process that died. :func:`recover`, which
every command runs first, then undoes it (a staging; an adoption before its
git record exists) or finishes it (a rejection; an adoption whose commit or
skills-repository record exists): after a kill at any point, the person never
sees a branch, note, staged entry or live-file change of an unfinished
operation.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from skillopt_core.timestamps import utc_now
from sleep import paths
from sleep.index import Index
from sleep.lock import FileLock, LockBusy

LOCK_WAIT_S = 60.0


@dataclass
class Operation:
    id: int
    kind: str  # stage | adopt | reject
    proposal_id: str
    repo_dir: str
    lock_path: str
    step: str
    data: dict[str, Any] = field(default_factory=dict)
    saved: bytes | None = None  # adopt --commit: the person's index file as it was


def repo_lock_path(common_dir: str | os.PathLike) -> Path:
    """The lock file of one repository's proposal operations (in the data directory)."""
    key = hashlib.sha1(str(Path(common_dir).resolve()).encode()).hexdigest()[:16]
    return paths.data_dir() / "locks" / f"proposals-{key}.lock"


@contextmanager
def repo_lock(common_dir: str | os.PathLike, wait: float = LOCK_WAIT_S) -> Iterator[Path]:
    """Hold the repository's lock: one staging or decision of a repository at a time."""
    path = repo_lock_path(common_dir)
    lock = FileLock(path, what="proposal operation on this repository")
    lock.acquire(wait=wait)
    try:
        yield path
    finally:
        lock.release()


def begin(index: Index, kind: str, proposal_id: str, repo_dir: str, lock_path: Path, data: dict[str, Any],
          saved: bytes | None = None) -> Operation:
    """Record an operation before its first write (its own transaction)."""
    with index.transaction():
        cur = index.conn.execute(
            "INSERT INTO operations (kind, proposal_id, repo_dir, lock_path, started_at, pid, data, saved)"
            " VALUES (?,?,?,?,?,?,?,?)",
            (kind, proposal_id, repo_dir, str(lock_path), utc_now(), os.getpid(), orjson.dumps(data), saved))
    assert cur.lastrowid is not None  # an INSERT just made the row
    return Operation(cur.lastrowid, kind, proposal_id, repo_dir, str(lock_path), "begun", dict(data), saved)


def update(index: Index, op: Operation, step: str | None = None, **data: Any) -> None:
    """Record a step (and what it learned, e.g. the commit made) before acting on it; inside
    the caller's transaction when one is open, else in its own."""
    op.data.update(data)
    op.step = step or op.step
    if index.conn.in_transaction:
        _write_step(index, op)
    else:
        with index.transaction():
            _write_step(index, op)


def _write_step(index: Index, op: Operation) -> None:
    index.conn.execute("UPDATE operations SET step = ?, data = ? WHERE id = ?",
                       (op.step, orjson.dumps(op.data), op.id))


def finish(index: Index, op: Operation) -> None:
    """Delete the record (call inside the transaction that records the outcome)."""
    index.conn.execute("DELETE FROM operations WHERE id = ?", (op.id,))


def unfinished(index: Index) -> list[Operation]:
    rows = index.conn.execute("SELECT id, kind, proposal_id, repo_dir, lock_path, step, data, saved"
                              " FROM operations ORDER BY id").fetchall()
    return [Operation(r[0], r[1], r[2], r[3], r[4], r[5], orjson.loads(r[6]), r[7]) for r in rows]


def any_unfinished(index_path: Path) -> bool:
    """A cheap look (no migration, read only) whether the index at ``index_path`` has records."""
    if not index_path.is_file():
        return False
    try:
        conn = sqlite3.connect(f"file:{index_path}?mode=ro", uri=True, timeout=5.0)
        try:
            return conn.execute("SELECT 1 FROM operations LIMIT 1").fetchone() is not None
        finally:
            conn.close()
    except sqlite3.Error:  # no such table (an older index), or unreadable: the command itself will say
        return False


def recover(index: Index, *, held: Path | None = None) -> list[str]:
    """Undo or finish every operation whose process died; returns one sentence per operation.

    ``held``: the lock the caller already holds (its operations' owners are
    dead: the caller would be the only live holder). An operation whose lock
    is held by a live process is left alone; one whose recovery fails (its
    repository is locked by git, say) stays recorded for the next command.
    """
    if index.conn.execute("SELECT 1 FROM operations LIMIT 1").fetchone() is None:
        return []
    from sleep.proposals.decide import settle_adopt, settle_reject
    from sleep.proposals.errors import ProposalError
    from sleep.proposals.stage import undo_staging

    handlers = {"stage": undo_staging, "adopt": settle_adopt, "reject": settle_reject}
    said = []
    for op in unfinished(index):
        lock = None
        if held is None or Path(op.lock_path) != held:
            lock = FileLock(Path(op.lock_path), what="proposal operation on this repository")
            try:
                lock.acquire(wait=0)
            except (LockBusy, OSError):
                continue  # alive (or not ours to check); its owner finishes it
        try:
            if not any(o.id == op.id for o in unfinished(index)):
                continue  # finished while we waited
            said.append(handlers.get(op.kind, _unknown)(index, op))
        except (ProposalError, OSError) as exc:
            said.append(f"could not yet clean up the interrupted {op.kind} of proposal {op.proposal_id}: {exc}")
        finally:
            if lock is not None:
                lock.release()
    return said


def _unknown(index: Index, op: Operation) -> str:
    with index.transaction():
        finish(index, op)
    return f"dropped the record of an unknown operation {op.kind!r} (a newer SkillOpt's?)"
