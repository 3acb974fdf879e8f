"""Parsing the files of a harvest: in this process, or in a pool of worker processes.

The harvest decides what to read (cursors, scope) and stores what was read (one
writer, the index's transaction); in between, each file's parse is a pure job
(:class:`Job` -> :class:`Outcome`): the source, the file, where to start and the
session it continues. :func:`parse_job` runs one job with a parse context;
:class:`Pool` runs many in worker processes when that pays: the pending bytes
reach :data:`POOL_MIN_BYTES`, the machine has more than one CPU for this
process beyond the harvest's own (three or more), and processes can be forked (Linux; elsewhere the harvest stays in one
process). Each worker has its own redactor; the counts, remembered values and
skip statistics of every job come back with its outcome and are merged by the
harvest, so the report and the index are the same as a one-process harvest's.

``SKILLOPT_HARVEST_WORKERS`` sets the number of workers (``1`` turns the pool off).
"""

from __future__ import annotations

import errno
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sleep.harvest.reader import ParseContext, ParseStats, open_binary
from sleep.harvest.sources import ParseResult, Source, SourceFile
from sleep.offsets import head_digest
from sleep.redact import Redactor
from sleep.sessions import Session

POOL_MIN_BYTES = 32 << 20
MAX_WORKERS = 8
_ENV = "SKILLOPT_HARVEST_WORKERS"


@dataclass
class Job:
    src: Source
    file: SourceFile
    start: int
    prior: Session | None
    size: int = 0  # bytes to read (for the pool decision and ordering)
    token: Any = None  # the harvest's own bookkeeping for the file (not sent to workers)


@dataclass
class Outcome:
    """What parsing one file gave: ``result`` and the file's stat and head digest, or
    ``skip`` (a file-level skip reason with its message) and whether the file should
    be left for a later harvest."""

    result: ParseResult | None = None
    st: Any = None  # os.stat_result, or a RowStat
    head: str | None = ""
    skip: tuple[str, str, bool] | None = None  # (reason, where, leave the file for later)
    stats: ParseStats | None = None  # set when parsed in a worker
    counts: Counter = field(default_factory=Counter)
    values: set[str] = field(default_factory=set)
    bytes_read: int = 0


@dataclass(frozen=True)
class RowStat:
    """What a row file's cursor compares (sleep.harvest.sources.SourceFile): its database's
    device and inode, the chat's own version as size and mtime."""

    st_dev: int
    st_ino: int
    st_size: int
    st_mtime_ns: int
    st_mode: int

    @property
    def st_mtime(self) -> float:
        return self.st_mtime_ns / 1e9


def file_stat(file: SourceFile) -> os.stat_result | RowStat:
    """``os.stat`` of the file, or for a row file its :class:`RowStat` (raises OSError)."""
    if file.container is None:
        return os.stat(file.path)
    st = os.stat(file.container)
    size, mtime_ns = file.version or (st.st_size, st.st_mtime_ns)
    return RowStat(st.st_dev, st.st_ino, size, mtime_ns, st.st_mode)


def _parse_row(job: Job, ctx: ParseContext) -> Outcome:
    file = job.file
    try:
        st = file_stat(file)
    except OSError as exc:
        return Outcome(skip=(stat_error(file.container or file.path, exc), file.path, False))
    try:
        result = job.src.parse(file, None, 0, job.prior, ctx)
    except Exception as exc:
        return Outcome(skip=("parser_error", f"{file.path}: {type(exc).__name__}: {exc}", True))
    return Outcome(result=result, st=st, head=None)


def parse_job(job: Job, ctx: ParseContext) -> Outcome:
    """Open, fingerprint and parse one file with ``ctx`` (never raises for the file's
    content: a parser bug costs this file only). A row file is parsed from its database."""
    file = job.file
    if file.container is not None:
        return _parse_row(job, ctx)
    try:
        f = open_binary(file.path)
    except OSError as exc:
        return Outcome(skip=(stat_error(file.path, exc), file.path, False))
    with f:
        try:
            st = os.fstat(f.fileno())
            head = head_digest(os.pread(f.fileno(), 1024, 0)) if hasattr(os, "pread") else head_digest(f.read(1024))
            f.seek(job.start)
            result = job.src.parse(file, f, job.start, job.prior, ctx)
        except OSError as exc:
            return Outcome(skip=("read_error", f"{file.path}: {exc.strerror or exc}", True))
        except Exception as exc:
            return Outcome(skip=("parser_error", f"{file.path}: {type(exc).__name__}: {exc}", True))
    return Outcome(result=result, st=st, head=head)


def stat_error(path: str, exc: OSError) -> str:
    """The skip reason for a file that cannot be stat'ed or opened."""
    if exc.errno == errno.ELOOP:
        return "symlink_loop"
    if exc.errno == errno.ENOENT:
        return "dangling_symlink" if os.path.islink(path) else "file_vanished"
    return "unreadable_file"


def workers() -> int:
    """How many worker processes a harvest may use here (1: none)."""
    raw = os.environ.get(_ENV, "").strip()
    if raw:
        try:
            return max(1, min(MAX_WORKERS, int(raw)))
        except ValueError:
            pass
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    # The harvest itself (the writer) keeps one CPU busy; workers pay only with two more.
    # Measured on 2 shared CPUs: a pool of 2 cost 30 % more CPU and gained no wall time.
    n -= 1
    if n < 2:
        return 1
    import multiprocessing  # only here: its import costs ~10 ms that a one-process harvest need not pay

    return n if "fork" in multiprocessing.get_all_start_methods() else 1


# ----- the worker side ------------------------------------------------------------------------

_WORKER_CTX: ParseContext | None = None


def _init_worker(use_detect_secrets: bool, max_line_bytes: int) -> None:
    global _WORKER_CTX
    _WORKER_CTX = ParseContext(redactor=Redactor(use_detect_secrets=use_detect_secrets, collect=True),
                               max_line_bytes=max_line_bytes)


def _run_in_worker(job: Job) -> Outcome:
    ctx = _WORKER_CTX
    assert ctx is not None
    ctx.stats = ParseStats()
    ctx.redactor.counts = Counter()
    ctx.redactor.values = set()
    out = parse_job(job, ctx)
    out.stats, out.counts, out.values = ctx.stats, ctx.redactor.counts, ctx.redactor.values
    out.bytes_read = ctx.stats.bytes_read
    return out


class Pool:
    """Worker processes for :func:`parse_job`, started on first use (forked, so the
    sources and the redactor's compiled rules are inherited, not re-imported)."""

    def __init__(self, n: int, use_detect_secrets: bool, max_line_bytes: int) -> None:
        self.n = n
        self._args = (use_detect_secrets, max_line_bytes)
        self._pool: Any = None

    def map(self, jobs: list[Job]) -> Iterator[tuple[Job, Outcome]]:
        """(job, outcome) for each job, in the order of ``jobs``."""
        if self._pool is None:
            import multiprocessing

            self._pool = multiprocessing.get_context("fork").Pool(self.n, _init_worker, self._args)
        sent = [Job(j.src, j.file, j.start, j.prior, j.size) for j in jobs]  # without the token
        yield from zip(jobs, self._pool.imap(_run_in_worker, sent, chunksize=1), strict=True)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool.join()
            self._pool = None

    def terminate(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None
